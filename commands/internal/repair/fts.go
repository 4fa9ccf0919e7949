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
var ErrGatewayHoldsDB = errors.New("a gateway is running; the rebuild holds state.db's write lock in short steps, but until it ends the gateway's searches miss the messages not yet refilled, and on an index whose triggers are not gated (r0418) a message the gateway deletes or edits meanwhile corrupts it (stop it first, or pass --force)")

// ftsNote is the journal's word on why an FTS rebuild keeps no before-image.
const ftsNote = "the full-text index is derived data, refilled from messages by the layout's own rebuild; no row of messages or of any other table changed, so there is nothing to restore (undo does nothing)"

// FTSRebuild plans, and when applying performs, `fts rebuild`: every word or trigram index
// out of step with the rows it indexes is refilled, in bounded steps (statedb.FTSRebuild),
// with the documents of its layout's own rebuild. Refused where the runtime's own recovery is
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

// ftsPlan returns the indexes to rebuild (statedb.FTSToRebuild: a deferred rebuild whose
// markers are set, the runtime's or an interrupted one of sessionctl's, is resumed), refusing
// where the runtime's own FTS recovery is pending.
func ftsPlan(ctx context.Context, db *statedb.DB) ([]statedb.FTSIndex, error) {
	state, err := db.FTS(ctx)
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("fts rebuild: %w", err))
	}
	switch {
	case len(state.Stale) > 0:
		return nil, failure.Mark(failure.Data, fmt.Errorf("fts rebuild: %s is set: the runtime detached the index and its next open rebuilds it with the triggers (start the gateway once); refusing to rebuild it without them", strings.Join(state.Stale, ", ")))
	case state.Trash:
		return nil, failure.Mark(failure.Data, errors.New("fts rebuild: an optimize-storage run stopped part-way (fts_v22_trash_* tables): run `hermes sessions optimize-storage` again with the gateway stopped; refusing to rebuild under it"))
	}
	out, err := db.FTSToRebuild(ctx)
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("fts rebuild: %w", err))
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
		h.Opts.Warnf("--force: a gateway is running (%s); its searches miss the messages not yet refilled until the rebuild ends", h.Gateway.Detail)
	}
	return nil
}

// applyFTS rebuilds the indexes in bounded steps (statedb.FTSRebuild), each its own write
// transaction sized by the run's sizer by the ids it indexes (the emptying of an external
// index is a step of its own), a waiting writer let in between: the journal's operation record
// is written inside the first, before its commit. A run stopped after the first commit is
// incomplete: the next `fts rebuild --apply` finishes it (it resumes a gated rebuild from its
// progress and starts an ungated one again).
func (r *Run) applyFTS(ctx context.Context, db *statedb.DB, stale []statedb.FTSIndex) (Outcome, error) {
	plan, err := db.PlanFTSRebuild(ctx, stale)
	if err != nil {
		if errors.Is(err, statedb.ErrUnsupportedSchema) {
			return Outcome{}, failure.Mark(failure.Data, err)
		}
		return Outcome{}, failure.Mark(failure.Write, fmt.Errorf("fts rebuild: %w (nothing changed)", err))
	}
	path := r.journalPath()
	targets := make([]string, len(plan.Indexes))
	for i, x := range plan.Indexes {
		targets[i] = x.Table
	}
	hook := func([]statedb.RowChange) error {
		j := r.newJournal()
		j.Operation = &journal.Operation{Kind: "fts-rebuild", Targets: targets, Note: ftsNote}
		return journal.Write(path, j)
	}
	size, total := r.sizer(nil), plan.Remaining()
	var done dbBatches
	for !plan.Done() {
		r.H.Opts.Report(r.H.Opts.Command, total-plan.Remaining(), total)
		err := ctx.Err() // a safe point: between two committed steps
		if err == nil && len(done) > 0 {
			if err = yield(ctx, done[len(done)-1].held); err == nil {
				err = guardRefusal(statedb.ProbeRepairLock(r.H.Opts.Home.StateDB()))
			}
		}
		var units int64
		if err == nil {
			if !plan.NeedsStart() {
				units = size.take(plan.Remaining())
			}
			var stats statedb.TxStats
			if stats, err = db.FTSRebuildStep(ctx, plan, units, hook); err == nil {
				rec := newBatchRecord(path, stats)
				rec.Rows = int(units)
				done, hook = append(done, rec), nil
				if units > 0 {
					size.measured(stats.Held)
				}
			}
		}
		if err != nil && len(done) == 0 && !errors.Is(err, statedb.ErrInterrupted) && !errors.Is(err, statedb.ErrCommitted) {
			_ = os.Remove(path)
			return Outcome{}, failure.Mark(failure.Write, fmt.Errorf("fts rebuild: %w (rolled back; nothing changed)", err))
		}
		if err != nil { // state.db changed: the operation record stays
			res := ftsReport(plan.Indexes, nil)
			res.Applied, res.Journals, res.Batches = true, []string{path}, done
			return res, &Incomplete{Outcome: res, Err: interruptedWrite("fts rebuild (`fts rebuild --apply` finishes it)", err)}
		}
	}
	r.H.Opts.Report(r.H.Opts.Command, total, total)
	// Committed: the indexes are measured even when the run is being stopped (a signal), and
	// a failure to measure them is not a rollback.
	after, err := db.FTSIndexes(context.WithoutCancel(ctx))
	if err != nil {
		res := Outcome{Applied: true, Journals: []string{path}, Batches: done}
		return res, &Incomplete{Outcome: res, Err: interruptedWrite("fts rebuild", fmt.Errorf("committed, then reading the indexes failed: %w", err))}
	}
	res := ftsReport(plan.Indexes, after)
	res.Applied, res.Journals, res.Batches = true, []string{path}, done
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
