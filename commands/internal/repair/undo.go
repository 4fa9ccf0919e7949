package repair

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

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// ErrUndoConflict refuses an undo whose targets changed since the journal was written.
var ErrUndoConflict = errors.New("the data changed since this journal was written")

// Undo plans, and when applying performs, the restore of journal j (read from path). Each
// target must hold the journal's after-image (it is restored) or its before-image (the change
// never landed there, or an earlier undo restored it: it is left alone); anything else refuses
// the undo and nothing changes. So an undo finishes from any state a crash, a fault or an
// interrupted undo leaves. The restore is itself journaled.
func Undo(ctx context.Context, r *Run, path string, j *journal.Journal) (Outcome, error) {
	h := r.H
	if err := j.ForHome(h.Opts.Home); err != nil { // the same home through a symbolic link is fine
		return Outcome{}, failure.Mark(failure.Refused, err)
	}
	if j.Torn {
		return settleTorn(ctx, r, path)
	}
	if err := j.CheckPaths(h.Opts.Home); err != nil {
		return Outcome{}, failure.Mark(failure.Data, fmt.Errorf("journal %s: %w", path, err))
	}
	if err := checkRowStore(ctx, path, j); err != nil {
		return Outcome{}, err
	}
	inv := j.Inverse()
	duplicates := inv.SettleStashes(h.Opts.Warnf)
	if err := pending(h, inv); err != nil {
		return Outcome{}, err
	}
	res := Outcome{Changes: imageChanges(inv, "restore")}
	if !r.Apply {
		return res, nil
	}
	if len(res.Changes) == 0 && len(duplicates) == 0 && len(journal.LeftoverTemps(h.Opts.Home, j)) == 0 {
		return finishUndoers(ctx, r, path, j, res)
	}
	routing, err := writesRouting(ctx, inv)
	if err != nil {
		return Outcome{}, err
	}
	if routing {
		if err := r.routingWritable(ctx, rowsWrite(inv.Rows).routing && len(inv.Routing) == 0); err != nil {
			return Outcome{}, err
		}
	} else if err := r.CheckWritable(); err != nil {
		return Outcome{}, err
	}
	if len(inv.Rows) > 0 { // a gateway_routing write is guarded by checkRoutingWritable
		if err := guardDB(ctx, h, rowsWrite(inv.Rows)); err != nil {
			return Outcome{}, err
		}
	}
	if inv.RowStore != "" {
		if err := guardDB(ctx, h, retentionWrite); err != nil {
			return Outcome{}, err
		}
	}
	// from here on the home is r.H: the lock reads it again, and a variable still naming
	// the one read before would keep both in memory (190 MB on a 20,000-entry home; issue 30)
	if fresh, err := r.lock(ctx); err != nil {
		return Outcome{}, err
	} else if fresh { // check again under the lock, on what the home holds now
		return Undo(ctx, r, path, j)
	}
	for _, d := range duplicates { // a move across filesystems left its copy here: the file is in place
		if err := os.Remove(d); err != nil {
			r.H.Opts.Warnf("%v", err)
		}
	}
	if len(res.Changes) == 0 {
		return finishUndoers(ctx, r, path, j, res)
	}
	inv.Command, inv.Home, inv.Undoes, inv.Pending = r.H.Opts.Command, r.H.Opts.Home.Dir, absPath(path), true
	if err := stampRowTimes(ctx, r.H, inv.Routing, false); err != nil {
		return Outcome{}, err
	}
	undoPath, err := r.writeJournal(inv)
	if err != nil {
		return Outcome{}, failure.Mark(failure.Write, err)
	}
	applied, err := restore(ctx, r, inv)
	if !applied {
		_ = os.Remove(undoPath) // nothing changed: the journal would describe a change that never happened
		if err != nil {
			return Outcome{}, err
		}
		return finishUndoers(ctx, r, path, j, Outcome{}) // every row was at its before-image already: nothing to undo
	}
	res.Applied, res.Journals = true, []string{undoPath}
	if err != nil { // the undo journal stays pending: the journal it reverts is not undone
		return res, &Incomplete{Outcome: res, Err: fmt.Errorf("%w (finish it with `sessionctl undo %s --apply`)", err, absPath(path))}
	}
	if err := journal.Finish(undoPath, inv); err != nil {
		r.H.Opts.Warnf("the undo is complete, but its journal still reads as stopped part-way (%v): the next undo of %s finds nothing to change and settles it", err, absPath(path))
	}
	return res, nil
}

