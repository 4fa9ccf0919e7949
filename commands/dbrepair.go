package commands

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

func finalizeOrphansCommand() *cli.Command {
	return &cli.Command{
		Name:      "finalize-orphans",
		Usage:     "end orphaned compression continuations (the runtime's finalize_orphaned_compression_sessions)",
		ArgsUsage: " ",
		Flags:     repairFlags(&cli.StringFlag{Name: "min-age", Value: "7d", Usage: "only continuations started more than `D` ago"}),
		Action:    runFinalizeOrphans,
	}
}

func pruneGhostsCommand() *cli.Command {
	return &cli.Command{
		Name:      "prune-ghosts",
		Usage:     "delete empty, untitled, ended TUI sessions and their transcript files (the runtime's prune_empty_ghost_sessions)",
		ArgsUsage: " ",
		Flags:     repairFlags(&cli.StringFlag{Name: "min-age", Value: "24h", Usage: "only ghosts started more than `D` ago"}),
		Action:    runPruneGhosts,
	}
}

// dbRepairAvailable refuses a state.db repair on a home without state.db or written by a
// generation that did not have the runtime method (r0418: both arrived in May 2026).
func dbRepairAvailable(v *homeView, command string) error {
	if v.db == nil {
		return withCode(ExitData, fmt.Errorf("no state.db at %s", v.opts.home.StateDB()))
	}
	if v.gen == sessionsjson.GenR0418 {
		return withCode(ExitData, fmt.Errorf("%s: generation %s (schema v%d) predates the runtime's own repair; its rules do not apply here", command, v.gen, v.schema.Version))
	}
	return nil
}

// startDBRepair is startRepair plus the checks every state.db repair shares.
func startDBRepair(c *cli.Context, command string) (*repairRun, float64, error) {
	if c.NArg() > 0 {
		return nil, 0, usagef("%s takes no arguments", command)
	}
	minAge, err := parseAge(c.String("min-age"))
	if err != nil {
		return nil, 0, usagef("--min-age: %v", err)
	}
	r, err := startRepairWith(c, command, loadDBView)
	if err != nil {
		return nil, 0, err
	}
	if err := dbRepairAvailable(r.v, command); err != nil {
		r.finish()
		return nil, 0, err
	}
	return r, minAge, nil
}

func runFinalizeOrphans(c *cli.Context) error {
	r, minAge, err := startDBRepair(c, "finalize-orphans")
	if err != nil {
		return err
	}
	defer r.finish()
	res, err := executeFinalize(c.Context, r, minAge)
	if err != nil {
		return err
	}
	return r.report(res)
}

// executeFinalize plans, and with --apply performs, finalize-orphans. Under --apply the
// candidates are read before the write lock is taken and each batch ends only those that
// still match while it holds the lock, so what is reported is exactly what changed.
func executeFinalize(ctx context.Context, r *repairRun, minAge float64) (result, error) {
	if r.apply {
		return applyFinalize(ctx, r, minAge)
	}
	ids, locked, err := finalizeCandidates(ctx, r.v.db, r.o.clock.Unix, minAge)
	if err != nil {
		return result{}, err
	}
	return finalizeReport(ids, locked, r.o.clock.Unix), nil
}

// finalizeCandidates reads the orphans to end and the live-locked ones to leave.
func finalizeCandidates(ctx context.Context, db *statedb.DB, now, minAge float64) ([]string, []statedb.Orphan, error) {
	cands, err := db.FinalizeCandidates(ctx, now, minAge)
	if err != nil {
		return nil, nil, withCode(ExitData, fmt.Errorf("finalize-orphans: %w", err))
	}
	var ids []string
	var locked []statedb.Orphan
	for _, o := range cands {
		if o.LiveLock != nil {
			locked = append(locked, o)
		} else {
			ids = append(ids, o.Session.ID)
		}
	}
	return ids, locked, nil
}

