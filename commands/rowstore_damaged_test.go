package commands

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUndoDamagedRowStore (issue 31, item 1b): the undo of a prune whose row store is damaged
// — not a database, cut short, a page zeroed, a table its list names dropped — exits 4 with what to do, and
// changes nothing: not a row, not a transcript in the stash, no undo journal.
func TestUndoDamagedRowStore(t *testing.T) {
	t.Parallel()
	damage := map[string]func(t *testing.T, store string){
		"not a database": func(t *testing.T, store string) {
			fi, err := os.Stat(store)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(store, []byte(strings.Repeat("x", int(fi.Size()))), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"cut short": func(t *testing.T, store string) {
			fi, err := os.Stat(store)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(store, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		},
		"its last page zeroed": func(t *testing.T, store string) {
			f, err := os.OpenFile(store, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil || fi.Size() < 3*4096 {
				t.Fatalf("row store of %d bytes (%v): too small to damage one page", fi.Size(), err)
			}
			if _, err := f.WriteAt(make([]byte, 4096), fi.Size()-4096); err != nil {
				t.Fatal(err)
			}
		},
		"a table dropped": func(t *testing.T, store string) {
			db, err := sql.Open("sqlite", store)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("DROP TABLE messages"); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, fn := range damage {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := fixtureHome(t, genR0817)
			if code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "prune", "--older-than", "7d", "--apply"); code != ExitOK {
				t.Fatalf("prune: exit %d\n%s\n%s", code, stdout, stderr)
			}
			js := journals(t, home)
			if len(js) != 1 {
				t.Fatalf("journals %v, want one", js)
			}
			store := strings.TrimSuffix(js[0], ".json") + ".rows.db"
			fn(t, store)
			rows, files := dumpHygiene(t, home, false), plainFiles(t, home)
			entries := journalDirNames(t, home)
			for _, args := range [][]string{{"undo", js[0], "--apply"}, {"undo", "--last", "--apply"}, {"undo", js[0]}} {
				code, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
				if code != ExitData || !strings.Contains(stderr, "row store cannot be read") || !strings.Contains(stderr, "nothing was changed") {
					t.Errorf("%v: exit %d, want %d saying the row store cannot be read\n%s\n%s", args, code, ExitData, stdout, stderr)
				}
			}
			compareDump(t, dumpHygiene(t, home, false), rows)
			comparePlainFiles(t, plainFiles(t, home), files)
			if got := journalDirNames(t, home); !slices.Equal(got, entries) {
				t.Errorf("the journal directory changed: %v, was %v", got, entries)
			}
		})
	}
}

// journalDirNames lists the names in the home's journal directory and its stashes.
func journalDirNames(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	dir := filepath.Join(home, "sessionctl", "journal")
	err := filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err == nil {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUndoRestoreDamagedManifest (issue 31, item 1c): the undo of a restore whose saved copy
// of the files it replaced has a manifest cut short (or a file of it damaged) exits 4 and
// changes nothing.
func TestUndoRestoreDamagedManifest(t *testing.T) {
	t.Parallel()
	for _, what := range []string{"manifest.json", "state.db"} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			home := fixtureHome(t, genDB)
			to := t.TempDir()
			if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "backup", "--to", to); code != ExitOK {
				t.Fatalf("backup: exit %d: %s", code, stderr)
			}
			if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "prune-ghosts", "--apply"); code != ExitOK {
				t.Fatalf("prune-ghosts: exit %d: %s", code, stderr)
			}
			if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "restore", filepath.Join(to, "20260716T093000Z"), "--apply"); code != ExitOK {
				t.Fatalf("restore: exit %d: %s", code, stderr)
			}
			js := journals(t, home)
			restore := js[len(js)-1]
			if !strings.HasSuffix(restore, "-restore.json") {
				t.Fatalf("journals %v: the newest is not the restore's", js)
			}
			damaged := filepath.Join(strings.TrimSuffix(restore, ".json")+".files", what)
			fi, err := os.Stat(damaged)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(damaged, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
			dump, files, entries := dumpHome(t, home), plainFiles(t, home), journalDirNames(t, home)
			code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", restore, "--apply")
			if code != ExitData || !strings.Contains(stderr, "saved backup") {
				t.Errorf("undo: exit %d, want %d naming the saved backup\n%s\n%s", code, ExitData, stdout, stderr)
			}
			compareDump(t, dumpHome(t, home), dump)
			comparePlainFiles(t, plainFiles(t, home), files)
			if got := journalDirNames(t, home); !slices.Equal(got, entries) {
				t.Errorf("the journal directory changed: %v, was %v", got, entries)
			}
		})
	}
}
