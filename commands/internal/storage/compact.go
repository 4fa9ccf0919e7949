package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// CompactData is data of `compact --json`.
type CompactData struct {
	Generation string `json:"generation"`
	// Steps are the statements of the generation's vacuum(), in order.
	Steps  []string          `json:"steps"`
	Before statedb.Physical  `json:"before"`
	After  *statedb.Physical `json:"after"` // null in a plan
	// Reclaimable is what the plan expects to win: the free pages, the WAL and the FTS
	// segments beyond one per index.
	Reclaimable Reclaimable `json:"reclaimable"`
	Space       []SpaceNeed `json:"space"`
	// Optimized lists the FTS indexes merged (applied), Skipped those passed over and why.
	Optimized []string          `json:"fts_optimized"`
	Skipped   map[string]string `json:"fts_skipped,omitempty"`
	Into      string            `json:"into,omitempty"`
}

// Reclaimable is what compact is expected to give back.
type Reclaimable struct {
	FreeBytes   int64            `json:"free_bytes"`
	WALBytes    int64            `json:"wal_bytes"`
	FTSSegments map[string]int64 `json:"fts_segments"` // segments each index has beyond one
}

// compactNote is what a compact journal says: there is nothing for undo to restore.
const compactNote = "compact ran the runtime's vacuum(): it rewrites the file's layout (FTS segments merged, free pages and WAL given back) and changes no row; undo has nothing to restore"

// Compact plans, and with apply runs, the runtime's vacuum() of the home's generation on
// state.db; with into it writes a compacted copy there instead (VACUUM INTO) and changes
// nothing in the home. h is opened for home.Database.
func Compact(ctx context.Context, h *home.Home, apply bool, into string) (repair.Outcome, *CompactData, error) {
	if err := h.NeedDB(); err != nil {
		return repair.Outcome{}, nil, err
	}
	before, err := h.DB.Physical(ctx)
	if err != nil {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, fmt.Errorf("state.db: %w", err))
	}
	m := h.Rules.Maintenance
	d := &CompactData{Generation: string(h.Gen), Before: before, Optimized: []string{}}
	if into != "" {
		return compactInto(ctx, h, d, into)
	}
	if err := noVacuum(h); err != nil {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, fmt.Errorf("compact: %w; use compact --into FILE for a compacted copy", err))
	}
	d.Steps = compactSteps(m, before)
	d.Reclaimable = reclaimable(before, m.OptimizeFTS.Tables())
	if d.Space, err = needSpace(compactDemands(h, before)); err != nil {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, err)
	}
	plan := repair.Outcome{Changes: compactChanges(before, nil, m.OptimizeFTS.Tables())}
	if !apply {
		return plan, d, nil
	}
	out, err := applyCompact(ctx, h, d)
	return out, d, err
}

// noVacuum says why compact does not run on h's generation (nil when it does).
func noVacuum(h *home.Home) error {
	if h.Rules.Maintenance.Vacuum == sessionsjson.VacuumNone {
		return fmt.Errorf("generation %s has no vacuum() (it arrived with b8663813b, r0506): its runtime never compacts state.db", h.Gen)
	}
	return nil
}

// compactSteps lists the statements of vacuum(): an optimize per FTS index of the rule that
// the file has, then the rule's checkpoints and VACUUM.
func compactSteps(m sessionsjson.Maintenance, p statedb.Physical) []string {
	var out []string
	for _, t := range m.OptimizeFTS.Tables() {
		if _, ok := p.FTSSegments[t]; ok {
			out = append(out, "INSERT INTO "+t+"("+t+") VALUES('optimize')")
		}
	}
	return append(out, statedb.VacuumSteps(m.Vacuum)...)
}

func reclaimable(p statedb.Physical, fts []string) Reclaimable {
	r := Reclaimable{FreeBytes: p.FreeBytes(), WALBytes: p.WALBytes, FTSSegments: map[string]int64{}}
	for _, t := range fts {
		if n, ok := p.FTSSegments[t]; ok && n > 1 {
			r.FTSSegments[t] = n - 1
		}
	}
	return r
}

