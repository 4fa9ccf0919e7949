package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

// errUndoConflict refuses an undo whose targets changed since the journal was written.
var errUndoConflict = errors.New("the data changed since this journal was written")

func undoCommand() *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "restore the before-images of an applied change from its journal",
		ArgsUsage: "JOURNAL",
		Flags:     repairFlags(),
		Action:    runUndo,
	}
}

func runUndo(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("undo takes exactly one JOURNAL path")
	}
	j, err := readJournal(c.Args().First())
	if err != nil {
		return err
	}
	r, err := startRepairWith(c, "undo", func(ctx context.Context, o *options) (*homeView, error) {
		return loadView(ctx, o, false) // keeps the mirror: undo compares and restores its entries
	})
	if err != nil {
		return err
	}
	defer r.finish()
	if j.Home != r.o.home.Dir {
		return withCode(ExitRefused, fmt.Errorf("journal belongs to home %s, not %s", j.Home, r.o.home.Dir))
	}
	if err := j.checkPaths(r.o.home); err != nil {
		return withCode(ExitData, fmt.Errorf("journal %s: %w", c.Args().First(), err))
	}
	inv := j.inverse()
	inv.settleStashes(r.o.warn)
	res := result{changes: inv.changes()}
	if err := inv.verify(c.Context, r); err != nil {
		return err
	}
	if !r.apply {
		return r.report(res)
	}
	if len(inv.Routing) > 0 {
		if err := r.checkRoutingWritable(); err != nil {
			return err
		}
	} else if err := r.checkWritable(); err != nil {
		return err
	}
	path, err := writeJournal(r.o, inv)
	if err != nil {
		return withCode(ExitWrite, err)
	}
	if applied, err := inv.restore(c.Context, r); err != nil {
		if !applied {
			_ = os.Remove(path) // nothing changed: the journal would describe a change that never happened
			return err
		}
		return fmt.Errorf("%w (partly applied; its journal: %s)", err, path)
	}
	res.applied, res.journal = true, path
	return r.report(res)
}

// checkPaths refuses a journal naming a file sessionctl never journals. Undo writes, moves
// and removes exactly the paths a journal names, so an edited or damaged one must reach
// nothing else: the home's .restart_failure_counts, or a transcript directly in the sessions
// directory (never sessions.json). A transcript is moved to or from a file of the same name
// directly in a <journal>.files directory of the home's journal directory (journals written
// before those stashes hold its content instead). A path that is not clean and absolute, or
// that is a symbolic link, is refused too.
func (j *journal) checkPaths(home sessionsjson.Home) error {
	for _, f := range j.Files {
		if err := checkJournalFile(home, f); err != nil {
			return err
		}
	}
	return nil
}

func checkJournalFile(home sessionsjson.Home, f fileImage) error {
	if f.Path != home.CountsFile() && !isTranscriptPath(home, f.Path) {
		return fmt.Errorf("names a file sessionctl never journals: %q", f.Path)
	}
	if (f.BeforeStash != "" || f.AfterStash != "") && f.Path == home.CountsFile() {
		return fmt.Errorf("names a file sessionctl never moves: %q", f.Path)
	}
	for _, stash := range []string{f.BeforeStash, f.AfterStash} {
		if stash == "" {
			continue
		}
		if !isStashFor(home, stash, f.Path) {
			return fmt.Errorf("names a stash sessionctl never uses for %s: %q", filepath.Base(f.Path), stash)
		}
		if err := refuseSymlink(stash); err != nil {
			return err
		}
	}
	return refuseSymlink(f.Path)
}

// isCleanAbs reports whether path is absolute and already clean (no "..", no doubled "/").
func isCleanAbs(path string) bool {
	return filepath.IsAbs(path) && filepath.Clean(path) == path
}

// isTranscriptPath reports whether path is a clean absolute path directly in the home's
// sessions directory, other than the routing index.
func isTranscriptPath(home sessionsjson.Home, path string) bool {
	return isCleanAbs(path) && filepath.Dir(path) == home.SessionsDir() && path != home.SessionsJSON()
}

