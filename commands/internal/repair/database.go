package repair

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/statedb"
)

// DBRepairAvailable refuses a state.db repair on a home without state.db or written by a
// generation that did not have the runtime method (r0418: both arrived in May 2026).
func DBRepairAvailable(h *home.Home, command string) error {
	if err := h.NeedDB(); err != nil {
		return err
	}
	if !h.Rules.DBRepairs {
		return failure.Mark(failure.Data, fmt.Errorf("%s: generation %s (schema v%d) predates the runtime's own repair; its rules do not apply here", command, h.Gen, h.Schema.Version))
	}
	return nil
}

// Finalize plans, and when applying performs, finalize-orphans (the runtime's
// finalize_orphaned_compression_sessions). When applying, the candidates are read before the
// write lock is taken and each batch ends only those that still match while it holds the
// lock, so what is reported is exactly what changed.
func Finalize(ctx context.Context, r *Run, minAge float64) (Outcome, error) {
	if r.Apply {
		return applyFinalize(ctx, r, minAge)
	}
	ids, locked, err := finalizeCandidates(ctx, r.H.DB, r.H.Opts.Clock.Unix, minAge)
	if err != nil {
		return Outcome{}, err
	}
	res := finalizeReport(ids, locked, r.H.Opts.Clock.Unix)
	if len(ids) == 0 {
		return r.planLatch(ctx, res, statedb.LatchFinalizeOrphans)
	}
	return res, nil
}

// finalizeCandidates reads the orphans to end and the live-locked ones to leave.
func finalizeCandidates(ctx context.Context, db *statedb.DB, now, minAge float64) ([]string, []statedb.Orphan, error) {
	cands, err := db.FinalizeCandidates(ctx, now, minAge)
	if err != nil {
		return nil, nil, failure.Mark(failure.Data, fmt.Errorf("finalize-orphans: %w", err))
	}
	var ids []string
	var locked []statedb.Orphan
	for _, o := range cands {
		if o.LiveLock != nil || o.LiveLease != nil {
			locked = append(locked, o)
		} else {
			ids = append(ids, o.Session.ID)
		}
	}
	return ids, locked, nil
}

// applyFinalize ends the orphans in transactions sized by their cost (sizer), each with its
// own journal. The candidates are read first, without the write lock; each batch checks
// its share of them again under the lock (statedb.Batch), so the lock is not held for a
// scan of the table.
func applyFinalize(ctx context.Context, r *Run, minAge float64) (Outcome, error) {
	if err := r.checkDBWrite(ctx, finalizeWrite); err != nil {
		return Outcome{}, err
	}
	now := r.H.Opts.Clock.Unix
	ids, locked, err := finalizeCandidates(ctx, r.H.DB, now, minAge)
	if err != nil {
		return Outcome{}, err
	}
	res := finalizeReport(nil, locked, now)
	if len(ids) == 0 {
		return r.latchOnly(ctx, res, finalizeWrite, statedb.LatchFinalizeOrphans)
	}
	return r.batches(ctx, ids, r.sizer(nil), res, finalizeWrite, func(db *statedb.DB, batch statedb.Batch) (batchStep, error) {
		var fin statedb.FinalizeResult
		tx, err := r.applyDB(db, func(hook statedb.CommitHook) (bool, statedb.TxStats, error) {
			var err error
			fin, err = db.FinalizeOrphans(ctx, now, minAge, batch, hook)
			return len(fin.Changes) > 0, fin.Stats, err
		}, nil)
		return batchStep{tx, finalizeReport(changedSessionIDs(fin.Changes, false), fin.Locked, now), fin.Remaining}, err
	})
}

// latchChange is the change of a repair that writes its latch alone; before is the value the
// row holds (nil: no row).
func latchChange(key string, before any) Change {
	return Change{Store: home.StoreStateDB, Target: "state_meta/" + key, Op: "set", Before: before, After: "1"}
}

// latchBefore is state_meta[key] as a change shows it: nil without a row.
func latchBefore(ctx context.Context, db *statedb.DB, key string) (any, error) {
	v, ok, err := db.Meta(ctx, key)
	if err != nil || !ok {
		return nil, err
	}
	return v, nil
}

