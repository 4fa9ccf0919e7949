package repair

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/statedb"
)

// ErrGatewayHoldsDB refuses an FTS rebuild while a gateway runs.
var ErrGatewayHoldsDB = errors.New("a gateway is running; the rebuild holds state.db's write lock for the whole index and the gateway's writes would wait past their timeouts (stop it first, or pass --force)")

// ftsNote is the journal's word on why an FTS rebuild keeps no before-image.
const ftsNote = "the full-text index is derived data, refilled from messages by the layout's own rebuild; no row of messages or of any other table changed, so there is nothing to restore (undo does nothing)"

// FTSRebuild plans, and when applying performs, `fts rebuild`: every word or trigram index
// out of step with the rows it indexes is refilled, in one write transaction, by its
// layout's own rebuild (statedb.RebuildFTS). Refused where the runtime's own recovery is
// pending (its detached index, fts_stale, is rebuilt by its next open; an interrupted
// optimize-storage is finished by running it again), while a gateway runs (without --force),
// and like every state.db write (the schema, the runtime's guards, the lock).
func FTSRebuild(ctx context.Context, r *Run) (Outcome, error) {
	if err := r.H.NeedDB(); err != nil {
		return Outcome{}, err
	}
	stale, err := ftsPlan(ctx, r.H.DB)
	if err != nil || !r.Apply || len(stale) == 0 {
		return ftsReport(stale, nil), err
	}
	if err := r.checkFTSWrite(ctx); err != nil {
		return Outcome{}, err
	}
	db, err := r.openWriteDB(ctx, ftsWrite)
	if err != nil {
		return Outcome{}, err
	}
	defer db.Close()
	if err := r.checkFTSWrite(ctx); err != nil { // the home as it is under the lock
		return Outcome{}, err
	}
	if stale, err = ftsPlan(ctx, db); err != nil || len(stale) == 0 {
		return ftsReport(stale, nil), err
	}
	return r.applyFTS(ctx, db, stale)
}

// ftsWrite: the rebuild writes FTS tables only, which no guard of the runtime concerns.
var ftsWrite = dbWrite{}

// ftsPlan returns the indexes out of step, refusing where the runtime's own FTS recovery
// is pending.
func ftsPlan(ctx context.Context, db *statedb.DB) ([]statedb.FTSIndex, error) {
	state, err := db.FTS(ctx)
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("fts rebuild: %w", err))
	}
	switch {
	case len(state.Stale) > 0:
		return nil, failure.Mark(failure.Data, fmt.Errorf("fts rebuild: %s is set: the runtime detached the index and its next open rebuilds it with the triggers (start the gateway once); refusing to rebuild it without them", strings.Join(state.Stale, ", ")))
	case state.RebuildInterrupted:
		return nil, failure.Mark(failure.Data, errors.New("fts rebuild: an optimize-storage run stopped part-way (fts_rebuild_high_water or fts_v22_trash_* tables): run `hermes sessions optimize-storage` again with the gateway stopped; refusing to rebuild under it"))
	}
	idx, err := db.FTSIndexes(ctx)
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("fts rebuild: %w", err))
	}
	var out []statedb.FTSIndex
	for _, x := range idx {
		if x.OutOfStep() {
			out = append(out, x)
		}
	}
	return out, nil
}

// checkFTSWrite refuses the write on this home: the schema and generation, the runtime's
// guards, and a running gateway unless --force.
func (r *Run) checkFTSWrite(ctx context.Context) error {
	if err := r.checkDBWrite(ctx, ftsWrite); err != nil {
		return err
	}
	if h := r.H; h.Gateway.Running {
		if !r.Force {
			return failure.Mark(failure.Refused, fmt.Errorf("%w (%s)", ErrGatewayHoldsDB, h.Gateway.Detail))
		}
		h.Opts.Warnf("--force: a gateway is running (%s); its writes wait while the rebuild holds the write lock", h.Gateway.Detail)
	}
	return nil
}

// applyFTS rebuilds the indexes in one transaction, writing the journal's operation record
// inside it before the commit.
func (r *Run) applyFTS(ctx context.Context, db *statedb.DB, stale []statedb.FTSIndex) (Outcome, error) {
	path := r.journalPath()
	targets := make([]string, len(stale))
	for i, x := range stale {
		targets[i] = x.Table
	}
	after, stats, err := db.RebuildFTS(ctx, stale, func([]statedb.RowChange) error {
		j := r.newJournal()
		j.Operation = &journal.Operation{Kind: "fts-rebuild", Targets: targets, Note: ftsNote}
		return journal.Write(path, j)
	})
	if errors.Is(err, statedb.ErrInterrupted) || errors.Is(err, statedb.ErrCommitted) { // state.db changed: the operation record stays
		res := Outcome{Applied: true, Journals: []string{path}}
		return res, &Incomplete{Outcome: res, Err: interruptedWrite("fts rebuild", err)}
	}
	if err != nil {
		_ = os.Remove(path)
		if errors.Is(err, statedb.ErrUnsupportedSchema) {
			return Outcome{}, failure.Mark(failure.Data, err)
		}
		return Outcome{}, failure.Mark(failure.Write, fmt.Errorf("fts rebuild: %w (rolled back; nothing changed)", err))
	}
	res := ftsReport(stale, after)
	res.Applied, res.Journals = true, []string{path}
	res.Batches = []*BatchRecord{newBatchRecord(path, stats)}
	return res, nil
}

// ftsReport lists one change per index: its documents before and after (predicted by the
// plan: the source's rows).
func ftsReport(stale, after []statedb.FTSIndex) Outcome {
	var res Outcome
	done := map[string]statedb.FTSIndex{}
	for _, x := range after {
		done[x.Table] = x
	}
	for _, x := range stale {
		y, ok := done[x.Table]
		if !ok {
			y = statedb.FTSIndex{Table: x.Table, Source: x.Source, External: x.External, Docs: x.Docs + x.Missing - x.Extra}
		}
		res.Changes = append(res.Changes, Change{Store: home.StoreStateDB, Target: "fts/" + x.Table, Op: "rebuild",
			Before: ftsSide(x), After: ftsSide(y)})
	}
	return res
}

// ftsSide is an index's state as a change shows it.
func ftsSide(x statedb.FTSIndex) map[string]any {
	return map[string]any{"docs": x.Docs, "missing": x.Missing, "extra": x.Extra, "source": x.Source}
}
