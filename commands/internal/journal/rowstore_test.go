package journal

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestRowStorePaths: a journal's row store is accepted only as a regular <name>.rows.db
// directly in the home's journal directory with a known op, and written as version 3.
func TestRowStorePaths(t *testing.T) {
	home := sessionsjson.Home{Dir: t.TempDir()}
	jpath := NewPath(home.JournalDir(), "prune")
	store := RowStorePath(jpath)
	if _, err := CreateRowStore(home, store); err != nil {
		t.Fatal(err)
	}
	j := &Journal{Command: "prune", Home: home.Dir, RowStore: store, RowStoreOp: RowStoreDeleted}
	if err := Write(jpath, j); err != nil {
		t.Fatal(err)
	}
	read, err := Read(jpath)
	if err != nil || read.Version != versionRowStore || read.RowStore != store {
		t.Fatalf("read back: %+v, %v", read, err)
	}
	if err := read.CheckPaths(home); err != nil {
		t.Errorf("a journal's own row store refused: %v", err)
	}
	if inv := read.Inverse(); inv.RowStore != store || inv.RowStoreOp != RowStoreRestored {
		t.Errorf("inverse: %q %q", inv.RowStore, inv.RowStoreOp)
	}
	link := filepath.Join(home.JournalDir(), "x.rows.db")
	if err := os.Symlink(store, link); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]*Journal{
		"outside the journal dir": {RowStore: filepath.Join(home.Dir, "x.rows.db"), RowStoreOp: RowStoreDeleted},
		"not a row store":         {RowStore: jpath, RowStoreOp: RowStoreDeleted},
		"a symbolic link":         {RowStore: link, RowStoreOp: RowStoreDeleted},
		"unknown op":              {RowStore: store, RowStoreOp: "moved"},
		"op without a store":      {RowStoreOp: RowStoreDeleted},
		"missing":                 {RowStore: filepath.Join(home.JournalDir(), "gone.rows.db"), RowStoreOp: RowStoreDeleted},
	} {
		if err := bad.CheckPaths(home); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := RemoveRowStore(store); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(store); !os.IsNotExist(err) {
		t.Errorf("row store still there: %v", err)
	}
}