// isStashFor reports whether stash is where a journal of home keeps file: a file of the same
// name directly in a <journal>.files directory of the journal directory.
func isStashFor(home sessionsjson.Home, stash, file string) bool {
	dir := filepath.Dir(stash)
	return isCleanAbs(stash) && filepath.Base(stash) == filepath.Base(file) &&
		filepath.Dir(dir) == home.JournalDir() && strings.HasSuffix(dir, stashSuffix)
}

// refuseSymlink refuses path when it is a symbolic link (a missing path is fine): undo would
// follow it out of the home.
func refuseSymlink(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("names a symbolic link: %q", path)
	}
	return nil
}

// inverse swaps before and after images: applying the inverse undoes the journal.
func (j *journal) inverse() *journal {
	inv := &journal{Storage: j.Storage, Generation: j.Generation, Scope: j.Scope}
	for _, e := range j.Routing {
		inv.Routing = append(inv.Routing, entryImage{Store: e.Store, Key: e.Key, Before: e.After, After: e.Before})
	}
	for _, f := range j.Files {
		inv.Files = append(inv.Files, fileImage{Path: f.Path, Before: f.After, After: f.Before,
			BeforeStash: f.AfterStash, AfterStash: f.BeforeStash})
	}
	for _, row := range j.Rows {
		inv.Rows = append(inv.Rows, statedb.RowChange{Table: row.Table, Key: row.Key, Before: row.After, After: row.Before})
	}
	return inv
}

func (j *journal) changes() []Change {
	var out []Change
	for _, e := range j.Routing {
		out = append(out, Change{Store: e.Store, Target: e.Key, Op: "restore entry", Before: e.Before, After: e.After})
	}
	for _, f := range j.Files {
		out = append(out, Change{Store: "file", Target: f.Path, Op: "restore file", Before: fileSide(f.Before, f.BeforeStash, "moved to "),
			After: fileSide(f.After, f.AfterStash, "moved back from ")})
	}
	for _, row := range j.Rows {
		out = append(out, Change{Store: "state.db", Target: row.Table + "/" + describeKey(row.Key), Op: "restore row", Before: row.Before, After: row.After})
	}
	return out
}

// verify checks that every target still holds the "before" image of the inverse (the
// journal's after-image); any difference refuses the undo with exit 3.
func (j *journal) verify(ctx context.Context, r *repairRun) error {
	for _, e := range j.Routing {
		cur := currentEntryRaw(r.v, e.Store, e.Key)
		if !sameJSON(cur, e.Before) {
			return withCode(ExitRefused, fmt.Errorf("%w: entry %q in %s", errUndoConflict, e.Key, e.Store))
		}
	}
	for _, f := range j.Files {
		if err := verifyFile(f); err != nil {
			return err
		}
	}
	return nil
}

// verifyFile checks that f.Path holds f's before side. A stashed before side can only be
// checked for presence: its content moved.
func verifyFile(f fileImage) error {
	cur, err := os.ReadFile(f.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return withCode(ExitData, fmt.Errorf("read %s: %w", f.Path, err))
	}
	wantExists := f.Before != nil || f.BeforeStash != ""
	if exists != wantExists || (exists && f.Before != nil && !bytes.Equal(cur, *f.Before)) {
		return withCode(ExitRefused, fmt.Errorf("%w: file %s", errUndoConflict, f.Path))
	}
	return nil
}

// fileSide describes one side of a file image for the change list.
func fileSide(content *[]byte, stash, moved string) any {
	if stash != "" {
		return moved + stash
	}
	return bytesOrNil(content)
}

func currentEntryRaw(v *homeView, store, key string) json.RawMessage {
	var e *sessionsjson.Entry
	if store == "sessions.json" && v.routingSrc == "gateway_routing" {
		if v.doc != nil {
			e = v.doc.Entry(key)
		}
	} else {
		e = v.entry(key)
	}
	if e == nil {
		return nil
	}
	return e.Raw()
}

func sameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// restore applies the inverse journal: rows first (one transaction, verified inside it),
// then routing entries, then files.
// applied reports whether anything was written before an error.
func (j *journal) restore(ctx context.Context, r *repairRun) (applied bool, err error) {
	if len(j.Rows) > 0 {
		if err := restoreRows(ctx, r, j.Rows); err != nil {
			return false, err
		}
	}
	if err := j.restoreRouting(ctx, r); err != nil {
		return len(j.Rows) > 0, err
	}
	if err := j.restoreFiles(); err != nil {
		return len(j.Rows) > 0 || len(j.Routing) > 0, withCode(ExitWrite, err)
	}
	return true, nil
}

