package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// rowStoreSuffix ends the name of a journal's row store.
const rowStoreSuffix = ".rows.db"

// RowStorePath is where the journal at journalPath keeps its row store: <journal>.rows.db.
func RowStorePath(journalPath string) string {
	return strings.TrimSuffix(journalPath, ".json") + rowStoreSuffix
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
	return append(dirs, filepath.Dir(path)), f.Close()
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