// planLatch adds to a plan that changes no row the latch the runtime's CLI start-up sets
// after running the repair anyway (cli.py at 481156139: the one-time prune and finalize set
// their latch whatever they changed), when it is not set yet (docs/decisions.md, issue 29
// item 7). A plan that changes rows sets the latch in the same transaction, as before.
func (r *Run) planLatch(ctx context.Context, res Outcome, key string) (Outcome, error) {
	set, err := r.H.DB.LatchSet(ctx, key)
	if err != nil {
		return Outcome{}, failure.Mark(failure.Data, err)
	}
	if set || !r.H.DB.Schema().HasStateMeta {
		return res, nil
	}
	before, err := latchBefore(ctx, r.H.DB, key)
	if err != nil {
		return Outcome{}, failure.Mark(failure.Data, err)
	}
	res.Changes = append(res.Changes, latchChange(key, before))
	return res, nil
}

// latchOnly writes the latch of a repair that found nothing else to change, when it is not
// set yet (planLatch): one transaction with its journal, so that undo takes it back.
func (r *Run) latchOnly(ctx context.Context, res Outcome, w dbWrite, key string) (Outcome, error) {
	planned, err := r.planLatch(ctx, res, key)
	if err != nil || len(planned.Changes) == len(res.Changes) {
		return planned, err
	}
	db, err := r.openWriteDB(ctx, w)
	if err != nil {
		return Outcome{}, err
	}
	defer r.background(func() { _ = db.Close() })
	tx, err := r.applyDB(db, func(hook statedb.CommitHook) (bool, statedb.TxStats, error) {
		change, stats, err := db.SetLatch(ctx, key, hook)
		return change.Table != "", stats, err
	}, nil)
	var done dbBatches
	done.add(tx).record(&res, 1) // one transaction: no batches finding
	if err != nil {
		return res, stopped(res, err)
	}
	if tx != nil {
		res.Changes = append(res.Changes, planned.Changes[len(planned.Changes)-1])
	}
	return res, nil
}

// batchStep is what one state.db transaction of a repair did.
type batchStep struct {
	tx        *BatchRecord // nil when it wrote nothing
	report    Outcome      // its changes and findings
	remaining []string     // the candidates later batches check
}

// batches takes the lock, opens state.db for writing and runs one transaction per batch of
// the candidate ids until none remain, adding each batch's report to res. Each batch is sized
// by what the batches before it cost (sizer), and after each one the lock is left free long
// enough for a waiting writer to take it (yield). Between batches is a safe point: a
// cancelled context stops the run there, and so does the runtime's repair lock taken
// meanwhile (probed again before every later batch). A batch that fails rolls back and
// reports nothing; the batches before it stay applied (Incomplete).
func (r *Run) batches(ctx context.Context, ids []string, size *sizer, res Outcome, w dbWrite, step func(*statedb.DB, statedb.Batch) (batchStep, error)) (Outcome, error) {
	db, err := r.openWriteDB(ctx, w)
	if err != nil {
		return Outcome{}, err
	}
	// The write connection closes (its checkpoint included) in the background, while the run
	// reports and the last batch's files move into their stash: Run.Close waits for both
	// before it lets the lock go.
	defer r.background(func() { _ = db.Close() })
	var done dbBatches
	for batch := (statedb.Batch{Among: ids}); len(batch.Among) > 0; {
		r.H.Opts.Report(r.H.Opts.Command, int64(len(ids)-len(batch.Among)), int64(len(ids)))
		err := ctx.Err() // a safe point: between two committed batches
		if err == nil && len(done) > 0 {
			if err = yield(ctx, done[len(done)-1].held); err == nil {
				err = guardRefusal(statedb.ProbeRepairLock(r.H.Opts.Home.StateDB()))
			}
		}
		var st batchStep
		if err == nil {
			batch.MaxRows = size.size(batch.Among)
			st, err = step(db, batch)
			done = done.add(st.tx)
			if st.tx != nil {
				st.tx.Rows = batch.MaxRows
				size.measured(st.tx.held)
			}
		}
		if err != nil {
			done.record(&res, size.largest)
			return res, stopped(res, err)
		}
		res.add(st.report)
		batch.Among = st.remaining
	}
	done.record(&res, size.largest)
	r.H.Opts.Report(r.H.Opts.Command, int64(len(ids)), int64(len(ids)))
	return res, nil
}