// applyFinalize ends the orphans in transactions of at most dbBatchRows rows, each with its
// own journal. The candidates are read first, without the write lock; each batch checks
// its share of them again under the lock (statedb.Batch), so the lock is not held for a
// scan of the table.
func applyFinalize(ctx context.Context, r *repairRun, minAge float64) (result, error) {
	db, err := r.openWriteDB(ctx)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	now := r.o.clock.Unix
	ids, locked, err := finalizeCandidates(ctx, db, now, minAge)
	if err != nil {
		return result{}, err
	}
	res := finalizeReport(nil, locked, now)
	var batches dbBatches
	for batch := (statedb.Batch{MaxRows: dbBatchRows, Among: ids}); len(batch.Among) > 0; {
		var fin statedb.FinalizeResult
		tx, err := r.applyDB(db, func(hook statedb.CommitHook) (bool, statedb.TxStats, error) {
			var err error
			fin, err = db.FinalizeOrphans(ctx, now, minAge, batch, hook)
			return len(fin.Changes) > 0, fin.Stats, err
		}, nil)
		batches = batches.add(tx)
		if err != nil { // the batch rolled back: nothing of it to report
			batches.record(&res)
			return res, batches.failed(err)
		}
		res.add(finalizeReport(changedSessionIDs(fin.Changes, false), fin.Locked, now))
		batch.Among = fin.Remaining
	}
	batches.record(&res)
	return res, nil
}

