package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// The fault points of a restore's swap, selected by sessionsjson.FaultPointEnv.
const (
	FaultRestoreStaged  = "restore.after-stage"   // journal written, copies staged, nothing swapped
	FaultRestoreSwapped = "restore.after-db-swap" // state.db swapped, the other files not yet
	// FaultBackupFilled: a backup's files copied into its temporary directory, no manifest,
	// not published (for a restore: its copy of the files it replaces, no journal yet).
	FaultBackupFilled = "backup.filled"
)

// stagedSuffix ends the name of a file a restore staged beside its target.
const stagedSuffix = ".sessionctl-restore"

// sidecars are the files of the replaced database that must not meet the new one: its WAL,
// its WAL index and a hot rollback journal (SQLite would apply them to the restored file).
var sidecars = []string{"-wal", "-shm", "-journal"}

// RestoreData is data of `restore --json` (and of `undo` of a restore).
type RestoreData struct {
	Backup   string        `json:"backup"`
	Manifest *Manifest     `json:"manifest"`
	Saved    string        `json:"saved,omitempty"` // the backup of what was replaced (applied)
	Files    []RestoreFile `json:"files"`
}

// RestoreFile is what a restore does to one file of the home.
type RestoreFile struct {
	Path   string `json:"path"`
	Action string `json:"action"` // replace, create or remove
}

// fileAction is one file of a swap: put the source's copy in place, or remove the file.
type fileAction struct {
	rel    string
	remove bool
}

// Restore plans, and with apply performs, the restore of the backup in dir: verified first
// (a damaged backup is refused, exit 4), then, with the database to itself (no gateway, no
// other holder, not the runtime's repair lock) and under sessionctl's lock, a backup of what
// it replaces is taken into the journal's stash and the backup's files are swapped in
// (staged beside their targets, renamed over them; state.db first, after the old database's
// -wal, -shm and -journal moved aside). `undo JOURNAL` swaps back. h is opened for
// home.Database.
func Restore(ctx context.Context, h *home.Home, dir string, apply bool) (repair.Outcome, *RestoreData, error) {
	vd, findings, err := Verify(ctx, dir)
	if err != nil {
		return repair.Outcome{}, nil, err
	}
	if len(findings) > 0 {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, fmt.Errorf("restore: the backup fails verification (%s: %s); nothing was changed", findings[0].Subject, findings[0].Message))
	}
	m := vd.Manifest
	if m.SchemaVersion > sessionsjson.NewestKnownSchema() {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, fmt.Errorf("restore: the backup's state.db is schema v%d, newer than this sessionctl knows (≤ v%d)", m.SchemaVersion, sessionsjson.NewestKnownSchema()))
	}
	actions := manifestActions(m)
	d := &RestoreData{Backup: vd.Backup, Manifest: m}
	out := repair.Outcome{Changes: swapChanges(h.Opts.Home, actions, d)}
	if m.Home != h.Opts.Home.Dir {
		out.Findings = append(out.Findings, check.Finding{Check: check.BackupOtherHome, Severity: check.Warn, Subject: vd.Backup,
			Message: "taken of home " + m.Home + ", not " + h.Opts.Home.Dir + ": its gateway_routing rows name that home's sessions directory (check reports them as another scope)"})
	}
	if !apply {
		return out, d, nil
	}
	res, err := swap(ctx, h, vd.Backup, m, actions, out.Changes)
	res.Findings = append(out.Findings, res.Findings...)
	d.Saved = res.saved
	return res.Outcome, d, err
}

// manifestActions is what restoring a backup does: put each of its files in place, remove
// each core file it records as absent.
func manifestActions(m *Manifest) []fileAction {
	var out []fileAction
	for _, f := range m.Files {
		out = append(out, fileAction{rel: f.Path})
	}
	for _, rel := range m.Absent {
		out = append(out, fileAction{rel: rel, remove: true})
	}
	return out
}

