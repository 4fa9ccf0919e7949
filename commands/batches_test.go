package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

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
//
// The batches come out of a fixed row count (batchRows) or of a time budget so small that
// every batch, measured, takes one row (batchTarget): the result is the same.
func TestDBRepairBatches(t *testing.T) {
	for _, s := range []settings{{batchRows: 1}, {batchTarget: time.Nanosecond}} {
		for _, repair := range []string{"finalize-orphans", "prune-ghosts"} {
			t.Run(fmt.Sprintf("%s/%+v", repair, s), func(t *testing.T) { dbRepairBatches(t, s, repair) })
		}
	}
}

func dbRepairBatches(t *testing.T, s settings, repair string) {
	home := fixtureHome(t, "r0715-c2a3b9ce5")
	code, stdout, stderr := runCLIWith(t, s, "--home", home, "--now", fixtureNow, "--json", repair, "--apply")
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
}

// TestHygieneBatchedByCost: prune and archive, each batch sized by a time budget so small that
// it takes one session, end with the runtime's dump of every hygiene case — one journal per
// batch, several where the case changes several sessions — and undoing those journals newest
// first gives back the exact home: the dump and every plain file byte for byte.
func TestHygieneBatchedByCost(t *testing.T) {
	tiny := settings{batchTarget: time.Nanosecond}
	forEachHygieneCase(t, true, func(t *testing.T, gen string, c hygieneCase, home string, args []string) {
		if c.Op != "prune" && c.Op != "archive" {
			return
		}
		original := plainFiles(t, home)
		if code, stdout, stderr := runCLIWith(t, tiny, append(args, "--apply")...); code != ExitOK {
			t.Fatalf("apply: exit %d\n%s\n%s", code, stdout, stderr)
		}
		compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, gen, c.Name, false))
		paths := journals(t, home)
		if changed := len(c.Deleted) + len(c.Archived); (changed > 1) != (len(paths) > 1) {
			t.Fatalf("%d sessions changed in %d journals: want one batch per session", changed, len(paths))
		}
		sort.Sort(sort.Reverse(sort.StringSlice(paths)))
		for _, p := range paths {
			if code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", p, "--apply"); code != ExitOK {
				t.Fatalf("undo %s: exit %d\n%s\n%s", p, code, stdout, stderr)
			}
		}
		compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, gen, "before", false))
		comparePlainFiles(t, plainFiles(t, home), original)
	})
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
