package commands

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDBRepairBatches: with small batches a state.db repair runs one transaction and one
// journal per batch, ends where one transaction would, lists every journal, and undoing the
// journals newest first restores the home.
func TestDBRepairBatches(t *testing.T) {
	defer func(n int) { dbBatchRows = n }(dbBatchRows)
	dbBatchRows = 1
	for _, repair := range []string{"finalize-orphans", "prune-ghosts"} {
		t.Run(repair, func(t *testing.T) {
			home := copyFixtureHome(t, "r0715-c2a3b9ce5")
			code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", repair, "--apply")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, "r0715-c2a3b9ce5", repair))
			var env struct {
				Data struct {
					Batches []struct{ Journal string } `json:"batches"`
				} `json:"data"`
				Findings []Finding `json:"findings"`
			}
			if err := json.Unmarshal([]byte(stdout), &env); err != nil {
				t.Fatal(err)
			}
			batches := env.Data.Batches
			if want := map[string]int{"finalize-orphans": 3, "prune-ghosts": 2}[repair]; len(batches) != want {
				t.Fatalf("%d batches, want %d", len(batches), want)
			}
			if !strings.Contains(stdout, `"check": "repair.batches"`) {
				t.Error("no repair.batches finding listing the journals")
			}
			for i := len(batches) - 1; i >= 0; i-- {
				if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", batches[i].Journal, "--apply"); code != ExitOK {
					t.Fatalf("undo %s: exit %d: %s", batches[i].Journal, code, stderr)
				}
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, "r0715-c2a3b9ce5", "before"))
		})
	}
}

// TestDBBatchesFailed: a failed batch's error names the journals of the batches committed
// before it and keeps its exit code.
func TestDBBatchesFailed(t *testing.T) {
	boom := withCode(ExitWrite, errors.New("prune ghosts: commit: disk I/O error"))
	if err := (dbBatches{}).failed(boom); err != boom {
		t.Errorf("no batches: %v", err)
	}
	if err := (dbBatches{{Journal: "j1"}}).failed(nil); err != nil {
		t.Errorf("no error: %v", err)
	}
	err := (dbBatches{{Journal: "j1"}, {Journal: "j2"}}).failed(boom)
	if exitCodeOf(err) != ExitWrite || !strings.Contains(err.Error(), "2 earlier batch(es) were applied: j1, j2") {
		t.Errorf("err = %v (exit %d)", err, exitCodeOf(err))
	}
}

// TestMaintainListsEveryBatchJournal: maintain reports the journal of every batch: with
// one-row batches, finalize's 3 orphans and prune's 2 ghosts add 3 journals to a normal run.
func TestMaintainListsEveryBatchJournal(t *testing.T) {
	defer func(n int) { dbBatchRows = n }(dbBatchRows)
	normal := maintainJournals(t)
	dbBatchRows = 1
	if batched := maintainJournals(t); len(batched) != len(normal)+3 {
		t.Errorf("%d journals with one-row batches, %d without: want 3 more", len(batched), len(normal))
	}
}

func maintainJournals(t *testing.T) []string {
	t.Helper()
	home := copyFixtureHome(t, "r0715-c2a3b9ce5")
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "maintain", "--apply", "--fail-on", "never")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var env struct {
		Data struct {
			Journals []string `json:"journals"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatal(err)
	}
	return env.Data.Journals
}