// leasedFinding reports a session skipped because its lineage holds a live turn lease.
func leasedFinding(id check.ID, session string, l *statedb.TurnLease) check.Finding {
	return check.Finding{Check: id, Severity: check.Info, Subject: session,
		Message: fmt.Sprintf("its conversation %s holds a live turn lease (%s, expires_at %s): a turn is running on it right now; skipped",
			l.ConversationID, l.Holder, l.ExpiresText())}
}

// finalizeReport lists the sessions ended (or to end) and the live-locked ones skipped.
func finalizeReport(ids []string, locked []statedb.Orphan, now float64) Outcome {
	var res Outcome
	for _, o := range locked {
		if o.LiveLease != nil {
			res.Findings = append(res.Findings, leasedFinding(check.OrphanLeased, o.Session.ID, o.LiveLease))
			continue
		}
		res.Findings = append(res.Findings, check.Finding{Check: check.OrphanLocked, Severity: check.Info, Subject: o.Session.ID,
			Message: "holds a live compression lock (" + o.LiveLock.Holder + "): skipped"})
	}
	for _, id := range ids {
		res.Changes = append(res.Changes,
			Change{Store: home.StoreStateDB, Target: "sessions/" + id + "/ended_at", Op: "set", Before: nil, After: now},
			Change{Store: home.StoreStateDB, Target: "sessions/" + id + "/end_reason", Op: "set", Before: nil, After: statedb.EndReasonOrphanedCompression})
	}
	return res
}

// changedSessionIDs returns the ids of the sessions rows among changes (only the deleted
// ones with deletedOnly), in order.
func changedSessionIDs(changes []statedb.RowChange, deletedOnly bool) []string {
	var ids []string
	for _, c := range changes {
		if c.Table == "sessions" && (!deletedOnly || c.After == nil) {
			ids = append(ids, c.Key["id"].Text)
		}
	}
	return ids
}

// Prune plans, and when applying performs, prune-ghosts (the runtime's
// prune_empty_ghost_sessions). When applying, the ghosts are read before the write lock is
// taken and each batch deletes only those that still match while it holds the lock; their
// transcript files are recorded in the journal there (before the commit) and moved into the
// journal's stash after it.
func Prune(ctx context.Context, r *Run, minAge float64) (Outcome, error) {
	if r.Apply {
		return applyPrune(ctx, r, minAge)
	}
	listing := listAsync(r.H.Opts.Home.SessionsDir())
	ghosts, err := r.H.DB.GhostCandidates(ctx, r.H.Opts.Clock.Unix, minAge)
	listed := <-listing
	if err != nil {
		return Outcome{}, failure.Mark(failure.Data, fmt.Errorf("prune-ghosts: %w", err))
	}
	if listed.err != nil {
		return Outcome{}, failure.Mark(failure.Data, listed.err)
	}
	var deletable []statedb.Session
	for _, g := range ghosts {
		if !g.Kept && g.Leased == nil {
			deletable = append(deletable, g.Session)
		}
	}
	transcripts := listed.dir.Files(sessionIDs(deletable))
	globs, err := globFindings(r.H.Opts.Home.SessionsDir(), sessionIDs(deletable), transcripts)
	if err != nil {
		return Outcome{}, failure.Mark(failure.Data, err)
	}
	res := pruneReport(ghostIDs(ghosts, true), childrenOf(ghosts), deletable, transcripts)
	res.Findings = append(res.Findings, leasedGhosts(ghosts)...)
	res.Findings = append(res.Findings, pickFindings(globs, sessionIDs(deletable))...)
	if len(deletable) == 0 {
		return r.planLatch(ctx, res, statedb.LatchPruneGhosts)
	}
	return res, nil
}

