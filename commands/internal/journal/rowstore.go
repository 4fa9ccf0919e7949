package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// rowStoreSuffix ends the name of a journal's row store.
const rowStoreSuffix = ".rows.db"

// RowStorePath is where the journal at journalPath keeps its row store: <journal>.rows.db.
func RowStorePath(journalPath string) string {
	return strings.TrimSuffix(journalPath, ".json") + rowStoreSuffix
}

// RowStoreIn is the row store the journal j names, as the file of that name in the journal
// directory dir ("" when j names none, or names a file that is no row store): undo reads a
// store only there (checkRowStore), and the home's path may spell dir otherwise than it did
// when j was written (a symbolic link).
func RowStoreIn(dir string, j *Journal) string {
	if j == nil || !strings.HasSuffix(j.RowStore, rowStoreSuffix) {
		return ""
	}
	return filepath.Join(dir, filepath.Base(j.RowStore))
}

// CreateRowStore makes an empty row store file at path (0600, without following a symbolic
// link, in the home's journal directory, which it creates like Write). A regular file there
// (an earlier attempt of the same write) is replaced; anything else is refused. It returns
// the directories to sync once the store is written.
func CreateRowStore(home sessionsjson.Home, path string) ([]string, error) {
	dirs, err := sessionsjson.MakeToolDir(home, filepath.Dir(path))
	if err != nil {
		return nil, refusal(fmt.Errorf("create journal dir: %w", err))
	}
	if err := RemoveRowStore(path); err != nil {
		return nil, refusal(err)
	}
	f, err := sessionsjson.OpenToolFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, refusal(fmt.Errorf("create row store: %w", err))
	}
	return dirs, f.Close() // dirs holds the journal directory itself (MakeToolDir)
}

// DiscardAttempt removes, durably, the journal an earlier attempt of the same write left at
// path (none is fine): a busy transaction is run again from the start, and the journal its
// earlier attempt wrote names the row store the next attempt replaces (CreateRowStore), so
// it goes first. A crash then leaves at most a row store no journal names (space, which
// OrphanRowStores finds), never a journal naming a store that is missing or half written.
func DiscardAttempt(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove the journal of an earlier attempt: %w", err)
	}
	return SyncDirs(filepath.Dir(path))
}

// RemoveRowStore removes a row store and its rollback journal; a missing one is fine, a
// symbolic link or anything but a regular file is refused.
func RemoveRowStore(path string) error {
	for _, p := range []string{path + "-journal", path} {
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return err
		case !fi.Mode().IsRegular():
			return fmt.Errorf("%s is %s: %w", p, sessionsjson.FileKind(fi.Mode()), sessionsjson.ErrUnsafeToolPath)
		}
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

// checkRowStore refuses a row store path sessionctl never writes: it must be a clean
// absolute <name>.rows.db directly in the home's journal directory, a regular file (not a
// symbolic link), and RowStoreOp one of the two known.
func (j *Journal) checkRowStore(home sessionsjson.Home) error {
	if j.RowStore == "" {
		if j.RowStoreOp != "" {
			return fmt.Errorf("row_store_op %q without a row store", j.RowStoreOp)
		}
		return nil
	}
	if j.RowStoreOp != RowStoreDeleted && j.RowStoreOp != RowStoreRestored {
		return fmt.Errorf("unknown row_store_op %q", j.RowStoreOp)
	}
	if !isCleanAbs(j.RowStore) || filepath.Dir(j.RowStore) != home.JournalDir() || !strings.HasSuffix(j.RowStore, rowStoreSuffix) {
		return fmt.Errorf("names a row store sessionctl never writes: %q", j.RowStore)
	}
	fi, err := os.Lstat(j.RowStore)
	if err != nil {
		return fmt.Errorf("row store: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("row store %s is %s", j.RowStore, sessionsjson.FileKind(fi.Mode()))
	}
	return nil
}

// OrphanRowStores lists the row stores in the home's journal directory that no journal names:
// what a prune stopped between committing a batch's row store and writing its journal leaves
// behind (docs/decisions.md "Row stores"). Nothing in the home changed with them: the rows
// they copy are still in state.db. A store is named by the journal beside it
// (<name>.json, which is the one its prune writes) or by any other journal (an undo's names
// the store of the journal it undoes). Only regular files directly in the journal directory
// are considered and nothing is followed; a journal directory that does not exist, or is
// not a directory, has none.
func OrphanRowStores(home sessionsjson.Home) ([]string, error) {
	dir, entries, err := journalEntries(home)
	if err != nil || entries == nil {
		return nil, err
	}
	regular := map[string]bool{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			regular[e.Name()] = true
		}
	}
	var unnamed []string
	for _, e := range entries { // in name order
		stem, ok := strings.CutSuffix(e.Name(), rowStoreSuffix)
		if ok && regular[e.Name()] && !regular[stem+".json"] {
			unnamed = append(unnamed, filepath.Join(dir, e.Name()))
		}
	}
	if len(unnamed) == 0 {
		return nil, nil
	}
	named, err := NamedRowStores(dir, regular)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(unnamed, func(p string) bool { return named[filepath.Base(p)] }), nil
}

// settleRowStores removes, under sessionctl's lock, the row stores no journal names (and
// their SQLite rollback journals: a prune killed while it wrote its store leaves one).
func settleRowStores(home sessionsjson.Home, warn func(string, ...any)) {
	stores, err := OrphanRowStores(home)
	if err != nil {
		warn("cannot look for row stores no journal names: %v", err)
		return
	}
	for _, s := range stores {
		if err := RemoveRowStore(s); err != nil {
			warn("row store %s, which no journal names: not removed: %v", s, err)
			continue
		}
		warn("removed %s: a row store no journal names (a prune stopped after copying a batch's rows and before writing its journal); nothing in the home changed, the rows are still in state.db", s)
	}
	if len(stores) > 0 {
		_ = SyncDirs(home.JournalDir())
	}
}

// journalEntries lists the home's journal directory (nil when it, or the tool directory, is
// missing or not a real directory: nothing is followed).
func journalEntries(home sessionsjson.Home) (string, []os.DirEntry, error) {
	dir := home.JournalDir()
	for _, d := range []string{home.ToolDir(), dir} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return dir, nil, nil
		}
	}
	entries, err := os.ReadDir(dir)
	return dir, entries, err
}

// NamedRowStores reads the row store each journal among names (the regular files of dir)
// names, by its file name: a journal's store is in the journal directory (undo refuses any
// other), which the home's path may spell otherwise than it did then (a symbolic link). Only
// the row_store member is decoded, so a journal that does not read as a whole still counts.
func NamedRowStores(dir string, names map[string]bool) (map[string]bool, error) {
	named := map[string]bool{}
	for name := range names {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		store, err := rowStoreOf(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if store != "" {
			named[filepath.Base(store)] = true
		}
	}
	return named, nil
}

// rowStoreOf reads the row store a journal names ("" when none), decoding nothing else. A
// file that is not a journal names none.
func rowStoreOf(path string) (string, error) {
	f, err := sessionsjson.OpenRegularFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // removed meanwhile
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	var j struct {
		RowStore string `json:"row_store"`
	}
	if json.NewDecoder(f).Decode(&j) != nil {
		return "", nil
	}
	return j.RowStore, nil
}