// checkRowStore refuses, before anything changes, the undo of a journal whose row store
// cannot be read whole (statedb.CheckRowStore): a data error (exit 4), never a restore that
// stops inside its transaction.
func checkRowStore(ctx context.Context, path string, j *journal.Journal) error {
	if j.RowStore == "" {
		return nil
	}
	err := statedb.CheckRowStore(ctx, j.RowStore)
	if err == nil {
		return nil
	}
	files := ""
	if len(j.Files) > 0 {
		files = "; the transcripts it moved are still in its stash " + journal.StashDir(path)
	}
	return failure.Mark(failure.Data, fmt.Errorf("journal %s: its row store cannot be read (%w): nothing was changed, and its rows cannot be put back from it; state.db can only get them back from a backup (`sessionctl restore`)%s", path, err, files))
}

// settleTorn is the undo of a torn journal (journal.ReadOrTorn): the change it names never
// started, so there is nothing to restore; applied, the lock's settling (LockHome) moves the
// journal aside and says so.
func settleTorn(ctx context.Context, r *Run, path string) (Outcome, error) {
	if !r.Apply {
		r.H.Opts.Warnf("journal %s is torn (cut short by a crash while it was written): it names a change that never started, nothing to undo; --apply moves it aside", path)
		return Outcome{}, nil
	}
	_, err := r.lock(ctx)
	return Outcome{}, err
}

// finishUndoers settles the undos of the journal at path (j) that stopped part-way, once an
// undo of it found nothing left to change (res): under the lock, their journals are finished,
// so that the journal counts as undone and undo --last goes on to an older one.
func finishUndoers(ctx context.Context, r *Run, path string, j *journal.Journal, res Outcome) (Outcome, error) {
	pending := journal.PendingUndoers(r.H.Opts.Home.JournalDir(), path)
	if len(pending) == 0 {
		return res, nil
	}
	if fresh, err := r.lock(ctx); err != nil {
		return Outcome{}, err
	} else if fresh { // check again under the lock
		return Undo(ctx, r, path, j)
	}
	journal.FinishPending(pending, r.H.Opts.Warnf)
	return res, nil
}

// writesRouting reports whether applying inv writes the routing index: routing entries, or
// gateway_routing rows among its row images or in its row store (the undo of prune
// --never-active). A gateway rewrites its routing rows from memory, so such an undo is
// refused while one runs, as every routing write is.
func writesRouting(ctx context.Context, inv *journal.Journal) (bool, error) {
	if len(inv.Routing) > 0 {
		return true, nil
	}
	for _, row := range inv.Rows {
		if row.Table == home.StoreGatewayRouting {
			return true, nil
		}
	}
	if inv.RowStore == "" {
		return false, nil
	}
	holds, err := statedb.RowStoreHolds(ctx, inv.RowStore, home.StoreGatewayRouting)
	if err != nil {
		return false, failure.Mark(failure.Data, err)
	}
	return holds, nil
}

// UndoPurpose is what undo opens the home for to undo j: Restore (the routing index, and the
// decoded mirror it compares and restores entries of) when j writes routing or cannot be
// read whole, else Database: a journal of state.db rows and files needs neither, and reading a
// 20,000-entry index for one held 113–190 MB (issue 30).
func UndoPurpose(ctx context.Context, j *journal.Journal) home.Purpose {
	if j.Torn {
		return home.Restore
	}
	if routing, err := writesRouting(ctx, j); err != nil || routing { // the same stores as its inverse
		return home.Restore // a row store that cannot be read: Undo says so
	}
	return home.Database
}

// absPath is path made absolute (as given when that fails): how an undo journal names the
// journal it reverted (journal.Journal.Undoes).
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// imageChanges lists the images of j as changes, each op named by verb ("restore" for an
// undo's inverse journal, "change" for a journal shown as written).
func imageChanges(j *journal.Journal, verb string) []Change {
	var out []Change
	for _, e := range j.Routing {
		out = append(out, Change{Store: e.Store, Target: e.Key, Op: verb + " entry", Before: rawOrNil(e.Before), After: rawOrNil(e.After)})
	}
	for _, f := range j.Files {
		out = append(out, Change{Store: "file", Target: f.Path, Op: verb + " file", Before: fileSide(f.Before, f.BeforeStash, "moved to "),
			After: fileSide(f.After, f.AfterStash, "moved back from ")})
	}
	for _, row := range j.Rows {
		out = append(out, Change{Store: home.StoreStateDB, Target: row.Table + "/" + describeKey(row.Key), Op: verb + " row", Before: row.Before, After: row.After})
	}
	if j.RowStore != "" {
		op := "restore rows"
		if j.RowStoreOp == journal.RowStoreDeleted {
			op = "delete rows"
		}
		out = append(out, Change{Store: home.StoreStateDB, Target: j.RowStore, Op: op})
	}
	return out
}