// compactDemands is the space VACUUM needs: its copy of the pages in use in SQLite's
// temporary directory, and as much again beside state.db for the WAL or rollback journal
// that carries the rewrite.
func compactDemands(h *home.Home, p statedb.Physical) []spaceDemand {
	return []spaceDemand{
		{sqliteTempDir(), "VACUUM's temporary copy", p.UsedBytes()},
		{filepath.Dir(h.Opts.Home.StateDB()), "the journal of the rewrite", p.UsedBytes()},
	}
}

// compactChanges lists what compact changes: each FTS index merged to one segment, the file
// rewritten without its free pages, the WAL folded in. after is nil in a plan (the expected
// values are shown).
func compactChanges(before statedb.Physical, after *statedb.Physical, fts []string) []repair.Change {
	var out []repair.Change
	for _, t := range fts {
		n, ok := before.FTSSegments[t]
		if !ok {
			continue
		}
		var now any = int64(1)
		if after != nil {
			now = after.FTSSegments[t]
		}
		out = append(out, repair.Change{Store: home.StoreStateDB, Target: "fts/" + t + "/segments", Op: "optimize", Before: n, After: now})
	}
	var size any = before.UsedBytes()
	if after != nil {
		size = after.FileBytes
	}
	out = append(out, repair.Change{Store: home.StoreStateDB, Target: "state.db/bytes", Op: "vacuum", Before: before.FileBytes, After: size})
	if before.WALBytes > 0 || before.JournalMode == "wal" {
		var wal any = int64(0)
		if after != nil {
			wal = after.WALBytes
		}
		out = append(out, repair.Change{Store: home.StoreStateDB, Target: "state.db-wal/bytes", Op: "checkpoint", Before: before.WALBytes, After: wal})
	}
	return out
}

// applyCompact runs vacuum() under sessionctl's lock, with the database to itself.
func applyCompact(ctx context.Context, h *home.Home, d *CompactData) (repair.Outcome, error) {
	if err := refuseCompact(h, d); err != nil {
		return repair.Outcome{}, err
	}
	release, err := repair.LockHome(ctx, h.Opts)
	if err != nil {
		return repair.Outcome{}, err
	}
	defer release()
	if err := refuseShared(h, "compact", false); err != nil { // again, under the lock
		return repair.Outcome{}, err
	}
	return compactLocked(ctx, h, d)
}

// refuseCompact refuses compact where it is unsafe (refuseShared) or the space it needs is
// not free.
func refuseCompact(h *home.Home, d *CompactData) error {
	if err := refuseShared(h, "compact", false); err != nil {
		return err
	}
	return refuseShort("compact", d.Space)
}

// compactLocked runs vacuum(), with sessionctl's lock held and the refusals checked under it,
// after writing the journal that records the operation.
func compactLocked(ctx context.Context, h *home.Home, d *CompactData) (repair.Outcome, error) {
	path := journal.NewPath(h.Opts.Home.JournalDir(), h.Opts.Command)
	j := &journal.Journal{Command: h.Opts.Command, Home: h.Opts.Home.Dir, Storage: h.Storage.String(), Generation: string(h.Gen), Note: compactNote}
	if err := journal.Write(path, j); err != nil {
		return repair.Outcome{}, failure.Mark(failure.Write, err)
	}
	h.Close() // vacuum() needs the database alone: this process's reader goes too
	m := h.Rules.Maintenance
	h.Opts.Report("compact", 0, 1)
	res, err := statedb.Vacuum(ctx, h.Opts.Home.StateDB(), m.Vacuum, m.OptimizeFTS.Tables())
	h.Opts.Report("compact", 1, 1)
	d.Optimized, d.Skipped = append(d.Optimized, res.Optimized...), res.Skipped
	out := repair.Outcome{Applied: true, Journals: []string{path}, Findings: skippedFindings(res.Skipped)}
	if err != nil {
		return compactFailed(out, h.Opts.Home.StateDB(), d, res, err)
	}
	after, err := physicalOf(ctx, h.Opts.Home.StateDB())
	if err != nil {
		return compactUnmeasured(out, d, res, err)
	}
	d.After = &after
	out.Changes = compactChanges(d.Before, &after, res.Optimized)
	return out, nil
}

