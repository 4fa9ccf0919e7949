package journalset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// testHome makes a home with a sessions directory and writes journals into it, oldest first:
// each is a command and, for an undo, the index of the journal it undoes (-1: none).
func testHome(t *testing.T, undoes ...int) (sessionsjson.Home, []string) {
	t.Helper()
	h := sessionsjson.Home{Dir: t.TempDir()}
	if err := os.Mkdir(h.SessionsDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i, u := range undoes {
		j := &journal.Journal{Command: "suspend", Home: h.Dir, Routing: []journal.EntryImage{{Store: "sessions.json", Key: "k",
			Before: json.RawMessage(`{"a":1}`), After: json.RawMessage(`{"a":2}`)}}}
		if u >= 0 {
			j.Command, j.Undoes = "undo", paths[u]
		}
		p := filepath.Join(h.JournalDir(), time.Date(2026, 7, 1+i, 0, 0, 0, 0, time.UTC).Format("20060102T150405.000000000Z")+"-"+j.Command+".json")
		if err := journal.Write(p, j); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return h, paths
}

// TestUndoneAndLast: an undo marks its journal undone unless it is undone itself; undo --last
// skips undo journals and undone ones.
func TestUndoneAndLast(t *testing.T) {
	cases := []struct {
		name   string
		undoes []int
		undone []bool
		last   int // -1: none left
	}{
		{"none undone", []int{-1, -1}, []bool{false, false}, 1},
		{"newest undone", []int{-1, -1, 1}, []bool{false, true, false}, 0},
		{"undo of an undo", []int{-1, 0, 1}, []bool{false, true, false}, 0},
		{"all undone", []int{-1, 0}, []bool{true, false}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, paths := testHome(t, c.undoes...)
			items, err := List(h)
			if err != nil || len(items) != len(paths) {
				t.Fatalf("List = %d items, %v", len(items), err)
			}
			for i, it := range items {
				if it.Undone != c.undone[i] || it.Changes != 1 || it.Bytes == 0 {
					t.Errorf("%s: undone %v changes %d bytes %d; want undone %v", filepath.Base(it.Path), it.Undone, it.Changes, it.Bytes, c.undone[i])
				}
			}
			last, err := Last(h)
			switch {
			case c.last < 0 && err == nil:
				t.Errorf("Last = %s, want none", last.Path)
			case c.last >= 0 && (err != nil || last.Path != paths[c.last]):
				t.Errorf("Last = %v, %v; want %s", last, err, paths[c.last])
			}
		})
	}
}

// TestPrune: the newest N stay, an unreadable journal stays, a removed one goes with its
// stash and row store; a plan removes nothing.
func TestPrune(t *testing.T) {
	h, paths := testHome(t, -1, -1, -1)
	stash := journal.StashDir(paths[0])
	if err := os.MkdirAll(stash, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stash, "x.jsonl"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(journal.RowStorePath(paths[0]), []byte("rows"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(h.JournalDir(), "20260601T000000.000000000Z-bad.json")
	if err := os.WriteFile(bad, []byte(`{"version": 99}`), 0o600); err != nil { // unreadable, not torn
		t.Fatal(err)
	}
	now := time.Now().Add(48 * time.Hour)
	out, p, err := Prune(context.Background(), home.Options{Home: h}, now, 86400, 1, false)
	if err != nil || len(p.Journals) != 2 || out.Applied || p.Kept != 2 {
		t.Fatalf("plan: %d journals, kept %d, applied %v, %v", len(p.Journals), p.Kept, out.Applied, err)
	}
	if _, err := os.Stat(paths[0]); err != nil {
		t.Fatal("a plan removed a journal")
	}
	out, _, err = Prune(context.Background(), home.Options{Home: h}, now, 86400, 1, true)
	if err != nil || !out.Applied || len(out.Changes) != 2 {
		t.Fatalf("apply: %v, %d changes, %v", out.Applied, len(out.Changes), err)
	}
	for _, gone := range []string{paths[0], paths[1], stash, journal.RowStorePath(paths[0])} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s still there", gone)
		}
	}
	for _, kept := range []string{paths[2], bad} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s removed", kept)
		}
	}
}

