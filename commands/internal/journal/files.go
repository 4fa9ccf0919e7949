package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// MoveFile moves from to to (creating to's directory, mode 0700): a rename, or, when the two
// are on different filesystems, a copy that is synced (file and directory) before from is
// removed. An existing to is never replaced. After renames the caller syncs both
// directories once (SyncDirs): a rename cannot lose the file, only be rolled back.
func MoveFile(from, to string) error {
	if err := mkdirAllOwned(filepath.Dir(to)); err != nil {
		return err
	}
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("move %s: %s already exists", from, to)
	}
	err := os.Rename(from, to)
	if !sessionsjson.CrossDevice(err) {
		return err
	}
	if err := copyFileSynced(from, to); err != nil {
		return err
	}
	if err := sessionsjson.SyncDir(filepath.Dir(to)); err != nil {
		return err
	}
	return os.Remove(from)
}

// copyFileSynced copies from to a new file to (never an existing one) with from's mode and
// owner, and syncs it; a copy it created and could not finish is removed.
func copyFileSynced(from, to string) error {
	src, err := sessionsjson.OpenRegularFile(from)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = dst.Chmod(st.Mode().Perm())
	if err == nil {
		err = sessionsjson.KeepOwner(dst, st)
	}
	if err == nil {
		_, err = io.Copy(dst, src)
	}
	if err == nil {
		err = sessionsjson.Fsync(dst)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(to)
	}
	return err
}