// globFindings words ghost.glob-id for each of ids (ghosts to prune, with their own files)
// that the runtime's request-dump glob reads as a pattern (statedb.GlobID): what that pattern
// matches of other files, and which of the ghost's own dumps it misses. sessionctl keeps to
// the literal match, which never reaches another session's files (docs/decisions.md).
func globFindings(dir string, ids []string, own map[string][]string) (map[string]check.Finding, error) {
	out := map[string]check.Finding{}
	for _, id := range ids {
		if !statedb.GlobID(id) || statedb.UnsafeFileID(id) != "" {
			continue
		}
		runtime, err := statedb.RuntimeDumpFiles(dir, id)
		if err != nil {
			return nil, err
		}
		mine := map[string]bool{}
		for _, f := range own[id] {
			if strings.HasPrefix(filepath.Base(f), "request_dump_") {
				mine[filepath.Base(f)] = true
			}
		}
		var extra, missed []string
		matched := map[string]bool{}
		for _, f := range runtime {
			name := filepath.Base(f)
			matched[name] = true
			if !mine[name] {
				extra = append(extra, name)
			}
		}
		for f := range mine {
			if !matched[f] {
				missed = append(missed, f)
			}
		}
		sort.Strings(missed)
		msg := fmt.Sprintf("id %q holds glob characters: the runtime removes request_dump_<id>_*.json with a glob built from the id, which here also matches %s and misses %s; sessionctl removes only this ghost's own files, matching the id literally",
			id, listOrNone(extra, "no other file"), listOrNone(missed, "none of its own"))
		if statedb.GlobRaises(id) {
			msg += "; under Python 3.11 or 3.12 the runtime's glob raises on '**' once the rows are deleted, and removes no dump of this ghost or of the ghosts after it"
		}
		out[id] = check.Finding{Check: check.GhostGlobID, Severity: check.Warn, Subject: id, Message: msg}
	}
	return out, nil
}

// listOrNone joins names, or says none.
func listOrNone(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return strings.Join(names, ", ")
}

// pickFindings returns the findings of ids, in their order.
func pickFindings(byID map[string]check.Finding, ids []string) []check.Finding {
	var out []check.Finding
	for _, id := range ids {
		if f, ok := byID[id]; ok {
			out = append(out, f)
		}
	}
	return out
}

// childrenOf maps each kept ghost to the ids of its children.
func childrenOf(ghosts []statedb.Ghost) map[string][]string {
	children := map[string][]string{}
	for _, g := range ghosts {
		if g.Kept {
			children[g.Session.ID] = g.ChildIDs
		}
	}
	return children
}

// ghostIDs returns the ids of the kept ghosts (kept) or of the others, in order; ghosts
// whose lineage holds a live turn lease are in neither.
func ghostIDs(ghosts []statedb.Ghost, kept bool) []string {
	var ids []string
	for _, g := range ghosts {
		if g.Kept == kept && g.Leased == nil {
			ids = append(ids, g.Session.ID)
		}
	}
	return ids
}

// applyPrune deletes the ghosts in transactions sized by their cost (sizer), each with its own
// journal. The candidates are read first, without the write lock; each batch checks its
// share of them again under the lock (statedb.Batch), so the lock is not held for a scan of
// the table. The sessions directory is listed while that scan runs, and its files are
// checked for a move (movable) while the first batch runs: its journal waits for them.
func applyPrune(ctx context.Context, r *Run, minAge float64) (Outcome, error) {
	if err := r.checkDBWrite(ctx, pruneWrite); err != nil {
		return Outcome{}, err
	}
	now := r.H.Opts.Clock.Unix
	dir := r.H.Opts.Home.SessionsDir()
	listing := listAsync(dir)
	ghosts, err := r.H.DB.GhostCandidateIDs(ctx, now, minAge)
	listed := <-listing
	if err != nil {
		return Outcome{}, failure.Mark(failure.Data, fmt.Errorf("prune-ghosts: %w", err))
	}
	res := pruneReport(ghostIDs(ghosts, true), childrenOf(ghosts), nil, nil)
	res.Findings = append(res.Findings, leasedGhosts(ghosts)...)
	deletable := ghostIDs(ghosts, false)
	if len(deletable) == 0 {
		return r.latchOnly(ctx, res, pruneWrite, statedb.LatchPruneGhosts)
	}
	if listed.err != nil {
		return Outcome{}, failure.Mark(failure.Data, listed.err)
	}
	files := listed.dir.Files(deletable)
	globs, err := globFindings(dir, deletable, files)
	if err != nil {
		return Outcome{}, failure.Mark(failure.Data, err)
	}
	moves := r.movableAsync(files)
	first := true
	return r.batches(ctx, deletable, r.sizer(nil), res, pruneWrite, func(db *statedb.DB, batch statedb.Batch) (batchStep, error) {
		var pr statedb.PruneResult
		var transcripts map[string][]string
		tx, err := r.applyDB(db, func(hook statedb.CommitHook) (bool, statedb.TxStats, error) {
			var err error
			pr, err = db.PruneGhosts(ctx, now, minAge, batch, hook)
			return len(pr.Deleted) > 0, pr.Stats, err
		}, func(changes []statedb.RowChange) ([]string, error) {
			transcripts = pick(moves.wait().files, changedSessionIDs(changes, true))
			return flatten(transcripts), nil
		})
		report := pruneReport(pr.Kept, pr.Children, deletedSessions(pr.Changes), transcripts)
		if first { // the files kept in place, ahead of the first batch's findings (as before the batches ran)
			report.Findings, first = append(moves.wait().kept, report.Findings...), false
		}
		report.Findings = append(report.Findings, leasedGhosts(pr.Leased)...)
		report.Changes = append(report.Changes, deletedPrompts(pr.Changes)...)
		report.Findings = append(report.Findings, pickFindings(globs, changedSessionIDs(pr.Changes, true))...)
		return batchStep{tx, report, pr.Remaining}, err
	})
}