// swapChanges lists the changes of actions and fills d.Files.
func swapChanges(h sessionsjson.Home, actions []fileAction, d *RestoreData) []repair.Change {
	var out []repair.Change
	for _, a := range actions {
		now := fileSize(filepath.Join(h.Dir, filepath.FromSlash(a.rel)))
		_, err := os.Lstat(filepath.Join(h.Dir, filepath.FromSlash(a.rel)))
		exists := err == nil
		var before, after any
		if exists {
			before = now
		}
		op := "replace"
		switch {
		case a.remove && !exists:
			continue
		case a.remove:
			op = "remove"
		case !exists:
			op = "create"
		}
		if !a.remove {
			after = sourceSize(d.Manifest, a.rel)
		}
		d.Files = append(d.Files, RestoreFile{Path: a.rel, Action: op})
		out = append(out, repair.Change{Store: "home", Target: a.rel, Op: op, Before: before, After: after})
	}
	return out
}

func sourceSize(m *Manifest, rel string) int64 {
	for _, f := range m.Files {
		if f.Path == rel {
			return f.Size
		}
	}
	return 0
}

// swapResult is what a swap did.
type swapResult struct {
	repair.Outcome
	saved string
}

// swap performs actions on the home from the verified backup src (manifest m): refusals,
// lock, the backup of what it replaces (the journal's stash), the journal, staging, the
// sidecars moved aside, the renames. A failure before the first rename changes nothing
// (exit 5); one after is Incomplete (exit 6) with the journal named.
func swap(ctx context.Context, h *home.Home, src string, m *Manifest, actions []fileAction, changes []repair.Change) (swapResult, error) {
	if err := refuseShared(h, h.Opts.Command, true); err != nil {
		return swapResult{}, err
	}
	release, err := repair.LockHome(ctx, h.Opts)
	if err != nil {
		return swapResult{}, err
	}
	defer release()
	if err := refuseShared(h, h.Opts.Command, true); err != nil {
		return swapResult{}, err
	}
	h.Close() // the home's files are about to be replaced: this process's reader goes first
	path := journal.NewPath(h.Opts.Home.JournalDir(), h.Opts.Command)
	j, err := saveCurrent(ctx, h, path, src, actions)
	if err != nil {
		return swapResult{}, err
	}
	res := swapResult{saved: j.Swap.Saved}
	staged, err := stage(h.Opts.Home, src, m, actions)
	if err != nil {
		unstage(staged)
		discard(path, j.Swap.Saved)
		return res, failure.Mark(failure.Write, fmt.Errorf("%s: %w (nothing was changed)", h.Opts.Command, err))
	}
	sessionsjson.FaultPoint(FaultRestoreStaged)
	if err := ctx.Err(); err != nil { // a signal: stop at the last point where nothing changed
		unstage(staged)
		discard(path, j.Swap.Saved)
		return swapResult{}, err
	}
	res.Applied, res.Journals = true, []string{path}
	changed, err := rename(h.Opts.Home, j, staged, actions)
	res.Findings, res.Changes = staleFindings(j.Swap.Stale), changes
	if err != nil {
		unstage(staged)
		if !changed {
			discard(path, j.Swap.Saved)
			return swapResult{}, failure.Mark(failure.Write, fmt.Errorf("%s: %w (nothing was changed)", h.Opts.Command, err))
		}
		return res, &repair.Incomplete{Outcome: res.Outcome, Err: fmt.Errorf("%s: %w", h.Opts.Command, err)}
	}
	if err := journal.Finish(path, j); err != nil { // an undo's: it landed whole
		h.Opts.Warnf("the undo is complete, but its journal still reads as stopped part-way (%v): the next undo of the restore finds nothing to change and settles it", err)
	}
	return res, nil
}