// SyncDirs fsyncs each directory, reporting the first failure.
func SyncDirs(dirs ...string) error {
	for _, d := range dirs {
		if err := sessionsjson.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// StashImages records that each file will be moved into dir.
func StashImages(paths []string, dir string) []FileImage {
	out := make([]FileImage, len(paths))
	for i, p := range paths {
		out[i] = FileImage{Path: p, BeforeStash: filepath.Join(dir, filepath.Base(p))}
	}
	return out
}

// Stash moves each file into its stash, then syncs the directories once. The stash
// directory is created here, so it holds nothing else, and the names come from one directory:
// each move is one rename. MoveFile (which checks for an existing target, and copies across
// filesystems) takes over when the directory existed already or a rename fails. A file that
// cannot be moved stays where it was, with a warning (undo then leaves it alone).
func Stash(files []FileImage, warn func(string, ...any)) {
	if len(files) == 0 {
		return
	}
	stash := filepath.Dir(files[0].BeforeStash)
	fresh := os.Mkdir(stash, 0o700) == nil // in the journal's directory, which Write made
	if fresh {
		if err := sessionsjson.OwnLikeParent(stash); err != nil {
			warn("stash: %v", err)
		}
	}
	if fi, err := os.Lstat(stash); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("%s is %s, not a directory", stash, sessionsjson.FileKind(fi.Mode()))
		}
		warn("stash: %v: the files stay where they were", err)
		return
	}
	mover := openDirMover(filepath.Dir(files[0].Path), stash)
	defer mover.close()
	for _, f := range files {
		err := fs.ErrExist
		if fresh {
			err = mover.move(f.Path, f.BeforeStash)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			err = MoveFile(f.Path, f.BeforeStash)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			warn("%v: the file stays where it was", err)
		}
	}
	err := SyncDirs(filepath.Dir(files[0].BeforeStash), filepath.Dir(files[0].Path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no stash directory: nothing moved
		warn("%v", err)
	}
}

// SettleStashes drops the file records whose move did not happen or has already happened: a
// transcript that stayed in place (its move failed, or the process stopped right after the
// commit) is not restored from a stash that never got it, and one already in its stash is
// not moved again. A move across filesystems that copied but could not remove its source
// leaves the same file in both places: its record is dropped, and the copy in the stash is
// returned among duplicates for the caller to remove when it writes. A file found in neither
// place is reported and skipped, so the rows can still be restored.
func (j *Journal) SettleStashes(warn func(string, ...any)) (duplicates []string) {
	kept := j.Files[:0]
	for _, f := range j.Files {
		switch {
		case f.AfterStash != "" && sameFile(f.Path, f.AfterStash):
			duplicates = append(duplicates, f.AfterStash)
		case f.AfterStash != "" && !exists(f.AfterStash):
			if !exists(f.Path) {
				warn("%s is neither in place nor in the journal's stash (%s): not restored", f.Path, f.AfterStash)
			}
		case f.BeforeStash != "" && !exists(f.Path) && exists(f.BeforeStash):
		default:
			kept = append(kept, f)
		}
	}
	j.Files = kept
	return duplicates
}

// sameFile reports whether a and b are both regular files with the same content.
func sameFile(a, b string) bool {
	da, err := sessionsjson.ReadRegularFile(a, MaxBytes)
	if err != nil {
		return false
	}
	db, err := sessionsjson.ReadRegularFile(b, MaxBytes)
	return err == nil && bytes.Equal(da, db)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// CheckPaths refuses a journal naming a file sessionctl never journals. Undo writes, moves
// and removes exactly the paths a journal names, so an edited or damaged one must reach
// nothing else: the home's .restart_failure_counts, or a transcript directly in the sessions
// directory (never sessions.json). A transcript is moved to or from a file of the same name
// directly in a <journal>.files directory of the home's journal directory (journals written
// before those stashes hold its content instead). A path that is not clean and absolute, or
// that is a symbolic link, is refused too.
func (j *Journal) CheckPaths(home sessionsjson.Home) error {
	for _, dir := range []string{home.ToolDir(), home.JournalDir()} {
		if err := refuseSymlink(dir); err != nil {
			return err
		}
	}
	for _, f := range j.Files {
		if err := checkFile(home, f); err != nil {
			return err
		}
	}
	return j.checkRowStore(home)
}

func checkFile(home sessionsjson.Home, f FileImage) error {
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
		if err := refuseSymlink(filepath.Dir(stash)); err != nil {
			return err
		}
	}
	return refuseSymlink(f.Path)
}

// ForHome makes j a journal of home when it was written for the same directory under another
// name (home, or the journal's home, reached through a symbolic link): the two names are
// compared resolved, and j.Home and every file path below it are rewritten to home.Dir, so
// that the path checks and the restore see the paths of the home in use. A journal of
// another home is an error.
func (j *Journal) ForHome(home sessionsjson.Home) error {
	if j.Home == home.Dir {
		return nil
	}
	mine, err1 := filepath.EvalSymlinks(j.Home)
	theirs, err2 := filepath.EvalSymlinks(home.Dir)
	if err1 != nil || err2 != nil || mine != theirs || !isCleanAbs(j.Home) {
		return fmt.Errorf("journal belongs to home %s, not %s", j.Home, home.Dir)
	}
	rebase := func(p string) string {
		if rel, ok := strings.CutPrefix(p, j.Home+string(filepath.Separator)); ok && p != "" && isCleanAbs(p) {
			return filepath.Join(home.Dir, rel)
		}
		return p // not below the journal's home: CheckPaths refuses it
	}
	for i := range j.Files {
		f := &j.Files[i]
		f.Path = rebase(f.Path)
		if f.BeforeStash != "" {
			f.BeforeStash = rebase(f.BeforeStash)
		}
		if f.AfterStash != "" {
			f.AfterStash = rebase(f.AfterStash)
		}
	}
	if j.RowStore != "" {
		j.RowStore = rebase(j.RowStore)
	}
	if j.Swap != nil {
		j.Swap.Saved, j.Swap.Backup = rebase(j.Swap.Saved), rebase(j.Swap.Backup)
	}
	j.Home = home.Dir
	return nil
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

// mkdirAllOwned creates dir and its missing parents (mode 0700), each given its parent's
// owner (sessionsjson.OwnLikeParent: a stash made by root stays the home owner's).
func mkdirAllOwned(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := sessionsjson.OwnLikeParent(missing[i]); err != nil {
			return err
		}
	}
	return nil
}