// compactFailed ends a compact whose VACUUM failed: rolled back, nothing changed (exit 5, no
// journal) unless an FTS index was merged or a checkpoint changed the files before it, or the
// failure left state.db mid-transaction (exit 6: they stay; they change the layout only, and
// undo has nothing to restore).
func compactFailed(out repair.Outcome, dbPath string, d *CompactData, res statedb.VacuumResult, err error) (repair.Outcome, error) {
	if len(res.Optimized) == 0 && !res.Checkpointed && !res.Interrupted {
		_ = os.Remove(out.Journal())
		return repair.Outcome{}, failure.Mark(failure.Write, fmt.Errorf("compact: %w (rolled back; nothing changed)", err))
	}
	var done []string
	if len(res.Optimized) > 0 {
		out.Changes = append(out.Changes, repair.Change{Store: home.StoreStateDB, Target: "fts", Op: "optimize", Before: nil, After: res.Optimized})
		done = append(done, fmt.Sprintf("the FTS indexes %v were merged", res.Optimized))
	}
	if res.Checkpointed {
		out.Changes = append(out.Changes, repair.Change{Store: home.StoreStateDB, Target: "state.db-wal/bytes", Op: "checkpoint", Before: d.Before.WALBytes, After: fileSize(dbPath + "-wal")})
		done = append(done, "the WAL was checkpointed into state.db")
	}
	tail := "VACUUM rolled back; run compact again"
	if res.Interrupted { // err says so
		tail = "run compact again once SQLite has rolled it back"
	}
	if len(done) == 0 {
		return out, &repair.Incomplete{Outcome: out, Err: fmt.Errorf("compact: %w (%s)", err, tail)}
	}
	return out, &repair.Incomplete{Outcome: out, Err: fmt.Errorf("compact: %s, then %w (%s)", strings.Join(done, " and "), err, tail)}
}

// compactUnmeasured ends a compact whose VACUUM committed but whose file could not be read
// afterwards: state.db was rewritten, so the run exits 6 with its journal named, listing the
// changes the plan expected (their values after are not known).
func compactUnmeasured(out repair.Outcome, d *CompactData, res statedb.VacuumResult, err error) (repair.Outcome, error) {
	out.Changes = compactChanges(d.Before, nil, res.Optimized)
	return out, &repair.Incomplete{Outcome: out, Err: fmt.Errorf("compact: VACUUM committed (state.db is rewritten), then reading it failed: %w", err)}
}

// skippedFindings notes the FTS indexes vacuum() passed over.
func skippedFindings(skipped map[string]string) []check.Finding {
	var out []check.Finding
	for _, t := range sortedKeys(skipped) {
		out = append(out, check.Finding{Check: check.CompactFTSSkipped, Severity: check.Info, Subject: t, Message: skipped[t]})
	}
	return out
}

// physicalOf opens the database read-only and reads its layout.
func physicalOf(ctx context.Context, path string) (statedb.Physical, error) {
	db, err := statedb.OpenReadOnly(ctx, path)
	if err != nil {
		return statedb.Physical{}, failure.Mark(failure.Data, fmt.Errorf("state.db: %w", err))
	}
	defer db.Close()
	p, err := db.Physical(ctx)
	if err != nil {
		return p, failure.Mark(failure.Data, fmt.Errorf("state.db: %w", err))
	}
	return p, nil
}

