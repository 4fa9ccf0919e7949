package commands

// Crash tests of prune --older-than: the child is killed (SIGKILL) at each fault point of a
// batch — its row store committed but no journal yet, the journal written and the rows
// deleted but not committed, the commit done but the files not yet stashed — and the home it
// leaves must be the untouched one or the pruned one, intact, with a journal that undo
// applies back to the untouched home.

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// TestCrashPrune kills prune --older-than 7d --apply at every fault point of its batch.
func TestCrashPrune(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests skipped in -short mode")
	}
	t.Parallel()
	args := []string{"prune", "--older-than", "7d", "--apply"}
	points := map[string]bool{ // the point, and whether the rows are deleted when it is reached
		statedb.FaultRowStoreBeforeCommit: false,
		statedb.FaultAfterRowStore:        false,
		journal.FaultJournalBeforeRename:  false, // the store committed, the journal not in place
		journal.FaultJournalTorn:          false, // the journal naming the store cut short
		statedb.FaultBeforeCommit:         false,
		statedb.FaultAfterCommit:          true,
	}
	for _, gen := range []string{"r0715-c2a3b9ce5", "r0817-481156139"} {
		for point, deleted := range points {
			t.Run(gen+"/"+point, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, gen)
				original := plainFiles(t, home)
				runToFault(t, home, point, args)
				assertIntegrity(t, home+"/state.db")
				got := dumpHygiene(t, home, false)
				want := loadHygieneExpected(t, gen, "before", false)
				if deleted { // the files were not moved yet: the rows are the pruned ones
					want = loadHygieneExpected(t, gen, "prune--7d", false)
					want["sessions_files"] = loadHygieneExpected(t, gen, "before", false)["sessions_files"]
				}
				compareDump(t, got, want)
				js := journals(t, home)
				unnamed := point == statedb.FaultAfterRowStore || point == statedb.FaultRowStoreBeforeCommit || point == journal.FaultJournalBeforeRename
				if unnamed {
					if len(js) != 0 {
						t.Fatalf("a journal was written before the row store's fault point: %v", js)
					}
					assertOrphanRowStore(t, home, 1)
					// journal list and undo --last are not confused by the store (issue 31)
					if code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "journal", "list"); code != ExitOK || strings.Contains(stdout, ".rows.db") {
						t.Errorf("journal list: exit %d\n%s\n%s", code, stdout, stderr)
					}
					if code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", "--last", "--apply"); code != ExitData || !strings.Contains(stderr, "no journal to undo") {
						t.Errorf("undo --last: exit %d, want %d (no journal to undo)\n%s\n%s", code, ExitData, stdout, stderr)
					}
				} else {
					if len(js) != 1 {
						t.Fatalf("%d journals, want 1", len(js))
					}
					code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", js[0], "--apply")
					if code != ExitOK {
						t.Fatalf("undo: exit %d\n%s\n%s", code, stdout, stderr)
					}
					if !deleted && !strings.Contains(stdout, "nothing to change") {
						t.Errorf("undo of a prune that never landed changed something:\n%s", stdout)
					}
				}
				compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, gen, "before", false))
				comparePlainFiles(t, plainFiles(t, home), original)
				// the same command then runs to the end (and removes the orphan row store)
				code, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
				if code != ExitOK {
					t.Fatalf("re-run: exit %d: %s", code, stderr)
				}
				if orphaned := unnamed; orphaned != strings.Contains(stdout, "journal.orphan-row-store") {
					t.Errorf("re-run after %s: reports removing an orphan row store: %v\n%s", point, !orphaned, stdout)
				}
				assertOrphanRowStore(t, home, 0)
				if left, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*.rows.db-journal")); len(left) > 0 {
					t.Errorf("re-run after %s left a row store's rollback journal: %v", point, left)
				}
				compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, gen, "prune--7d", false))
			})
		}
	}
}

