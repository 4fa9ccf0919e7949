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

// TestOrphanRowStores: a row store is an orphan when no journal names it — neither the
// journal beside it nor any other (an undo's journal names the store it undoes); symbolic
// links and a missing journal directory give none.
func TestOrphanRowStores(t *testing.T) {
	home := sessionsjson.Home{Dir: t.TempDir()}
	if got, err := OrphanRowStores(home); err != nil || got != nil {
		t.Fatalf("no journal directory: %v, %v", got, err)
	}
	dir := home.JournalDir()
	store := func(name string) string {
		path := filepath.Join(dir, name+".rows.db")
		if _, err := CreateRowStore(home, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	journalOf := func(name, rowStore string) {
		j := &Journal{Command: "prune", Home: home.Dir}
		if rowStore != "" {
			j.RowStore, j.RowStoreOp = rowStore, RowStoreDeleted
		}
		if err := Write(filepath.Join(dir, name+".json"), j); err != nil {
			t.Fatal(err)
		}
	}
	journalOf("a-prune", store("a-prune")) // named by its own journal
	undone := store("b-prune")             // its journal deleted, an undo's names it
	journalOf("c-undo", undone)            // (an undo journal has no store of its own)
	orphan := store("d-prune")             // a prune killed before its journal
	other := store("e-prune")              // beside a journal that names none
	journalOf("e-prune", "")               // (the sibling is taken as naming it)
	if err := os.WriteFile(filepath.Join(dir, "f.json"), []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(orphan, filepath.Join(dir, "g-prune.rows.db")); err != nil {
		t.Fatal(err)
	}
	got, err := OrphanRowStores(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != orphan {
		t.Errorf("orphans %v, want [%s] (%s beside its journal)", got, orphan, other)
	}
}

// TestDiscardAttempt: the journal an earlier attempt of a retried batch wrote is removed
// before its row store is replaced, so that no journal names a store being rewritten; no
// journal there is fine, and a directory in its place is an error.
func TestDiscardAttempt(t *testing.T) {
	home := sessionsjson.Home{Dir: t.TempDir()}
	jpath := NewPath(home.JournalDir(), "prune")
	store := RowStorePath(jpath)
	if _, err := CreateRowStore(home, store); err != nil {
		t.Fatal(err)
	}
	if err := Write(jpath, &Journal{Command: "prune", Home: home.Dir, RowStore: store, RowStoreOp: RowStoreDeleted}); err != nil {
		t.Fatal(err)
	}
	if err := DiscardAttempt(jpath); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(jpath); !os.IsNotExist(err) {
		t.Errorf("the earlier attempt's journal is still there: %v", err)
	}
	if stores, err := OrphanRowStores(home); err != nil || len(stores) != 1 || stores[0] != store {
		t.Errorf("orphan row stores %v (%v), want the earlier attempt's %s", stores, err, store)
	}
	if err := DiscardAttempt(jpath); err != nil {
		t.Errorf("no journal to discard: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(jpath, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := DiscardAttempt(jpath); err == nil {
		t.Error("a non-empty directory at the journal's path: no error")
	}
}

// TestCreateRowStoreSyncsEachDirOnce: the directories a new row store needs synced are the
// journal directory and, when the journal directory was just made, the ones its creation
// changed, each once (a batch syncs them under state.db's write lock: a directory listed twice
// is a second fsync for nothing).
func TestCreateRowStoreSyncsEachDirOnce(t *testing.T) {
	home := sessionsjson.Home{Dir: t.TempDir()}
	dir := home.JournalDir()
	first, err := CreateRowStore(home, RowStorePath(NewPath(dir, "prune")))
	if err != nil {
		t.Fatal(err)
	}
	if len(first) == 0 || first[0] != dir {
		t.Fatalf("a new journal directory: %q, want %s first", first, dir)
	}
	seen := map[string]bool{}
	for _, d := range first {
		if seen[d] {
			t.Errorf("%s listed twice in %q", d, first)
		}
		seen[d] = true
	}
	again, err := CreateRowStore(home, RowStorePath(NewPath(dir, "prune")))
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || again[0] != dir {
		t.Errorf("an existing journal directory: %q, want only %s", again, dir)
	}
}
