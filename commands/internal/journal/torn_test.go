package journal

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestTorn (issue 31): a journal cut at any byte, or left empty or as zeros, reads as torn
// (ErrTorn), and ReadOrTorn returns it marked with the home and command its path names; a
// whole journal is not torn, and neither is a file that is not a prefix of a journal
// (another file's bytes, garbage, or a complete object of an unknown version).
func TestTorn(t *testing.T) {
	h := sessionsjson.Home{Dir: t.TempDir()}
	path := filepath.Join(h.JournalDir(), "20260716T093000.000000000Z-suspend.json")
	j := &Journal{Command: "suspend", Home: h.Dir, Routing: []EntryImage{{Store: "sessions.json", Key: "k", Before: []byte(`{"a": 1}`), After: []byte(`{"a": 2}`)}}}
	if err := Write(path, j); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(h.JournalDir(), ".journal_*.tmp")); len(left) > 0 {
		t.Fatalf("Write left its temporary file: %v", left)
	}
	if torn(whole) || !endsComplete(path) {
		t.Fatal("a whole journal reads as torn")
	}
	for n := 0; n < len(whole)-1; n++ {
		if !torn(whole[:n]) {
			t.Fatalf("cut at byte %d of %d: not torn: %q", n, len(whole), whole[:n])
		}
	}
	if !torn(make([]byte, 4096)) {
		t.Error("zeros: not torn")
	}
	for _, data := range []string{`[1, 2`, "garbage", `{"version": 99}`, `{"other": 1`} {
		if torn([]byte(data)) {
			t.Errorf("%q reads as torn", data)
		}
	}

	if err := os.WriteFile(path, whole[:len(whole)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); !errors.Is(err, ErrTorn) {
		t.Fatalf("Read of a torn journal: %v, want ErrTorn", err)
	}
	got, err := ReadOrTorn(path)
	if err != nil || !got.Torn || got.Home != h.Dir || got.Command != "suspend" {
		t.Fatalf("ReadOrTorn: %+v, %v", got, err)
	}
	if torn := TornJournals(h); len(torn) != 1 || torn[0] != path {
		t.Fatalf("TornJournals: %v", torn)
	}
	elsewhere := filepath.Join(t.TempDir(), filepath.Base(path)) // not in a home's journal directory
	if err := os.WriteFile(elsewhere, whole[:10], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOrTorn(elsewhere); !errors.Is(err, ErrTorn) {
		t.Fatalf("ReadOrTorn outside a journal directory: %v, want the ErrTorn error", err)
	}
}

// TestSettle (issue 31): under the lock, Settle moves a torn journal aside (kept, as
// <name>.torn), removes the journal temporary files and the temp files in sessions/ a journal
// proves sessionctl's, and touches neither the runtime's temp files nor one of sessionctl's
// name that no journal proves.
func TestSettle(t *testing.T) {
	h := sessionsjson.Home{Dir: t.TempDir()}
	mustMkdirAll(t, h.SessionsDir())
	// sessions.json a symbolic link: its rewrite's temporary file goes to the target's directory
	elsewhere := t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "real.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "real.json"), h.SessionsJSON()); err != nil {
		t.Fatal(err)
	}
	proven := filepath.Join(h.JournalDir(), "20260716T093000.000000000Z-suspend.json")
	j := &Journal{Command: "suspend", Home: h.Dir, Temps: Temps(h, proven)}
	if err := Write(proven, j); err != nil {
		t.Fatal(err)
	}
	tornPath := filepath.Join(h.JournalDir(), "20260716T093100.000000000Z-resume-mark.json")
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(tornPath, "{\n  \"version\": 1,\n  \"comm")
	journalTemp := TempPath(filepath.Join(h.JournalDir(), "20260716T093200.000000000Z-suspend.json"))
	write(journalTemp, "{")
	name := strings.Replace(TempPattern(proven), "*", "123", 1)
	ours := filepath.Join(h.SessionsDir(), name)
	oursCounts := filepath.Join(h.Dir, name)     // the counts file's (issue 31)
	oursLinked := filepath.Join(elsewhere, name) // the symbolic link's target directory's
	unproven := filepath.Join(h.SessionsDir(), ".sessionctl-20260716T093300.000000000Z-suspend-9.tmp")
	runtimes := filepath.Join(h.SessionsDir(), ".sessions_abc.tmp")
	runtimeCounts := filepath.Join(h.Dir, ".restart_failure_counts_abc.tmp")
	for _, p := range []string{ours, oursCounts, oursLinked, unproven, runtimes, runtimeCounts} {
		write(p, "{}")
	}
	want := []string{ours, oursCounts, oursLinked}
	if temps, _ := OwnTemps(h); !slices.Equal(temps, want) {
		t.Fatalf("OwnTemps: %v, want only %v", temps, want)
	}
	var warned []string
	Settle(h, func(f string, a ...any) { warned = append(warned, f) })
	for _, gone := range []string{tornPath, journalTemp, ours, oursCounts, oursLinked} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	for _, kept := range []string{proven, strings.TrimSuffix(tornPath, ".json") + ".torn", unproven, runtimes, runtimeCounts} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}
	if len(warned) != 4 {
		t.Errorf("warnings %q: want one for the torn journal and one for each temp file", warned)
	}
}

// TestSettleRowStores (issue 31, item 1): under the lock, Settle removes a row store no
// journal names, with the SQLite rollback journal a prune killed while it wrote the store
// leaves beside it, the store of a torn journal (moved aside: its change never started) and
// a restore's saved copy never put in place (.tmp-backup-*); it keeps a store a journal names
// and the journal's stash.
func TestSettleRowStores(t *testing.T) {
	h := sessionsjson.Home{Dir: t.TempDir()}
	mustMkdirAll(t, h.SessionsDir())
	named := filepath.Join(h.JournalDir(), "20260716T093000.000000000Z-prune.json")
	if err := Write(named, &Journal{Command: "prune", Home: h.Dir, RowStore: RowStorePath(named), RowStoreOp: RowStoreDeleted}); err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(h.JournalDir(), "20260716T093100.000000000Z-prune.json")
	unnamed := RowStorePath(filepath.Join(h.JournalDir(), "20260716T093200.000000000Z-prune.json"))
	saved := filepath.Join(h.JournalDir(), SavedTemp+"123")
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(torn, "{\n  \"version\": 3,\n  \"row_st")
	for _, p := range []string{RowStorePath(named), RowStorePath(torn), unnamed, unnamed + "-journal"} {
		write(p, "rows")
	}
	mustMkdirAll(t, filepath.Join(saved, "sessions"))
	write(filepath.Join(saved, "state.db"), "db")
	mustMkdirAll(t, StashDir(named))
	if orphans, err := OrphanStashes(h, nil); err != nil || !slices.Equal(orphans, []string{saved}) {
		t.Errorf("OrphanStashes (check's journal.orphan-stash): %v (%v), want %s", orphans, err, saved)
	}
	var warned []string
	Settle(h, func(f string, a ...any) { warned = append(warned, f) })
	for _, gone := range []string{torn, RowStorePath(torn), unnamed, unnamed + "-journal", saved} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	for _, kept := range []string{named, RowStorePath(named), StashDir(named), strings.TrimSuffix(torn, ".json") + ".torn"} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}
	if len(warned) != 4 {
		t.Errorf("warnings %q: want one for the torn journal, each row store and the saved copy", warned)
	}
}