// listing is a sessions directory read in the background.
type listing struct {
	dir statedb.TranscriptDir
	err error
}

// listAsync lists dir in its own goroutine; the caller receives the one listing.
func listAsync(dir string) <-chan listing {
	out := make(chan listing, 1)
	go func() {
		d, err := statedb.ListTranscriptDir(dir)
		out <- listing{d, err}
	}()
	return out
}

// pendingMoves is the result of movable, worked out in the background.
type pendingMoves struct {
	done  chan struct{}
	files map[string][]string
	kept  []check.Finding
}

// wait returns the moves once they are known.
func (m *pendingMoves) wait() *pendingMoves {
	<-m.done
	return m
}

// movableAsync runs movable(files) in the background (Run.Close waits for it too), on a copy
// of the home's options: taking the lock replaces r.H meanwhile.
func (r *Run) movableAsync(files map[string][]string) *pendingMoves {
	m := &pendingMoves{done: make(chan struct{})}
	o := r.H.Opts
	r.background(func() {
		defer close(m.done)
		m.files, m.kept = movableIn(&o, files)
	})
	return m
}

// deletedSessions returns the sessions whose rows changes delete.
func deletedSessions(changes []statedb.RowChange) []statedb.Session {
	var out []statedb.Session
	for _, c := range changes {
		if c.Table == "sessions" && c.After == nil && c.Before != nil {
			out = append(out, statedb.SessionFromImage(c.Before))
		}
	}
	return out
}

// leasedGhosts reports the ghosts skipped because their lineage holds a live turn lease.
func leasedGhosts(ghosts []statedb.Ghost) []check.Finding {
	var out []check.Finding
	for _, g := range ghosts {
		if g.Leased != nil {
			out = append(out, leasedFinding(check.GhostLeased, g.Session.ID, g.Leased))
		}
	}
	return out
}

// deletedPrompts lists the system_prompts rows changes delete (r0817's ghost prune deletes
// every unreferenced one).
func deletedPrompts(changes []statedb.RowChange) []Change {
	var out []Change
	for _, c := range changes {
		if c.Table == "system_prompts" && c.After == nil && c.Before != nil {
			out = append(out, Change{Store: home.StoreStateDB, Target: "system_prompts/" + c.Key["hash"].Text, Op: "delete"})
		}
	}
	return out
}

// pruneReport lists the ghosts kept because they have children, and those deleted (or to
// delete) with their transcript files.
func pruneReport(kept []string, children map[string][]string, deleted []statedb.Session, transcripts map[string][]string) Outcome {
	var res Outcome
	for _, id := range kept {
		res.Findings = append(res.Findings, check.Finding{Check: check.GhostHasChildren, Severity: check.Warn, Subject: id,
			Message: fmt.Sprintf("has %d child session(s), not all of them ghosts pruned with it: kept (the runtime's DELETE would fail on the foreign key)", len(children[id]))})
	}
	for _, s := range deleted {
		if why := statedb.UnsafeFileID(s.ID); why != "" {
			res.Findings = append(res.Findings, check.Finding{Check: check.GhostUnsafeID, Severity: check.Warn, Subject: s.ID,
				Message: fmt.Sprintf("id %q is not a safe file name (%s): the row is deleted as the runtime does; no transcript file is touched", s.ID, why)})
		}
		res.Changes = append(res.Changes, Change{Store: home.StoreStateDB, Target: "sessions/" + s.ID, Op: "delete", Before: home.NewSessionRow(s)})
		for _, f := range transcripts[s.ID] {
			res.Changes = append(res.Changes, Change{Store: "sessions dir", Target: filepath.Base(f), Op: "remove file"})
		}
	}
	return res
}