// TestPruneFinishesOrphanRowStore: a row store whose journal is gone (an earlier prune removed
// the journal, then could not remove the store) is planned for removal when it is older than
// the cutoff, and not when it is newer; applied, the journal prune's lock settles both (issue
// 31: under sessionctl's lock a row store no journal names is never needed, journal.Settle).
func TestPruneFinishesOrphanRowStore(t *testing.T) {
	h, paths := testHome(t, -1, -1, -1)
	old, young := journal.RowStorePath(paths[0]), journal.RowStorePath(paths[1])
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, []byte("rows"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range paths[:2] {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Add(48 * time.Hour)
	if err := os.Chtimes(young, now, now); err != nil {
		t.Fatal(err)
	}
	_, p, err := Prune(context.Background(), home.Options{Home: h}, now, 86400, 0, false)
	if err != nil || !slices.Contains(p.RowStores, old) || slices.Contains(p.RowStores, young) {
		t.Fatalf("row stores planned %v (%v); want %s, not %s", p.RowStores, err, old, young)
	}
	var warned []string
	o := home.Options{Home: h, Warn: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }}
	if _, _, err := Prune(context.Background(), o, now, 86400, 0, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{old, young} {
		if _, err := os.Lstat(s); err == nil {
			t.Errorf("%s still there", s)
		}
		if !slices.ContainsFunc(warned, func(w string) bool { return strings.Contains(w, "removed "+s) }) {
			t.Errorf("no warning of %s's removal: %q", s, warned)
		}
	}
}

// TestPruneFinishesOrphanStash: a stash directory whose journal is gone (a restore stopped
// before its journal, a prune that removed a journal and not its stash) and a journal
// rewrite's temporary file are removed by a prune when older than the cutoff; a stash another
// journal still mentions, one newer than the cutoff, and a directory not of a journal's name
// stay, and so does the newest journal (--keep 1).
func TestPruneFinishesOrphanStash(t *testing.T) {
	for _, keep := range []int{1, 0} {
		t.Run(fmt.Sprint("keep ", keep), func(t *testing.T) { pruneOrphanStash(t, keep) })
	}
}

// pruneOrphanStash runs TestPruneFinishesOrphanStash keeping the keep newest journals: with
// none kept, the journal that mentions a stash goes in the same prune, and the stash with it.
func pruneOrphanStash(t *testing.T, keep int) {
	h, paths := testHome(t, -1, -1, -1, 1)
	old, young, mentioned := journal.StashDir(paths[0]), journal.StashDir(paths[2]), journal.StashDir(paths[1])
	foreign, temp := filepath.Join(h.JournalDir(), "notes.files"), filepath.Join(h.JournalDir(), ".journal_123.tmp")
	for _, d := range []string{old, young, mentioned, foreign} {
		if err := os.MkdirAll(filepath.Join(d, "sessions"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "sessions", "t.jsonl"), []byte("transcript"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(temp, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	undo, err := journal.Read(paths[3]) // the undo of journal 1 takes the file back out of its stash
	if err != nil {
		t.Fatal(err)
	}
	undo.Files = []journal.FileImage{{Path: filepath.Join(h.SessionsDir(), "t.jsonl"), AfterStash: filepath.Join(mentioned, "sessions", "t.jsonl")}}
	if err := journal.Write(paths[3], undo); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths[:3] {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Add(48 * time.Hour)
	if err := os.Chtimes(young, now, now); err != nil {
		t.Fatal(err)
	}
	_, p, err := Prune(context.Background(), home.Options{Home: h}, now, 86400, keep, true)
	// the journal temporary file goes as the lock is taken (journal.Settle), before the plan
	want, kept := []string{old}, []string{young, mentioned, foreign, paths[3]}
	if keep == 0 {
		want, kept = []string{old, mentioned}, []string{young, foreign}
	}
	if err != nil || !slices.Equal(p.Orphans, want) {
		t.Fatalf("leftovers removed %v (%v); want %v", p.Orphans, err, want)
	}
	for _, gone := range append(want, temp) {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s still there", gone)
		}
	}
	for _, k := range kept {
		if _, err := os.Lstat(k); err != nil {
			t.Errorf("%s removed: %v", k, err)
		}
	}
}

// TestPruneKeepsMentionedStash: a journal that goes takes its stash with it unless a kept
// journal's file images point into that stash (the redo of an undo moves transcripts back
// there): then the stash stays, reported kept (found by a review: the transcripts were lost
// for good when the redo was undone).
func TestPruneKeepsMentionedStash(t *testing.T) {
	h, paths := testHome(t, -1, -1)
	stash := journal.StashDir(paths[0])
	if err := os.MkdirAll(filepath.Join(stash, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stash, "sessions", "t.jsonl"), []byte("transcript"), 0o600); err != nil {
		t.Fatal(err)
	}
	redo, err := journal.Read(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	redo.Files = []journal.FileImage{{Path: filepath.Join(h.SessionsDir(), "t.jsonl"), BeforeStash: filepath.Join(stash, "sessions", "t.jsonl")}}
	if err := journal.Write(paths[1], redo); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(48 * time.Hour)
	_, p, err := Prune(context.Background(), home.Options{Home: h}, now, 86400, 1, true)
	if err != nil || len(p.Journals) != 1 || !slices.Equal(p.StashesKept, []string{stash}) {
		t.Fatalf("prune: %v, journals %d, stashes kept %v; want %s kept", err, len(p.Journals), p.StashesKept, stash)
	}
	if _, err := os.Stat(filepath.Join(stash, "sessions", "t.jsonl")); err != nil {
		t.Errorf("the stashed transcript is gone: %v", err)
	}
	if _, err := os.Lstat(paths[0]); err == nil {
		t.Errorf("%s was not removed", paths[0])
	}
}

// TestLastTakesTornJournal (issue 31): the newest journal torn (cut short), List marks it
// Torn and Last returns it, for undo to settle; once it is moved aside Last goes on to the
// one before. A newer journal unreadable otherwise still refuses undo --last.
func TestLastTakesTornJournal(t *testing.T) {
	h, paths := testHome(t, -1)
	torn := filepath.Join(h.JournalDir(), "20260702T000000.000000000Z-suspend.json")
	if err := os.WriteFile(torn, []byte("{\n  \"version\": 1,\n  \"comm"), 0o600); err != nil {
		t.Fatal(err)
	}
	items, err := List(h)
	if err != nil || len(items) != 2 || !items[1].Torn || items[0].Torn {
		t.Fatalf("List: %v, %v", items, err)
	}
	it, err := Last(h)
	if err != nil || it.Path != torn {
		t.Fatalf("Last: %v, %v; want the torn journal", it, err)
	}
	if _, err := journal.SettleTorn(torn); err != nil {
		t.Fatal(err)
	}
	if it, err := Last(h); err != nil || it.Path != paths[0] {
		t.Fatalf("Last after settling: %v, %v; want %s", it, err, paths[0])
	}
	if err := os.WriteFile(torn, []byte(`{"version": 99}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Last(h); err == nil {
		t.Fatal("Last with a newer unreadable (not torn) journal: no error")
	}
}