// saveCurrent backs up the files actions replace into the journal's stash (state.db through
// the backup API over a read-write connection, whose close folds the WAL in) and writes the
// journal: what each file is now (its fingerprint, taken after that close) and what the swap
// puts there.
func saveCurrent(ctx context.Context, h *home.Home, path, src string, actions []fileAction) (*journal.Journal, error) {
	if _, err := sessionsjson.MakeToolDir(h.Opts.Home, h.Opts.Home.JournalDir()); err != nil {
		return nil, failure.Mark(failure.Refused, fmt.Errorf("journal directory: %w", err))
	}
	set := make([]string, 0, len(actions))
	for _, a := range actions {
		set = append(set, a.rel)
	}
	db, err := openCurrent(ctx, h)
	if err != nil {
		return nil, err
	}
	saved, _, err := writeBackup(ctx, h, db, h.Opts.Home.JournalDir(), filepath.Base(journal.StashDir(path)), KindPreRestore, set)
	if db != nil {
		_ = db.Close()
	}
	if err != nil {
		return nil, err
	}
	j := &journal.Journal{Command: h.Opts.Command, Home: h.Opts.Home.Dir, Storage: h.Storage.String(), Generation: string(h.Gen),
		Swap: &journal.Swap{Backup: src, Saved: saved}, Pending: h.Opts.Command == "undo"}
	for _, a := range actions {
		sf := journal.SwapFile{Path: a.rel, Original: fingerprint(filepath.Join(h.Opts.Home.Dir, filepath.FromSlash(a.rel)))}
		if !a.remove {
			sf.Restored = restoredDigest(src, a.rel)
		}
		j.Swap.Files = append(j.Swap.Files, sf)
	}
	if err := journal.Write(path, j); err != nil {
		_ = os.RemoveAll(saved)
		return nil, failure.Mark(failure.Write, err)
	}
	return j, nil
}

// openCurrent opens the home's state.db read-write for the backup of what a restore
// replaces; nil when there is none, or when it is not a database SQLite can read (corrupt,
// zeroed: then it is saved byte for byte, no process holding it).
func openCurrent(ctx context.Context, h *home.Home) (*statedb.DB, error) {
	if _, err := os.Lstat(h.Opts.Home.StateDB()); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	db, err := statedb.OpenWrite(ctx, h.Opts.Home.StateDB())
	if errors.Is(err, statedb.ErrCorrupt) {
		return nil, nil
	}
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("%s: cannot back up the current state.db first (%w); nothing was changed", h.Opts.Command, err))
	}
	return db, nil
}

// restoredDigest is the digest the backup's manifest gives rel.
func restoredDigest(src, rel string) *journal.Digest {
	m, err := ReadManifest(src)
	if err != nil {
		return nil
	}
	return savedDigest(m, rel)
}