// assertOrphanRowStore checks that check reports n row stores no journal names
// (journal.orphan-row-store, info).
func assertOrphanRowStore(t *testing.T, home string, n int) {
	t.Helper()
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "check", "--fail-on", "never")
	var env struct {
		Findings []struct{ Check, Severity, Subject string }
	}
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatalf("check: exit %d: %v\n%s", code, err, stderr)
	}
	found := 0
	for _, f := range env.Findings {
		if f.Check == "journal.orphan-row-store" {
			found++
			if f.Severity != "info" || !strings.HasSuffix(f.Subject, ".rows.db") {
				t.Errorf("finding %+v", f)
			}
		}
	}
	if found != n || code != ExitOK {
		t.Errorf("check: exit %d, %d orphan row store(s), want %d:\n%s", code, found, n, stdout)
	}
}

// TestPruneBatchesConcurrentWriter prunes in batches of two sessions while another
// connection keeps appending messages to a session the prune does not select: every append
// lands, the prune deletes exactly the runtime's rows, and undoing the journals newest first
// gives back every pruned row while the appended messages stay.
func TestPruneBatchesConcurrentWriter(t *testing.T) {
	for _, gen := range []string{"r0715-c2a3b9ce5", "r0817-481156139"} {
		t.Run(gen, func(t *testing.T) {
			t.Parallel()
			home := fixtureHome(t, gen)
			const open = "20260715_003415_7f6dd189" // open: never a prune candidate
			stop := appendMessages(t, home+"/state.db", open)
			code, stdout, stderr := runCLIWith(t, settings{batchRows: 2}, "--home", home, "--now", fixtureNow, "prune", "--older-than", "1d", "--apply")
			n := stop()
			if code != ExitOK {
				t.Fatalf("prune: exit %d\n%s\n%s", code, stdout, stderr)
			}
			want := loadHygieneExpected(t, gen, "prune--1d-boundary", false)
			got := dumpHygiene(t, home, false)
			if c := got["message_counts"].(map[string]any)[open]; !numbersEqual(jsonNumber(c), jsonNumber(int64(n)+countOf(want, open))) {
				t.Errorf("%s has %v messages, want %d appended on top of the runtime's", open, c, n)
			}
			for id := range want["sessions"].(map[string]any) {
				if _, ok := got["sessions"].(map[string]any)[id]; !ok {
					t.Errorf("session %s was deleted; the runtime keeps it", id)
				}
			}
			if len(got["sessions"].(map[string]any)) != len(want["sessions"].(map[string]any)) {
				t.Errorf("%d sessions left, want %d", len(got["sessions"].(map[string]any)), len(want["sessions"].(map[string]any)))
			}
			js := journals(t, home)
			if len(js) < 2 {
				t.Fatalf("%d journals, want one per batch", len(js))
			}
			sort.Sort(sort.Reverse(sort.StringSlice(js)))
			for _, j := range js {
				if code, out, errOut := runCLI(t, "--home", home, "--now", fixtureNow, "undo", j, "--apply"); code != ExitOK {
					t.Fatalf("undo %s: exit %d\n%s\n%s", j, code, out, errOut)
				}
			}
			after := dumpHygiene(t, home, false)
			before := loadHygieneExpected(t, gen, "before", false)
			if len(after["sessions"].(map[string]any)) != len(before["sessions"].(map[string]any)) {
				t.Errorf("undo left %d sessions, want %d", len(after["sessions"].(map[string]any)), len(before["sessions"].(map[string]any)))
			}
			if after["integrity_check"] != "ok" || n == 0 {
				t.Errorf("integrity %v, %d appended", after["integrity_check"], n)
			}
		})
	}
}

