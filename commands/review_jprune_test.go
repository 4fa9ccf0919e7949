package commands

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReviewJournalPruneUndoStore: journal prune removes an old prune journal with its row
// store while a kept undo journal still names that store: the undo of the undo (still listed
// as undoable) then fails, and the plan said nothing about it.
func TestReviewJournalPruneUndoStore(t *testing.T) {
	home := fixtureHome(t, "r0817-481156139")
	if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "prune", "--older-than", "1d", "--apply"); code != 0 {
		t.Fatal(stderr)
	}
	js, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*-prune.json"))
	if len(js) != 1 {
		t.Fatalf("%v", js)
	}
	time.Sleep(20 * time.Millisecond)
	if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", js[0], "--apply"); code != 0 {
		t.Fatal(stderr)
	}
	undos, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*-undo.json"))
	later := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z")
	code, plan, stderr := runCLI(t, "--home", home, "--now", later, "journal", "prune", "--older-than", "1s", "--keep", "1")
	t.Logf("plan exit %d:\n%s%s", code, plan, stderr)
	code, out, stderr := runCLI(t, "--home", home, "--now", later, "journal", "prune", "--older-than", "1s", "--keep", "1", "--apply")
	t.Logf("apply exit %d:\n%s%s", code, out, stderr)
	_, list, _ := runCLI(t, "--home", home, "--now", later, "journal", "list")
	t.Logf("list:\n%s", list)
	code, out, stderr = runCLI(t, "--home", home, "--now", fixtureNow, "undo", undos[0], "--apply")
	t.Logf("undo of the undo: exit %d %s %s", code, out, stderr)
	if code != 0 && strings.Contains(stderr, "rows.db") {
		t.Errorf("the kept undo journal can no longer be undone: its row store went with the pruned journal")
	}
}