// compactInto writes a compacted copy of state.db to into (VACUUM INTO), through a temporary
// file in the same directory that is synced and then linked to its name, so that a file that
// appeared there meanwhile is never replaced. The home is only read.
func compactInto(ctx context.Context, h *home.Home, d *CompactData, into string) (repair.Outcome, *CompactData, error) {
	dst, err := absPath(into)
	if err != nil {
		return repair.Outcome{}, nil, err
	}
	d.Into, d.Steps = dst, []string{"VACUUM INTO '" + dst + "'"}
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, fmt.Errorf("compact --into: %s exists: refusing to overwrite it", dst))
	}
	if err := refuseHomeFile(h.Opts.Home, dst); err != nil {
		return repair.Outcome{}, nil, err
	}
	if st, err := os.Stat(filepath.Dir(dst)); err != nil || !st.IsDir() {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, fmt.Errorf("compact --into: %s is not a directory", filepath.Dir(dst)))
	}
	if d.Space, err = needSpace([]spaceDemand{{filepath.Dir(dst), "the compacted copy", d.Before.UsedBytes()}}); err != nil {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, err)
	}
	if err := refuseShort("compact --into", d.Space); err != nil {
		return repair.Outcome{}, nil, err
	}
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".sessionctl-"+strconv.Itoa(os.Getpid()))
	_ = os.Remove(tmp) // a leftover of an earlier run of this pid
	err = h.DB.VacuumInto(ctx, tmp)
	if err == nil {
		err = finishCopy(tmp, dst)
	}
	_ = os.Remove(tmp)
	if err != nil {
		return repair.Outcome{}, nil, failure.Mark(failure.Write, fmt.Errorf("compact --into: %w (nothing written)", err))
	}
	after, err := physicalOf(ctx, dst)
	if err != nil {
		return repair.Outcome{}, nil, err
	}
	d.After = &after
	change := repair.Change{Store: "file", Target: dst, Op: "write compacted copy", Before: nil, After: after.FileBytes}
	return repair.Outcome{Applied: true, Changes: []repair.Change{change}}, d, nil
}

// refuseHomeFile refuses a compact --into destination that the home itself would read: a
// side file of its state.db (state.db-journal, which SQLite would take for a hot journal and
// roll "back" into the database; -wal; -shm) or a file under sessionctl's own directory. The
// comparison is on real paths (symbolic links in the directories resolved).
func refuseHomeFile(home sessionsjson.Home, dst string) error {
	real := func(p string) string {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			return filepath.Join(dir, filepath.Base(p))
		}
		return p
	}
	d, db := real(dst), real(home.StateDB())
	_, inTool := sessionsjson.RelBelow(real(home.ToolDir()), d)
	if inTool || d == db+"-journal" || d == db+"-wal" || d == db+"-shm" {
		return failure.Mark(failure.Data, fmt.Errorf("compact --into: %s is a file the home's database or sessionctl reads: refusing to write there (choose a path outside %s)", dst, home.Dir))
	}
	return nil
}

// FaultIntoNoLink, selected as "compact.into-link:fail", makes compact --into's hard link
// fail as on a filesystem without hard links (sessionsjson.FaultPointEnv).
const FaultIntoNoLink = "compact.into-link"

// finishCopy makes tmp durable (mode 0600) and gives it the name dst, which must not exist:
// a hard link, or where the filesystem has none (FAT, exFAT, many network shares) a rename
// that refuses an existing dst.
func finishCopy(tmp, dst string) error {
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	if err := sessionsjson.SyncFile(tmp); err != nil {
		return err
	}
	err := sessionsjson.FaultError(FaultIntoNoLink)
	if err == nil {
		err = os.Link(tmp, dst)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		if rerr := sessionsjson.RenameNoReplace(tmp, dst); rerr != nil {
			return fmt.Errorf("%w; as a rename: %w", err, rerr)
		}
		err = nil
	}
	if err != nil {
		return err
	}
	return sessionsjson.SyncDir(filepath.Dir(dst))
}