// restoreFiles gives every file its after side, then makes the moves durable and removes a
// stash directory left empty.
func (j *journal) restoreFiles() error {
	dirs, stashes := map[string]bool{}, map[string]bool{}
	for _, f := range j.Files {
		if err := restoreFile(f); err != nil {
			return err
		}
		dirs[filepath.Dir(f.Path)] = true
		for _, stash := range []string{f.BeforeStash, f.AfterStash} {
			if stash != "" {
				stashes[filepath.Dir(stash)] = true
			}
		}
	}
	for d := range stashes {
		if os.Remove(d) != nil { // only an emptied stash goes
			dirs[d] = true
		}
	}
	for d := range dirs {
		if err := sessionsjson.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// settleStashes drops the file records whose move did not happen or has already happened: a
// transcript that stayed in place (its move failed, or the process stopped right after the
// commit) is not restored from a stash that never got it, and one already in its stash is
// not moved again. A file found in neither place is reported and skipped, so the rows can
// still be restored.
func (j *journal) settleStashes(warn func(string, ...any)) {
	kept := j.Files[:0]
	for _, f := range j.Files {
		switch {
		case f.AfterStash != "" && !fileExists(f.AfterStash):
			if !fileExists(f.Path) {
				warn("%s is neither in place nor in the journal's stash (%s): not restored", f.Path, f.AfterStash)
			}
		case f.BeforeStash != "" && !fileExists(f.Path) && fileExists(f.BeforeStash):
		default:
			kept = append(kept, f)
		}
	}
	j.Files = kept
}

// restoreFile gives f.Path its after side: moved back from a stash, moved into one, or
// written from the journal.
func restoreFile(f fileImage) error {
	switch {
	case f.AfterStash != "":
		return moveFile(f.AfterStash, f.Path)
	case f.BeforeStash != "":
		return moveFile(f.Path, f.BeforeStash)
	default:
		return writeImage(f.Path, f.After)
	}
}

func restoreRows(ctx context.Context, r *repairRun, changes []statedb.RowChange) error {
	rows := make([]statedb.RowRestore, 0, len(changes))
	for _, c := range changes {
		rows = append(rows, statedb.RowRestore{Table: c.Table, Key: c.Key, Expected: c.Before, Desired: c.After})
	}
	db, err := statedb.OpenWrite(ctx, r.o.home.StateDB())
	if err != nil {
		return withCode(ExitData, fmt.Errorf("open state.db for writing: %w", err))
	}
	defer db.Close()
	if _, err := db.RestoreRows(ctx, rows); err != nil {
		if errors.Is(err, statedb.ErrConflict) {
			return withCode(ExitRefused, fmt.Errorf("%w: %v", errUndoConflict, err))
		}
		return withCode(ExitWrite, fmt.Errorf("restore rows: %w (rolled back)", err))
	}
	return nil
}

func (j *journal) restoreRouting(ctx context.Context, r *repairRun) error {
	v := r.v
	a := &routingApplier{r: r}
	for _, img := range j.Routing {
		before, err := sessionsjson.DecodeEntry(img.Key, img.Before, v.rules)
		if err != nil {
			return withCode(ExitData, fmt.Errorf("journal entry %q: %w", img.Key, err))
		}
		after, err := sessionsjson.DecodeEntry(img.Key, img.After, v.rules)
		if err != nil {
			return withCode(ExitData, fmt.Errorf("journal entry %q: %w", img.Key, err))
		}
		pe := plannedEntry{key: img.Key, before: before, after: after}
		if img.Store == "sessions.json" && v.routingSrc == "gateway_routing" {
			a.mirror = append(a.mirror, pe)
		} else {
			a.primary = append(a.primary, pe)
		}
	}
	if len(a.primary) == 0 && len(a.mirror) == 0 {
		return nil
	}
	return a.apply(ctx, routingPlan{})
}

func describeKey(key map[string]statedb.Value) string {
	parts := make([]string, 0, len(key))
	for k, v := range key {
		data, _ := v.MarshalJSON()
		parts = append(parts, k+"="+string(data))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