// finalizeReport lists the sessions ended (or to end) and the live-locked ones skipped.
func finalizeReport(ids []string, locked []statedb.Orphan, now float64) result {
	var res result
	for _, o := range locked {
		res.findings = append(res.findings, Finding{"orphan.locked", sevInfo, o.Session.ID,
			"holds a live compression lock (" + o.LiveLock.Holder + "): skipped"})
	}
	for _, id := range ids {
		res.changes = append(res.changes,
			Change{Store: "state.db", Target: "sessions/" + id + "/ended_at", Op: "set", Before: nil, After: now},
			Change{Store: "state.db", Target: "sessions/" + id + "/end_reason", Op: "set", Before: nil, After: statedb.EndReasonOrphanedCompression})
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

func runPruneGhosts(c *cli.Context) error {
	r, minAge, err := startDBRepair(c, "prune-ghosts")
	if err != nil {
		return err
	}
	defer r.finish()
	res, err := executePrune(c.Context, r, minAge)
	if err != nil {
		return err
	}
	return r.report(res)
}

// executePrune plans, and with --apply performs, prune-ghosts. Under --apply the ghosts are
// read before the write lock is taken and each batch deletes only those that still match
// while it holds the lock; their transcript files are recorded in the journal there
// (before the commit) and moved into the journal's stash after it.
func executePrune(ctx context.Context, r *repairRun, minAge float64) (result, error) {
	if r.apply {
		return applyPrune(ctx, r, minAge)
	}
	ghosts, err := r.v.db.GhostCandidates(ctx, r.o.clock.Unix, minAge)
	if err != nil {
		return result{}, withCode(ExitData, fmt.Errorf("prune-ghosts: %w", err))
	}
	var deletable []statedb.Session
	for _, g := range ghosts {
		if len(g.ChildIDs) == 0 {
			deletable = append(deletable, g.Session)
		}
	}
	transcripts, err := statedb.TranscriptFiles(r.o.home.SessionsDir(), sessionIDs(deletable))
	if err != nil {
		return result{}, withCode(ExitData, err)
	}
	return pruneReport(keptIDs(ghosts), childrenOf(ghosts), deletable, transcripts), nil
}

// childrenOf maps each ghost with children to their ids.
func childrenOf(ghosts []statedb.Ghost) map[string][]string {
	children := map[string][]string{}
	for _, g := range ghosts {
		if len(g.ChildIDs) > 0 {
			children[g.Session.ID] = g.ChildIDs
		}
	}
	return children
}

// deletableIDs returns the ids of the ghosts without children, in order.
func deletableIDs(ghosts []statedb.Ghost) []string {
	var ids []string
	for _, g := range ghosts {
		if len(g.ChildIDs) == 0 {
			ids = append(ids, g.Session.ID)
		}
	}
	return ids
}

// applyPrune deletes the ghosts in transactions of at most dbBatchRows rows, each with its own
// journal. The candidates are read first, without the write lock; each batch checks its
// share of them again under the lock (statedb.Batch), so the lock is not held for a scan of
// the table.
func applyPrune(ctx context.Context, r *repairRun, minAge float64) (result, error) {
	db, err := r.openWriteDB(ctx)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	ghosts, err := db.GhostCandidates(ctx, r.o.clock.Unix, minAge)
	if err != nil {
		return result{}, withCode(ExitData, fmt.Errorf("prune-ghosts: %w", err))
	}
	res := pruneReport(keptIDs(ghosts), childrenOf(ghosts), nil, nil)
	var batches dbBatches
	for batch := (statedb.Batch{MaxRows: dbBatchRows, Among: deletableIDs(ghosts)}); len(batch.Among) > 0; {
		var pr statedb.PruneResult
		var transcripts map[string][]string
		tx, err := r.applyDB(db, func(hook statedb.CommitHook) (bool, statedb.TxStats, error) {
			var err error
			pr, err = db.PruneGhosts(ctx, r.o.clock.Unix, minAge, batch, hook)
			return len(pr.Deleted) > 0, pr.Stats, err
		}, func(changes []statedb.RowChange) ([]string, error) {
			var err error
			transcripts, err = statedb.TranscriptFiles(r.o.home.SessionsDir(), changedSessionIDs(changes, true))
			return flatten(transcripts), err
		})
		batches = batches.add(tx)
		if err != nil { // the batch rolled back: nothing of it to report
			batches.record(&res)
			return res, batches.failed(err)
		}
		res.add(pruneReport(pr.Kept, pr.Children, deletedSessions(pr.Changes), transcripts))
		batch.Among = pr.Remaining
	}
	batches.record(&res)
	return res, nil
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

// pruneReport lists the ghosts kept because they have children, and those deleted (or to
// delete) with their transcript files.
func pruneReport(kept []string, children map[string][]string, deleted []statedb.Session, transcripts map[string][]string) result {
	var res result
	for _, id := range kept {
		res.findings = append(res.findings, Finding{"ghost.has-children", sevWarn, id,
			fmt.Sprintf("has %d child session(s): kept (the runtime's DELETE would fail on the foreign key)", len(children[id]))})
	}
	for _, s := range deleted {
		res.changes = append(res.changes, Change{Store: "state.db", Target: "sessions/" + s.ID, Op: "delete", Before: toSessionRow(s)})
		for _, f := range transcripts[s.ID] {
			res.changes = append(res.changes, Change{Store: "sessions dir", Target: filepath.Base(f), Op: "remove file"})
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

// keptIDs returns the ids of the ghosts with children, in order.
func keptIDs(ghosts []statedb.Ghost) []string {
	var ids []string
	for _, g := range ghosts {
		if len(g.ChildIDs) > 0 {
			ids = append(ids, g.Session.ID)
		}
	}
	return ids
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

// dbBatchRows bounds the rows one state.db repair transaction changes. On the 2 M-message
// home a batch holds the write lock for about 0.1 ms per row finalized and 0.23 ms per ghost
// deleted (journal included): about 120 ms for 500 ghosts, far under the 0.5 s the newest
// runtime waits for its activity writes and the 1 s busy timeout of its other writes. Tests
// lower it.
var dbBatchRows = 500

// txData is one element of data.batches of an applied state.db repair.
type txData struct {
	Journal    string  `json:"journal"`
	Attempts   int     `json:"attempts"`
	WaitedMS   float64 `json:"waited_ms"`
	LockHeldMS float64 `json:"lock_held_ms"`
}

func newTxData(journal string, s statedb.TxStats) *txData {
	return &txData{Journal: journal, Attempts: s.Attempts, WaitedMS: milliseconds(s.Waited), LockHeldMS: milliseconds(s.Held)}
}

// milliseconds returns d in milliseconds, to the microsecond.
func milliseconds(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// dbBatches are the transactions of one state.db repair that wrote something.
type dbBatches []*txData

// add appends a batch's transaction, nil when it wrote nothing.
func (b dbBatches) add(tx *txData) dbBatches {
	if tx == nil {
		return b
	}
	return append(b, tx)
}

// failed adds to a batch's error the journals of the batches committed before it.
func (b dbBatches) failed(err error) error {
	if err == nil || len(b) == 0 {
		return err
	}
	return fmt.Errorf("%w; %d earlier batch(es) were applied: %s", err, len(b), strings.Join(b.journals(), ", "))
}

func (b dbBatches) journals() []string {
	out := make([]string, len(b))
	for i, t := range b {
		out[i] = t.Journal
	}
	return out
}

// record fills res with what the batches did: applied, the journal (the last one; a
// finding lists them all when there are several) and data.batches.
func (b dbBatches) record(res *result) {
	if len(b) == 0 {
		return
	}
	res.applied, res.journal, res.journals = true, b[len(b)-1].Journal, b.journals()
	res.data = map[string]dbBatches{"batches": b}
	if len(b) > 1 {
		res.findings = append(res.findings, Finding{"repair.batches", sevInfo, "",
			fmt.Sprintf("applied in %d transactions of at most %d rows, each with its journal (undo them newest first): %s",
				len(b), dbBatchRows, strings.Join(b.journals(), ", "))})
	}
}

// openWriteDB opens state.db for the writes of one repair run.
func (r *repairRun) openWriteDB(ctx context.Context) (*statedb.DB, error) {
	if err := r.checkWritable(); err != nil {
		return nil, err
	}
	db, err := statedb.OpenWrite(ctx, r.o.home.StateDB())
	if err != nil {
		return nil, withCode(ExitData, fmt.Errorf("open state.db for writing: %w", err))
	}
	return db, nil
}

// applyDB runs one transaction of a state.db repair on db. Inside the transaction, before
// the commit, the journal is written with every row image and the files filesFor names; if
// the transaction fails the journal is removed again. After the commit those files are moved
// into the journal's stash (a rename: the runtime deletes them, sessionctl keeps them for
// undo without copying). run reports whether it changed anything; a transaction that finds
// nothing to change writes nothing, journal included (a journal left by an attempt that was
// retried is removed). applyDB returns the transaction's journal and figures, nil when
// nothing was written.
func (r *repairRun) applyDB(db *statedb.DB, run func(statedb.CommitHook) (bool, statedb.TxStats, error), filesFor func([]statedb.RowChange) ([]string, error)) (*txData, error) {
	path := journalPath(r.o)
	var files []fileImage
	changed, stats, err := run(func(changes []statedb.RowChange) error {
		j := &journal{Storage: r.v.storage, Generation: string(r.v.gen), Rows: changes}
		if filesFor != nil {
			paths, err := filesFor(changes)
			if err != nil {
				return err
			}
			files = stashImages(paths, stashDir(path))
			j.Files = files
		}
		return writeJournalAt(r.o, path, j)
	})
	if err != nil || !changed {
		_ = os.Remove(path)
	}
	if errors.Is(err, statedb.ErrUnsupportedSchema) {
		return nil, withCode(ExitData, err)
	}
	if err != nil {
		return nil, withCode(ExitWrite, fmt.Errorf("%s: %w (rolled back; nothing changed)", r.o.command, err))
	}
	if !changed {
		return nil, nil
	}
	stashFiles(r.o, files)
	return newTxData(path, stats), nil
}

// stashFiles moves each file into its stash, then syncs the directories once. The stash
// directory is created here, so it holds nothing else, and the names come from one directory:
// each move is one rename. moveFile (which checks for an existing target, and copies across
// filesystems) takes over when the directory existed already or a rename fails. A file that
// cannot be moved stays where it was, with a warning (undo then leaves it alone).
func stashFiles(o *options, files []fileImage) {
	if len(files) == 0 {
		return
	}
	stash := filepath.Dir(files[0].BeforeStash)
	fresh := os.MkdirAll(filepath.Dir(stash), 0o700) == nil && os.Mkdir(stash, 0o700) == nil
	for _, f := range files {
		err := fs.ErrExist
		if fresh {
			err = os.Rename(f.Path, f.BeforeStash)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			err = moveFile(f.Path, f.BeforeStash)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			o.warn("%v: the file stays where it was", err)
		}
	}
	err := syncDirs(filepath.Dir(files[0].BeforeStash), filepath.Dir(files[0].Path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no stash directory: nothing moved
		o.warn("%v", err)
	}
}

// stashImages records that each file will be moved into dir.
func stashImages(paths []string, dir string) []fileImage {
	out := make([]fileImage, len(paths))
	for i, p := range paths {
		out[i] = fileImage{Path: p, BeforeStash: filepath.Join(dir, filepath.Base(p))}
	}
	return out
}