// JournalChanges lists what journal j changed, as written: its entry, file and row images,
// its row store, the files of a restore and an operation on derived data.
func JournalChanges(j *journal.Journal) []Change {
	out := imageChanges(j, "change")
	if j.Swap != nil {
		for _, f := range j.Swap.Files {
			op := "restore file"
			if f.Restored == nil {
				op = "remove file"
			}
			out = append(out, Change{Store: "file", Target: f.Path, Op: op, Before: f.Original, After: f.Restored})
		}
	}
	if j.Operation != nil {
		out = append(out, Change{Store: home.StoreStateDB, Target: strings.Join(j.Operation.Targets, ", "), Op: j.Operation.Kind, Before: nil, After: j.Operation.Note})
	}
	return out
}

// pending keeps in inv the targets that still hold the journal's after-image (the inverse's
// before side), drops those already at its before-image, and refuses (ErrUndoConflict) when
// a target holds neither. Rows are checked the same way inside the restore's transaction.
func pending(h *home.Home, inv *journal.Journal) error {
	routing := inv.Routing[:0]
	for _, e := range inv.Routing {
		cur := currentEntryRaw(h, e.Store, e.Key)
		switch {
		case home.SameJSON(cur, e.Before):
			routing = append(routing, e)
		case !home.SameJSON(cur, e.After):
			return failure.Mark(failure.Refused, fmt.Errorf("%w: entry %q in %s", ErrUndoConflict, e.Key, e.Store))
		}
	}
	inv.Routing = routing
	files := inv.Files[:0]
	for _, f := range inv.Files {
		todo, err := filePending(f)
		if err != nil {
			return err
		}
		if todo {
			files = append(files, f)
		}
	}
	inv.Files = files
	return nil
}

// filePending reports whether f.Path still holds f's before side (to restore), or already
// holds its after side (nothing to do); anything else is a conflict. A stashed side can only
// be checked for presence: its content moved.
func filePending(f journal.FileImage) (bool, error) {
	cur, err := sessionsjson.ReadRegularFile(f.Path, journal.MaxBytes)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, failure.Mark(failure.Data, fmt.Errorf("read %s: %w", f.Path, err))
	}
	holds := func(content *[]byte, stash string) bool {
		if stash != "" || content == nil {
			return exists == (stash != "" || content != nil)
		}
		return exists && bytes.Equal(cur, *content)
	}
	switch {
	case f.AfterStash != "" && exists:
		// the stash holds what goes back, and something is in its place already
		return false, failure.Mark(failure.Refused, fmt.Errorf("%w: file %s exists again", ErrUndoConflict, f.Path))
	case holds(f.Before, f.BeforeStash):
		return true, nil
	case holds(f.After, f.AfterStash):
		return false, nil
	}
	return false, failure.Mark(failure.Refused, fmt.Errorf("%w: file %s", ErrUndoConflict, f.Path))
}

// fileSide describes one side of a file image for the change list.
func fileSide(content *[]byte, stash, moved string) any {
	if stash != "" {
		return moved + stash
	}
	return bytesOrNil(content)
}

func currentEntryRaw(h *home.Home, store, key string) []byte {
	var e *sessionsjson.Entry
	if store == home.StoreSessionsJSON && h.Routing.Source == home.SourceGatewayRouting {
		if h.Mirror.Doc != nil {
			e = h.Mirror.Doc.Entry(key)
		}
	} else if h.IsLegacy(key) { // a legacy entry is not this store's: the row it replaces is
		if row := h.Routing.Rows[key]; row != nil {
			return row.Stored()
		}
		return nil
	} else {
		e = h.Entry(key)
	}
	if e == nil {
		return nil
	}
	return e.Raw()
}

// restore applies the inverse journal: rows first (one transaction, verified inside it),
// then routing entries, then files. applied reports whether anything was written before an
// error.
func restore(ctx context.Context, r *Run, inv *journal.Journal) (applied bool, err error) {
	rows := 0
	if len(inv.Rows) > 0 {
		if rows, err = restoreRows(ctx, r, inv.Rows); err != nil {
			return false, err
		}
	}
	if inv.RowStore != "" {
		n, err := applyRowStore(ctx, r, inv)
		if err != nil {
			return false, err
		}
		rows += int(n)
	}
	applied = rows > 0
	changed, err := restoreRouting(ctx, r, inv.Routing)
	applied = applied || changed
	if err != nil {
		return applied, err
	}
	changed, err = restoreFiles(inv.Files, r.tempPattern())
	applied = applied || changed
	if err != nil {
		return applied, failure.Mark(failure.Write, err)
	}
	return applied, nil
}