func sessionIDs(sessions []statedb.Session) []string {
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	return ids
}

// pick returns the files of the ids.
func pick(files map[string][]string, ids []string) map[string][]string {
	out := make(map[string][]string, len(ids))
	for _, id := range ids {
		if f, ok := files[id]; ok {
			out[id] = f
		}
	}
	return out
}

// flatten returns every path of transcripts, by session id then file name.
func flatten(transcripts map[string][]string) []string {
	ids := make([]string, 0, len(transcripts))
	for id := range transcripts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []string
	for _, id := range ids {
		out = append(out, transcripts[id]...)
	}
	return out
}

// BatchRecord is one state.db transaction of a repair that wrote something (data.batches).
type BatchRecord struct {
	Journal string `json:"journal"`
	// Rows are the candidates the transaction took (sessions for prune and archive), sized by
	// what the transactions before it cost.
	Rows       int           `json:"rows"`
	Attempts   int           `json:"attempts"`
	WaitedMS   float64       `json:"waited_ms"`
	LockHeldMS float64       `json:"lock_held_ms"`
	held       time.Duration // LockHeldMS, unrounded
}

func newBatchRecord(journal string, s statedb.TxStats) *BatchRecord {
	return &BatchRecord{Journal: journal, Attempts: s.Attempts, WaitedMS: milliseconds(s.Waited), LockHeldMS: milliseconds(s.Held), held: s.Held}
}

// milliseconds returns d in milliseconds, to the microsecond.
func milliseconds(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// dbBatches are the transactions of one state.db repair that wrote something.
type dbBatches []*BatchRecord

// add appends a batch's transaction, nil when it wrote nothing.
func (b dbBatches) add(tx *BatchRecord) dbBatches {
	if tx == nil {
		return b
	}
	return append(b, tx)
}

func (b dbBatches) journals() []string {
	out := make([]string, len(b))
	for i, t := range b {
		out[i] = t.Journal
	}
	return out
}

// record fills res with what the batches did: applied, the journals (a finding lists them
// all when there are several) and the batch records.
func (b dbBatches) record(res *Outcome, maxRows int) {
	if len(b) == 0 {
		return
	}
	res.Applied, res.Journals, res.Batches = true, b.journals(), b
	if len(b) > 1 {
		res.Findings = append(res.Findings, check.Finding{Check: check.RepairBatches, Severity: check.Info,
			Message: fmt.Sprintf("applied in %d transactions of at most %d rows, each with its journal (undo them newest first): %s",
				len(b), maxRows, strings.Join(b.journals(), ", "))})
	}
}

// openWriteDB takes the lock and opens state.db for the writes of one repair run (each batch
// checks its rows again under the database's write lock, so candidates read before are safe).
// The refusals are checked again under the lock, on the home opened again.
func (r *Run) openWriteDB(ctx context.Context, w dbWrite) (*statedb.DB, error) {
	if _, err := r.lock(ctx); err != nil {
		return nil, err
	}
	if err := r.checkDBWrite(ctx, w); err != nil {
		return nil, err
	}
	db, err := statedb.OpenWrite(ctx, r.H.Opts.Home.StateDB())
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("open state.db for writing: %w", err))
	}
	return db, nil
}

// background runs fn in its own goroutine; Run.Close waits for it.
func (r *Run) background(fn func()) {
	r.moves.Add(1)
	go func() {
		defer r.moves.Done()
		fn()
	}()
}

// interruptedWrite is the error of a batch whose commit failed part-way and left state.db
// holding a hot journal (statedb.ErrInterrupted): its bytes changed, so the run is not "nothing
// changed"; the batch's journal is kept (its rows are at their before-images once SQLite rolls
// the transaction back, and undo then leaves them alone) and the files it names stay in place.
func interruptedWrite(command string, err error) error {
	return failure.Mark(failure.Write, fmt.Errorf("%s: %w", command, err))
}