// fingerprint identifies the file at path, nil when there is none.
func fingerprint(path string) *journal.Fingerprint {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	fp := &journal.Fingerprint{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	if _, ino, ok := sessionsjson.FileID(fi); ok {
		fp.Inode = ino
	}
	return fp
}

// stage copies each file to put beside its target (synced; with the target's mode and owner,
// likeTarget) and checks the copy against the manifest; it returns the staged paths by
// relative path.
func stage(h sessionsjson.Home, src string, m *Manifest, actions []fileAction) (map[string]string, error) {
	staged := map[string]string{}
	for _, a := range actions {
		if a.remove {
			continue
		}
		target := filepath.Join(h.Dir, filepath.FromSlash(a.rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return staged, err
		}
		tmp := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+stagedSuffix)
		_ = os.Remove(tmp) // a leftover of a killed restore
		d, err := copyFile(filepath.Join(src, filepath.FromSlash(a.rel)), tmp)
		staged[a.rel] = tmp
		if err == nil {
			err = likeTarget(tmp, target)
		}
		if err != nil {
			return staged, err
		}
		if want := restoredDigest(src, a.rel); want == nil || d.SHA256 != want.SHA256 || d.Size != want.Size {
			return staged, fmt.Errorf("%s changed in the backup while it was copied", a.rel)
		}
	}
	return staged, nil
}

// likeTarget gives the staged copy tmp the mode and owner of the file it replaces, as every
// rewrite of a home's file does (sessionsjson.WriteFileAtomic): a gateway running as the home's
// owner must still open what a restore (by root) or its undo put there. A target that does not
// exist leaves the copy as copyFile made it (mode 0600, this user's).
func likeTarget(tmp, target string) error {
	fi, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp, fi.Mode().Perm()); err != nil { // by path: Windows needs no write handle
		return err
	}
	f, err := os.Open(tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	return sessionsjson.KeepOwner(f, fi)
}

// unstage removes staged copies.
func unstage(staged map[string]string) {
	for _, p := range staged {
		_ = os.Remove(p)
	}
}

// discard removes a journal and its stash when nothing was changed.
func discard(path, saved string) {
	_ = os.Remove(path)
	_ = os.RemoveAll(saved)
}

// rename moves the old database's sidecars into the stash (Saved/stale), then renames each
// staged file over its target (state.db first) and removes the files to remove (saved
// already), then syncs the directories. changed reports whether the home was changed.
func rename(h sessionsjson.Home, j *journal.Journal, staged map[string]string, actions []fileAction) (changed bool, err error) {
	if touchesDB(actions) {
		if changed, err = moveSidecars(h, j); err != nil {
			return changed, err
		}
	}
	dirs := map[string]bool{}
	for _, a := range ordered(actions) {
		target := filepath.Join(h.Dir, filepath.FromSlash(a.rel))
		dirs[filepath.Dir(target)] = true
		if a.remove {
			err = os.Remove(target)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else {
			err = os.Rename(staged[a.rel], target)
		}
		if err != nil {
			return changed, err
		}
		changed = true
		if a.rel == relStateDB {
			sessionsjson.FaultPoint(FaultRestoreSwapped)
		}
	}
	return changed, journal.SyncDirs(sortedKeys(dirs)...)
}

// touchesDB reports whether actions put or remove state.db.
func touchesDB(actions []fileAction) bool {
	for _, a := range actions {
		if a.rel == relStateDB {
			return true
		}
	}
	return false
}

// ordered puts state.db first.
func ordered(actions []fileAction) []fileAction {
	out := make([]fileAction, 0, len(actions))
	for _, a := range actions {
		if a.rel == relStateDB {
			out = append(out, a)
		}
	}
	for _, a := range actions {
		if a.rel != relStateDB {
			out = append(out, a)
		}
	}
	return out
}

// moveSidecars moves the replaced database's -wal, -shm and -journal into Saved/stale/ and
// records them in the journal's Stale (the journal is rewritten first, so that it names them
// before they move).
func moveSidecars(h sessionsjson.Home, j *journal.Journal) (bool, error) {
	var present []string
	for _, s := range sidecars {
		if _, err := os.Lstat(h.StateDB() + s); err == nil {
			present = append(present, "state.db"+s)
		}
	}
	if len(present) == 0 {
		return false, nil
	}
	j.Swap.Stale = present
	if err := journal.Write(journalPathOf(j), j); err != nil {
		return false, err
	}
	moved := false
	for _, name := range present {
		if err := journal.MoveFile(filepath.Join(h.Dir, name), filepath.Join(j.Swap.Saved, "stale", name)); err != nil {
			return moved, err
		}
		moved = true
	}
	return moved, journal.SyncDirs(h.Dir, filepath.Join(j.Swap.Saved, "stale"))
}

// journalPathOf is the journal whose stash is j's Saved directory.
func journalPathOf(j *journal.Journal) string {
	return strings.TrimSuffix(j.Swap.Saved, ".files") + ".json"
}

// staleFindings notes the sidecars of the replaced database that were moved aside.
func staleFindings(stale []string) []check.Finding {
	var out []check.Finding
	for _, s := range stale {
		out = append(out, check.Finding{Check: check.RestoreStale, Severity: check.Info, Subject: s,
			Message: "the replaced database's " + s + " was moved into the journal's stash (stale/), so that SQLite never applies it to the restored file; the saved state.db there already holds its content"})
	}
	return out
}