// appendMessages appends messages to session id from another connection until stop is
// called; stop returns how many were appended (each must succeed).
func appendMessages(t *testing.T, dbPath, id string) (stop func() int) {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteURI(dbPath, "rw")+"&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	done, first := make(chan struct{}), make(chan struct{})
	finished := make(chan error, 1)
	n := 0
	go func() {
		defer close(first)
		for {
			select {
			case <-done:
				finished <- nil
				return
			default:
			}
			if _, err := db.Exec(`INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', 'still here', 1784194200.0)`, id); err != nil {
				finished <- err
				return
			}
			if n++; n == 1 {
				first <- struct{}{}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	<-first // the writer runs before the prune starts
	return func() int {
		close(done)
		if err := <-finished; err != nil {
			t.Errorf("concurrent append: %v", err)
		}
		db.Close()
		return n
	}
}

// countOf returns message_counts[id] of a dump (0 when absent).
func countOf(dump map[string]any, id string) int64 {
	n, _ := dump["message_counts"].(map[string]any)[id].(json.Number).Int64()
	return n
}

// jsonNumber makes a json.Number of an int64 or a dump value.
func jsonNumber(v any) json.Number {
	switch x := v.(type) {
	case json.Number:
		return x
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	}
	return ""
}

// TestCrashArchive kills archive --older-than 7d --apply just before and just after its
// commit (its journal of archived values is written inside the transaction): the home is the
// untouched or the archived one, intact, with one journal whose undo gives the untouched home
// back; the same command then runs to the runtime's own result.
func TestCrashArchive(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests skipped in -short mode")
	}
	t.Parallel()
	args := []string{"archive", "--older-than", "7d", "--apply"}
	points := map[string]bool{statedb.FaultBeforeCommit: false, statedb.FaultAfterCommit: true} // whether it landed
	for _, gen := range []string{"r0715-c2a3b9ce5", "r0817-481156139"} {
		for point, landed := range points {
			t.Run(gen+"/"+point, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, gen)
				runToFault(t, home, point, args)
				assertIntegrity(t, home+"/state.db")
				want := "before"
				if landed {
					want = "archive--7d"
				}
				compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, gen, want, false))
				js := journals(t, home)
				if len(js) != 1 {
					t.Fatalf("%d journals, want 1 (written inside the transaction)", len(js))
				}
				code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", js[0], "--apply")
				if code != ExitOK || landed == strings.Contains(stdout, "nothing to change") {
					t.Fatalf("undo: exit %d\n%s\n%s", code, stdout, stderr)
				}
				compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, gen, "before", false))
				if code, _, stderr = runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...); code != ExitOK {
					t.Fatalf("re-run: exit %d: %s", code, stderr)
				}
				compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, gen, "archive--7d", false))
			})
		}
	}
}

// TestCrashEntriesPrune kills entries prune --apply at every fault point of its routing
// write — sessions.json's atomic replace on a json-primary home (r0418); on a db-primary home
// (r0817) the sessions.json mirror's replace inside the gateway_routing transaction, and the
// commit — with TestCrashFaultPoints' checks (each store whole, before or after; the journal
// there; check clean; undo back to the untouched home); the same command then runs to the
// runtime's own result.
func TestCrashEntriesPrune(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests skipped in -short mode")
	}
	t.Parallel()
	groups := []faultGroup{
		{"json-primary", "r0418-cb4addaca", "entries-prune", []string{"entries", "prune", "--older-than", "2m", "--apply"}, "entries-prune--2m-boundary", map[string]string{
			sessionsjson.FaultAfterTempWrite: killedUntouched,
			sessionsjson.FaultAfterTempSync:  killedUntouched,
			sessionsjson.FaultAfterRename:    killedApplied,
		}},
		{"db-primary", "r0817-481156139", "entries-prune", []string{"entries", "prune", "--older-than", "2d", "--apply"}, "entries-prune--2d", map[string]string{
			sessionsjson.FaultAfterTempWrite: killedUntouched,
			sessionsjson.FaultAfterTempSync:  killedUntouched,
			sessionsjson.FaultAfterRename:    killedMirrorAhead,
			statedb.FaultBeforeCommit:        killedMirrorAhead,
			statedb.FaultAfterCommit:         killedApplied,
		}},
	}
	for _, g := range groups {
		t.Run(g.home, func(t *testing.T) {
			t.Parallel()
			before := imageOf(t, fixtureHome(t, g.gen))
			refHome := fixtureHome(t, g.gen)
			if code, _, stderr := runCLI(t, append([]string{"--home", refHome, "--now", fixtureNow}, g.args...)...); code != ExitOK {
				t.Fatalf("reference run: exit %d: %s", code, stderr)
			}
			compareDump(t, dumpHygiene(t, refHome, false), loadHygieneExpected(t, g.gen, g.expected, false))
			after := imageOf(t, refHome)
			for point, want := range g.points {
				t.Run(point, func(t *testing.T) {
					t.Parallel()
					home := faultCase(t, g, point, want, before, after)
					if code, _, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, g.args...)...); code != ExitOK {
						t.Fatalf("re-run: exit %d: %s", code, stderr)
					}
					assertSameImage(t, "re-run", imageOf(t, home), after)
				})
			}
		})
	}
}