// applyDB runs one transaction of a state.db repair on db. Inside the transaction, before
// the commit, the journal is written with every row image and the files filesFor names; if
// the transaction fails the journal is removed again. After the commit those files are moved
// into the journal's stash (a rename: the runtime deletes them, sessionctl keeps them for
// undo without copying) in the background, while the next batch runs or the run reports.
// Moving them before the commit, while it runs, made the commit's fsync wait for the renames'
// metadata (docs/performance.md). run reports whether it changed anything; a transaction that
// finds nothing to change writes nothing, journal included (a journal left by an attempt that
// was retried is removed). applyDB returns the transaction's record, nil when nothing was
// written.
func (r *Run) applyDB(db *statedb.DB, run func(statedb.CommitHook) (bool, statedb.TxStats, error), filesFor func([]statedb.RowChange) ([]string, error)) (*BatchRecord, error) {
	path := r.journalPath()
	var files []journal.FileImage
	changed, stats, err := run(func(changes []statedb.RowChange) error {
		j := r.newJournal()
		j.Rows = changes
		if filesFor != nil {
			paths, err := filesFor(changes)
			if err != nil {
				return err
			}
			files = journal.StashImages(paths, journal.StashDir(path))
			j.Files = files
		}
		return journal.Write(path, j)
	})
	if interrupted := errors.Is(err, statedb.ErrInterrupted); interrupted && changed {
		return newBatchRecord(path, stats), interruptedWrite(r.H.Opts.Command, err)
	}
	if err != nil || !changed {
		_ = os.Remove(path)
	}
	if errors.Is(err, statedb.ErrUnsupportedSchema) {
		return nil, failure.Mark(failure.Data, err)
	}
	if err != nil {
		return nil, failure.Mark(failure.Write, fmt.Errorf("%s: %w (rolled back; nothing changed)", r.H.Opts.Command, err))
	}
	if !changed {
		return nil, nil
	}
	r.stash(files)
	return newBatchRecord(path, stats), nil
}

// movable returns files, the transcripts of the sessions a prune deletes, when the sessions
// directory can be written, for the batches to move into their journals' stash after each
// commit. Otherwise it returns none, with a repair.transcripts-kept finding: the rows still go
// and the files stay, and they are not reported as removed (a move that fails after a commit
// can only warn, once the report is written). A file that is not a regular file, or whose
// attributes stop its move (immutable, append-only), is left out the same way, with a
// finding of its own.
func (r *Run) movable(files map[string][]string) (map[string][]string, []check.Finding) {
	return movableIn(&r.H.Opts, files)
}

// movableIn is movable for the home of o.
func movableIn(o *home.Options, files map[string][]string) (map[string][]string, []check.Finding) {
	n := 0
	for _, fs := range files {
		n += len(fs)
	}
	if n == 0 {
		return files, nil
	}
	err := statedb.CheckDirWritable(o.Home.SessionsDir())
	if err != nil {
		return nil, []check.Finding{{Check: check.TranscriptsKept, Severity: check.Warn, Subject: "sessions",
			Message: fmt.Sprintf("%d transcript file(s) of the sessions deleted stay in the sessions directory (%v): the runtime would have deleted them", n, err)}}
	}
	var kept []check.Finding
	out := make(map[string][]string, len(files))
	for id, paths := range files {
		var pinned []string
		out[id], pinned = statedb.Unmovable(paths)
		for _, p := range pinned {
			kept = append(kept, check.Finding{Check: check.TranscriptsKept, Severity: check.Warn, Subject: o.Rel(p),
				Message: "this transcript of a session deleted stays in the sessions directory (it is not a regular file, or it is immutable or append-only): the runtime would have deleted it; remove it by hand if it is no longer wanted"})
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Subject < kept[j].Subject })
	return out, kept
}

// stash moves a committed batch's files into its journal's stash in the background (each
// batch has its own stash directory): while the next batch runs, or the run reports. Run.Close
// waits for every move, and passes their warnings on, before it lets the lock go.
func (r *Run) stash(files []journal.FileImage) {
	if len(files) == 0 {
		return
	}
	r.background(func() { journal.Stash(files, r.moveWarnings.add) })
}