// restoreFiles gives every file its after side, then makes the moves durable and removes a
// stash directory left empty. changed reports whether any file was written, moved or
// replaced (an unsynced replacement included), also when it fails. tmpPattern names the
// temporary file of a file written (the run's).
func restoreFiles(files []journal.FileImage, tmpPattern string) (changed bool, err error) {
	dirs, stashes := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		if err := restoreFile(f, tmpPattern); err != nil {
			return changed || errors.Is(err, sessionsjson.ErrNotDurable), err
		}
		changed = true
		dirs[filepath.Dir(f.Path)] = true
		for _, stash := range []string{f.BeforeStash, f.AfterStash} {
			if stash != "" {
				stashes[filepath.Dir(stash)] = true
			}
		}
	}
	for _, d := range sortedKeys(stashes) {
		if os.Remove(d) != nil { // only an emptied stash goes
			dirs[d] = true
		}
	}
	return changed, journal.SyncDirs(sortedKeys(dirs)...)
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// restoreFile gives f.Path its after side: moved back from a stash, moved into one, or
// written from the journal (its temporary file named by tmpPattern).
func restoreFile(f journal.FileImage, tmpPattern string) error {
	switch {
	case f.AfterStash != "":
		return journal.MoveFile(f.AfterStash, f.Path)
	case f.BeforeStash != "":
		return journal.MoveFile(f.Path, f.BeforeStash)
	default:
		return writeImage(f.Path, f.After, tmpPattern)
	}
}

// restoreRows restores the rows in one transaction and returns how many it wrote (rows already
// at their desired image are left alone).
func restoreRows(ctx context.Context, r *Run, changes []statedb.RowChange) (int, error) {
	rows := make([]statedb.RowRestore, 0, len(changes))
	for _, c := range changes {
		rows = append(rows, statedb.RowRestore{Table: c.Table, Key: c.Key, Expected: c.Before, Desired: c.After})
	}
	db, err := statedb.OpenWrite(ctx, r.H.Opts.Home.StateDB())
	if err != nil {
		return 0, failure.Mark(failure.Data, fmt.Errorf("open state.db for writing: %w", err))
	}
	defer db.Close()
	restored, _, err := db.RestoreRows(ctx, rows)
	if errors.Is(err, statedb.ErrConflict) {
		return 0, failure.Mark(failure.Refused, fmt.Errorf("%w: %v", ErrUndoConflict, err))
	}
	if err != nil {
		return 0, failure.Mark(failure.Write, fmt.Errorf("restore rows: %w (rolled back)", err))
	}
	return restored, nil
}

// applyRowStore puts the rows of the inverse journal's row store back, or deletes them again
// (the undo of an undo), in one transaction verified inside it; it returns the rows written.
func applyRowStore(ctx context.Context, r *Run, inv *journal.Journal) (int64, error) {
	dir := statedb.RowsRestore
	if inv.RowStoreOp == journal.RowStoreDeleted {
		dir = statedb.RowsDelete
	}
	db, err := statedb.OpenWrite(ctx, r.H.Opts.Home.StateDB())
	if err != nil {
		return 0, failure.Mark(failure.Data, fmt.Errorf("open state.db for writing: %w", err))
	}
	defer db.Close()
	n, _, err := db.ApplyRowStore(ctx, inv.RowStore, dir)
	if errors.Is(err, statedb.ErrConflict) {
		return 0, failure.Mark(failure.Refused, fmt.Errorf("%w: %v", ErrUndoConflict, err))
	}
	if err != nil {
		return 0, failure.Mark(failure.Write, fmt.Errorf("apply row store: %w (rolled back)", err))
	}
	return n, nil
}

func restoreRouting(ctx context.Context, r *Run, images []journal.EntryImage) (changed bool, err error) {
	h := r.H
	a := &routingApplier{r: r}
	for _, img := range images {
		row := img.Store == home.StoreGatewayRouting
		before, err := decodeImage(h, img.Key, img.Before, row)
		if err != nil {
			return false, err
		}
		after, err := decodeImage(h, img.Key, img.After, row)
		if err != nil {
			return false, err
		}
		pe := plannedEntry{key: img.Key, before: before, after: after, prev: img.Prev, at: img.AfterTime}
		if img.Store == home.StoreSessionsJSON && h.Routing.Source == home.SourceGatewayRouting {
			a.mirror = append(a.mirror, pe)
		} else {
			a.primary = append(a.primary, pe)
		}
	}
	if len(a.primary) == 0 && len(a.mirror) == 0 {
		return false, nil
	}
	return a.apply(ctx, nil)
}

// decodeImage decodes one side of a journal's entry image, nil where the entry is absent. A
// gateway_routing row's (row) may hold what json.loads rejects: the row the runtime skipped,
// put back as it was.
func decodeImage(h *home.Home, key string, raw json.RawMessage, row bool) (*sessionsjson.Entry, error) {
	if raw == nil {
		return nil, nil
	}
	if row {
		return sessionsjson.DecodeRow(key, raw, h.Rules), nil
	}
	e, err := sessionsjson.DecodeEntry(key, raw, h.Rules)
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("journal entry %q: %w", key, err))
	}
	return e, nil
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
