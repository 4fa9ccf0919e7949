package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/check"
)

// runCLIWith is runCLI with engine settings other than the defaults.
func runCLIWith(t testing.TB, s settings, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"sessionctl"}, args...), &stdout, &stderr, s)
	return code, stdout.String(), stderr.String()
}

// TestDBRepairBatches: with small batches a state.db repair runs one transaction and one
// journal per batch, ends where one transaction would, lists every journal, and undoing the
// journals newest first restores the home.
func TestDBRepairBatches(t *testing.T) {
	for _, repair := range []string{"finalize-orphans", "prune-ghosts"} {
		t.Run(repair, func(t *testing.T) {
			home := fixtureHome(t, "r0715-c2a3b9ce5")
			code, stdout, stderr := runCLIWith(t, settings{batchRows: 1}, "--home", home, "--now", fixtureNow, "--json", repair, "--apply")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, "r0715-c2a3b9ce5", repair))
			var env struct {
				Data struct {
					Batches []struct{ Journal string } `json:"batches"`
				} `json:"data"`
				Findings []check.Finding `json:"findings"`
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

// TestMaintainListsEveryBatchJournal: maintain reports the journal of every batch: with
// one-row batches, finalize's 3 orphans and prune's 2 ghosts add 3 journals to a normal run.
func TestMaintainListsEveryBatchJournal(t *testing.T) {
	normal := maintainJournals(t, settings{})
	if batched := maintainJournals(t, settings{batchRows: 1}); len(batched) != len(normal)+3 {
		t.Errorf("%d journals with one-row batches, %d without: want 3 more", len(batched), len(normal))
	}
}

func maintainJournals(t *testing.T, s settings) []string {
	t.Helper()
	home := fixtureHome(t, "r0715-c2a3b9ce5")
	code, stdout, stderr := runCLIWith(t, s, "--home", home, "--now", fixtureNow, "--json", "maintain", "--apply", "--fail-on", "never")
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
