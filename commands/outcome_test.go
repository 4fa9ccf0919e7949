package commands

import (
	"database/sql"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// outcomeGenDB and outcomeGenJSON are the db-primary and json-primary fixture homes of the
// outcome tests.
const (
	outcomeGenDB   = "r0715-c2a3b9ce5"
	outcomeGenJSON = "r0703-52d0d671e"
)

// immutable makes path immutable (chattr +i) until the test ends: a rename over it, a write
// to it or (for a directory) a new entry in it fails for real, root included. The test is
// skipped where chattr cannot do that (not root, or a filesystem without the attribute).
func immutable(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("chattr +i %s: %v %s (needs root on a filesystem with the immutable attribute)", path, err, out)
	}
	t.Cleanup(func() { mutable(t, path) })
}

// mutable clears the immutable attribute.
func mutable(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", "-i", path).CombinedOutput(); err != nil {
		t.Errorf("chattr -i %s: %v %s", path, err, out)
	}
}

// outcomeEnvelope is the part of the --json envelope the outcome rules are about.
type outcomeEnvelope struct {
	Applied  bool     `json:"applied"`
	Journals []string `json:"journals"`
	ExitCode int      `json:"exit_code"`
	Error    *struct {
		Code    int    `json:"code"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// runOutcome runs sessionctl --json in a child process (with env added) and returns its exit
// code, its one envelope and its stderr.
func runOutcome(t *testing.T, env []string, home string, args ...string) (int, outcomeEnvelope, string) {
	t.Helper()
	cmd := childCmd(t, 0, append([]string{"--home", home, "--now", fixtureNow, "--json"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if !ee.Exited() {
			t.Fatalf("sessionctl %q did not exit: %v\n%s", args, err, stderr.String())
		}
	} else if err != nil {
		t.Fatal(err)
	}
	var envl outcomeEnvelope
	if err := json.Unmarshal([]byte(stdout.String()), &envl); err != nil {
		t.Fatalf("sessionctl %q: exit %d: stdout is not one envelope: %v\n%s\nstderr: %s", args, code, err, stdout.String(), stderr.String())
	}
	if envl.ExitCode != code {
		t.Errorf("envelope exit_code %d, process %d", envl.ExitCode, code)
	}
	return code, envl, stderr.String()
}

// assertPartial checks a run that changed the home before it failed: exit 6, the journals
// kept, existing and named on stderr and in the envelope.
func assertPartial(t *testing.T, code int, envl outcomeEnvelope, stderr string) {
	t.Helper()
	if code != ExitPartial || envl.Error == nil || envl.Error.Kind != "partial" || !envl.Applied || len(envl.Journals) == 0 {
		t.Fatalf("exit %d, envelope %+v, stderr %s; want exit 6, kind partial, applied, journals", code, envl, stderr)
	}
	for _, j := range envl.Journals {
		if _, err := os.Stat(j); err != nil {
			t.Errorf("journal %s: %v", j, err)
		}
		if !strings.Contains(stderr, j) {
			t.Errorf("stderr does not name journal %s: %s", j, stderr)
		}
	}
}

// undoAll undoes journals newest first and checks the home is the fixture's before-image.
func undoAll(t *testing.T, gen, home string, journals []string) {
	t.Helper()
	for i := len(journals) - 1; i >= 0; i-- {
		if code, envl, stderr := runOutcome(t, nil, home, "undo", journals[i], "--apply"); code != ExitOK {
			t.Fatalf("undo %s: exit %d %+v: %s", journals[i], code, envl.Error, stderr)
		}
	}
	compareDump(t, dumpHome(t, home), loadExpected(t, gen, "before"))
}

// TestOutcomeCountsFailAfterRoutingCommit: suspend-stuck on a db-primary home whose counts file
// cannot be replaced after the gateway_routing rows committed: the rows stay changed, so the
// run exits 6 with its journal kept and named, and undo restores the home.
func TestOutcomeCountsFailAfterRoutingCommit(t *testing.T) {
	home := fixtureHome(t, outcomeGenDB)
	counts := filepath.Join(home, ".restart_failure_counts")
	immutable(t, counts)
	code, envl, stderr := runOutcome(t, nil, home, "suspend-stuck", "--apply")
	assertPartial(t, code, envl, stderr)
	mutable(t, counts)
	undoAll(t, outcomeGenDB, home, envl.Journals)
}

// TestOutcomeDirSyncFailsAfterRename: the directory fsync after sessions.json was renamed into
// place fails (injected): the file was replaced, so exit 6 with the journal kept; undo restores.
func TestOutcomeDirSyncFailsAfterRename(t *testing.T) {
	home := fixtureHome(t, outcomeGenJSON)
	fault := []string{sessionsjson.FaultPointEnv + "=" + sessionsjson.FaultAfterRename + ":fail"}
	code, envl, stderr := runOutcome(t, fault, home, "suspend", "agent:main:slack:dm:D043095675", "--apply")
	assertPartial(t, code, envl, stderr)
	undoAll(t, outcomeGenJSON, home, envl.Journals)
}

// TestOutcomeWriteFailsNothingChanged: a routing write that fails before anything is replaced
// exits 5, keeps no journal and changes nothing.
func TestOutcomeWriteFailsNothingChanged(t *testing.T) {
	home := fixtureHome(t, outcomeGenJSON)
	immutable(t, filepath.Join(home, "sessions"))
	code, envl, stderr := runOutcome(t, nil, home, "suspend", "agent:main:slack:dm:D043095675", "--apply")
	if code != ExitWrite || envl.Error == nil || envl.Error.Kind != "write" || envl.Applied || len(envl.Journals) != 0 {
		t.Fatalf("exit %d, envelope %+v: %s; want exit 5, nothing applied, no journal", code, envl, stderr)
	}
	if js := journals(t, home); len(js) != 0 {
		t.Errorf("journals left: %v", js)
	}
	compareDump(t, dumpHome(t, home), loadExpected(t, outcomeGenJSON, "before"))
}

// TestOutcomeMaintainLaterStepFails: maintain --apply whose routing step fails after the
// state.db steps committed exits 6, names the earlier journals and prints its envelope; undoing
// them restores the home.
func TestOutcomeMaintainLaterStepFails(t *testing.T) {
	home := fixtureHome(t, outcomeGenDB)
	immutable(t, filepath.Join(home, ".restart_failure_counts"))
	code, envl, stderr := runOutcome(t, nil, home, "maintain", "--apply")
	assertPartial(t, code, envl, stderr)
	if len(envl.Journals) < 3 { // finalize-orphans, prune-ghosts, and suspend-stuck's rows
		t.Errorf("journals %v: want the state.db steps' and the failed step's", envl.Journals)
	}
	mutable(t, filepath.Join(home, ".restart_failure_counts"))
	undoAll(t, outcomeGenDB, home, envl.Journals)
}

// TestOutcomeUndoPartWay: an undo that fails part-way exits 6 naming its own journal; running
// the same undo again finishes it.
func TestOutcomeUndoPartWay(t *testing.T) {
	home := fixtureHome(t, outcomeGenDB)
	code, envl, stderr := runOutcome(t, nil, home, "suspend-stuck", "--apply")
	if code != ExitOK || len(envl.Journals) != 1 {
		t.Fatalf("suspend-stuck: exit %d %+v: %s", code, envl, stderr)
	}
	journal := envl.Journals[0]
	counts := filepath.Join(home, ".restart_failure_counts")
	immutable(t, counts) // the rows and the mirror are restored, the counts file cannot be
	code, undo, stderr := runOutcome(t, nil, home, "undo", journal, "--apply")
	assertPartial(t, code, undo, stderr)
	mutable(t, counts)
	if code, envl, stderr := runOutcome(t, nil, home, "undo", journal, "--apply"); code != ExitOK || !envl.Applied {
		t.Fatalf("undo again: exit %d %+v: %s", code, envl, stderr)
	}
	compareDump(t, dumpHome(t, home), loadExpected(t, outcomeGenDB, "before"))
}

// journalStates runs journal list and returns, by file name, whether each journal is undone
// and whether it is a pending undo journal.
func journalStates(t *testing.T, home string) (undone, pending map[string]bool) {
	t.Helper()
	out, err := childCmd(t, 0, "--home", home, "--json", "journal", "list").Output()
	if err != nil {
		t.Fatalf("journal list: %v", err)
	}
	var env struct {
		Data struct {
			Journals []struct {
				Path            string
				Undone, Pending bool
			}
		}
	}
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatal(err)
	}
	undone, pending = map[string]bool{}, map[string]bool{}
	for _, j := range env.Data.Journals {
		undone[filepath.Base(j.Path)], pending[filepath.Base(j.Path)] = j.Undone, j.Pending
	}
	return undone, pending
}

// TestOutcomeUndoLastFinishesPartWay: a journal whose undo stopped part-way is not undone
// (its undo journal is pending), so undo --last takes it again and finishes the undo; then
// nothing is left to undo.
func TestOutcomeUndoLastFinishesPartWay(t *testing.T) {
	home := fixtureHome(t, outcomeGenDB)
	code, envl, stderr := runOutcome(t, nil, home, "suspend-stuck", "--apply")
	if code != ExitOK || len(envl.Journals) != 1 {
		t.Fatalf("suspend-stuck: exit %d %+v: %s", code, envl, stderr)
	}
	name := filepath.Base(envl.Journals[0])
	counts := filepath.Join(home, ".restart_failure_counts")
	immutable(t, counts)
	code, undo, stderr := runOutcome(t, nil, home, "undo", "--last", "--apply")
	assertPartial(t, code, undo, stderr)
	mutable(t, counts)
	undone, pending := journalStates(t, home)
	if undone[name] || !pending[filepath.Base(undo.Journals[0])] {
		t.Fatalf("after the part-way undo: undone %v, pending %v; want %s not undone, %s pending", undone, pending, name, undo.Journals[0])
	}
	if code, envl, stderr := runOutcome(t, nil, home, "undo", "--last", "--apply"); code != ExitOK || !envl.Applied {
		t.Fatalf("undo --last again: exit %d %+v: %s", code, envl, stderr)
	}
	compareDump(t, dumpHome(t, home), loadExpected(t, outcomeGenDB, "before"))
	if undone, _ := journalStates(t, home); !undone[name] {
		t.Errorf("%s is not undone after its undo finished: %v", name, undone)
	}
	if code, envl, stderr := runOutcome(t, nil, home, "undo", "--last"); code != ExitData {
		t.Errorf("undo --last with every change undone: exit %d %+v: %s; want exit 4, nothing to undo", code, envl, stderr)
	}
}

// TestOutcomeUndoLandedButPending: an undo killed after its last change landed, while its
// journal was being marked finished, leaves that journal pending; the next undo --last takes
// the same journal, finds nothing left to change, marks the pending one finished, and the
// one after goes on to an older change.
func TestOutcomeUndoLandedButPending(t *testing.T) {
	for _, point := range []string{sessionsjson.FaultAfterTempWrite, sessionsjson.FaultAfterTempSync} {
		t.Run(point, func(t *testing.T) {
			home := fixtureHome(t, outcomeGenDB)
			code, envl, stderr := runOutcome(t, nil, home, "prune-ghosts", "--apply")
			if code != ExitOK || len(envl.Journals) != 1 {
				t.Fatalf("prune-ghosts: exit %d %+v: %s", code, envl, stderr)
			}
			name := filepath.Base(envl.Journals[0])
			killed := childCmd(t, 0, "--home", home, "--now", fixtureNow, "undo", envl.Journals[0], "--apply")
			killed.Env = append(killed.Env, sessionsjson.FaultPointEnv+"="+point)
			if err := killed.Run(); err == nil {
				t.Fatal("the undo was not killed at the journal's rewrite")
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, outcomeGenDB, "before"))
			if undone, _ := journalStates(t, home); undone[name] {
				t.Fatalf("%s counts as undone though its undo journal is pending", name)
			}
			code, again, stderr := runOutcome(t, nil, home, "undo", "--last", "--apply")
			if code != ExitOK || again.Applied || !strings.Contains(stderr, "marked finished") {
				t.Fatalf("undo --last: exit %d %+v: %s; want nothing applied, the pending journal finished", code, again, stderr)
			}
			if undone, pending := journalStates(t, home); !undone[name] || slices.Contains(slices.Collect(maps.Values(pending)), true) {
				t.Errorf("after settling: undone %v, pending %v", undone, pending)
			}
		})
	}
}

// routingTimes reads every gateway_routing row's key and updated_at column.
func routingTimes(t *testing.T, home string) map[string]float64 {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteURI(filepath.Join(home, "state.db"), "ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT scope || '|' || session_key, updated_at FROM gateway_routing")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var k string
		var at float64
		if err := rows.Scan(&k, &at); err != nil {
			t.Fatal(err)
		}
		out[k] = at
	}
	return out
}

// TestOutcomeUndoKeepsRoutingTimes: undo of a gateway_routing write puts each row's
// updated_at column back as it was (it stamped the undo's time; found by a helper's fault
// audit), for rows the write changed and rows it removed; undo of that undo gives the
// write's times again.
func TestOutcomeUndoKeepsRoutingTimes(t *testing.T) {
	for _, args := range [][]string{{"entries", "prune", "--older-than", "2d", "--apply"}, {"suspend-stuck", "--apply"}} {
		t.Run(args[0], func(t *testing.T) {
			home := fixtureHome(t, outcomeGenDB)
			before := routingTimes(t, home)
			code, envl, stderr := runOutcome(t, nil, home, args...)
			if code != ExitOK || len(envl.Journals) == 0 {
				t.Fatalf("%v: exit %d %+v: %s", args, code, envl, stderr)
			}
			written := routingTimes(t, home)
			if maps.Equal(written, before) {
				t.Fatalf("%v changed no gateway_routing row", args)
			}
			code, undo, stderr := runOutcome(t, nil, home, "undo", envl.Journals[len(envl.Journals)-1], "--apply")
			if code != ExitOK || !undo.Applied {
				t.Fatalf("undo: exit %d %+v: %s", code, undo, stderr)
			}
			if got := routingTimes(t, home); !maps.Equal(got, before) {
				t.Errorf("updated_at after the undo differs from before:\n got %v\nwant %v", got, before)
			}
			if code, again, stderr := runOutcome(t, nil, home, "undo", undo.Journals[0], "--apply"); code != ExitOK || !again.Applied {
				t.Fatalf("undo of the undo: exit %d %+v: %s", code, again, stderr)
			}
			if got := routingTimes(t, home); !maps.Equal(got, written) {
				t.Errorf("updated_at after the undo of the undo differs from the write's:\n got %v\nwant %v", got, written)
			}
		})
	}
}

// TestOutcomeSignals: SIGINT or SIGTERM during maintain --apply stops it at the next safe
// point, after the step that was committing: exit 130 / 143, the step's journal kept and
// named, the rest not run; undo restores. A signal before a commit rolls it back: nothing
// applied, no journal.
func TestOutcomeSignals(t *testing.T) {
	for _, tt := range []struct {
		mode    string
		point   string
		code    int
		applied bool
	}{
		{"sigint", statedb.FaultAfterCommit, 130, true},
		{"sigterm", statedb.FaultAfterCommit, 143, true},
		{"sigterm", statedb.FaultBeforeCommit, 143, false},
	} {
		t.Run(tt.mode+"/"+tt.point, func(t *testing.T) {
			home := fixtureHome(t, outcomeGenDB)
			fault := []string{sessionsjson.FaultPointEnv + "=" + tt.point + ":" + tt.mode}
			code, envl, stderr := runOutcome(t, fault, home, "maintain", "--apply")
			if code != tt.code || envl.Error == nil || envl.Error.Kind != "interrupted" || envl.Applied != tt.applied {
				t.Fatalf("exit %d, envelope %+v: %s; want exit %d, interrupted, applied %v", code, envl, stderr, tt.code, tt.applied)
			}
			if js := journals(t, home); len(js) != len(envl.Journals) || (tt.applied && len(js) != 1) {
				t.Fatalf("journals on disk %v, in the envelope %v", js, envl.Journals)
			}
			undoAll(t, outcomeGenDB, home, envl.Journals)
		})
	}
}

// TestOutcomeUndoKilled: an undo killed at any fault point of its writes leaves the home and
// the journals such that running the same undo again restores the exact before-image.
func TestOutcomeUndoKilled(t *testing.T) {
	points := []string{sessionsjson.FaultAfterTempWrite, sessionsjson.FaultAfterTempSync, sessionsjson.FaultAfterRename,
		statedb.FaultBeforeCommit, statedb.FaultAfterCommit}
	for _, tt := range []struct {
		gen  string
		args []string
	}{
		{outcomeGenDB, []string{"suspend-stuck", "--apply"}},
		{outcomeGenJSON, []string{"suspend-stuck", "--apply"}},
		{outcomeGenDB, []string{"prune-ghosts", "--apply"}},
	} {
		for _, point := range points {
			t.Run(tt.gen+"/"+tt.args[0]+"/"+point, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, tt.gen)
				code, envl, stderr := runOutcome(t, nil, home, tt.args...)
				if code != ExitOK || len(envl.Journals) != 1 {
					t.Fatalf("%v: exit %d %+v: %s", tt.args, code, envl, stderr)
				}
				killed := childCmd(t, 0, "--home", home, "--now", fixtureNow, "undo", envl.Journals[0], "--apply")
				killed.Env = append(killed.Env, sessionsjson.FaultPointEnv+"="+point)
				tmpsBefore := tempFiles(t, filepath.Join(home, "sessions"))
				_ = killed.Run() // killed at the point, or finished when its path has no such point
				for _, tmp := range newTempFiles(t, home, tmpsBefore) {
					if err := os.Remove(tmp); err != nil { // the kill's leftover temp file (check reports it)
						t.Fatal(err)
					}
				}
				if code, again, stderr := runOutcome(t, nil, home, "undo", envl.Journals[0], "--apply"); code != ExitOK {
					t.Fatalf("undo after a kill at %s: exit %d %+v: %s", point, code, again.Error, stderr)
				}
				compareDump(t, dumpHome(t, home), loadExpected(t, tt.gen, "before"))
			})
		}
	}
}

// TestOutcomeUndoFileOnlyFails: an undo whose only pending target is the counts file, replaced
// but not synced (injected), changed the home: exit 6 with its journal kept, not exit 5.
func TestOutcomeUndoFileOnlyFails(t *testing.T) {
	home := fixtureHome(t, outcomeGenJSON)
	cmd := childCmd(t, 0, "--home", home, "--now", fixtureNow, "--json", "suspend-stuck", "--apply")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("suspend-stuck: %v", err)
	}
	var applied struct {
		Journals []string `json:"journals"`
		Changes  []struct{ Target string }
	}
	if err := json.Unmarshal(out, &applied); err != nil || len(applied.Journals) != 1 {
		t.Fatalf("suspend-stuck envelope: %v %s", err, out)
	}
	for _, c := range applied.Changes { // put every entry back: only the counts file is left to undo
		if key, ok := strings.CutSuffix(c.Target, "/suspended"); ok {
			if code, envl, stderr := runOutcome(t, nil, home, "unsuspend", key, "--apply"); code != ExitOK {
				t.Fatalf("unsuspend %s: exit %d %+v: %s", key, code, envl, stderr)
			}
		}
	}
	fault := []string{sessionsjson.FaultPointEnv + "=" + sessionsjson.FaultAfterRename + ":fail"}
	code, envl, stderr := runOutcome(t, fault, home, "undo", applied.Journals[0], "--apply")
	assertPartial(t, code, envl, stderr)
}

// TestOutcomeUndoTwiceWritesNothing: undoing a state.db journal a second time finds every row
// at its before-image: nothing applied, no new journal.
func TestOutcomeUndoTwiceWritesNothing(t *testing.T) {
	home := fixtureHome(t, outcomeGenDB)
	code, envl, stderr := runOutcome(t, nil, home, "prune-ghosts", "--apply")
	if code != ExitOK || len(envl.Journals) != 1 {
		t.Fatalf("prune-ghosts: exit %d %+v: %s", code, envl, stderr)
	}
	if code, envl, stderr := runOutcome(t, nil, home, "undo", envl.Journals[0], "--apply"); code != ExitOK || !envl.Applied {
		t.Fatalf("undo: exit %d %+v: %s", code, envl, stderr)
	}
	before := journals(t, home)
	code, again, stderr := runOutcome(t, nil, home, "undo", envl.Journals[0], "--apply")
	if code != ExitOK || again.Applied || len(again.Journals) != 0 {
		t.Fatalf("undo again: exit %d %+v: %s; want nothing applied", code, again, stderr)
	}
	if after := journals(t, home); len(after) != len(before) {
		t.Errorf("undo again wrote a journal: %v", after)
	}
	compareDump(t, dumpHome(t, home), loadExpected(t, outcomeGenDB, "before"))
}

// TestOutcomeInfiniteTime: a ghost whose started_at is -Infinity (a REAL SQLite holds; the
// ghost predicate selects it) is pruned and reported in one valid envelope, its time as text.
func TestOutcomeInfiniteTime(t *testing.T) {
	home := fixtureHome(t, outcomeGenJSON)
	execSQL(t, filepath.Join(home, "state.db"), "INSERT INTO sessions (id, source, started_at, ended_at) VALUES ('ghostinf', 'tui', -9e999, 5.0)")
	for _, args := range [][]string{{"prune-ghosts"}, {"prune-ghosts", "--apply"}} {
		code, envl, stderr := runOutcome(t, nil, home, args...)
		if code != ExitOK || envl.Error != nil {
			t.Fatalf("%v: exit %d %+v: %s", args, code, envl, stderr)
		}
	}
}

// TestOutcomeBackupRotationFails: backup --keep whose rotation cannot remove an old backup
// (immutable) after the new one was written: exit 6, applied, the new backup listed; not exit
// 5 "nothing changed".
func TestOutcomeBackupRotationFails(t *testing.T) {
	home := fixtureHome(t, outcomeGenDB)
	for range 2 {
		if code, envl, stderr := runOutcome(t, nil, home, "backup"); code != ExitOK {
			t.Fatalf("backup: exit %d %+v: %s", code, envl.Error, stderr)
		}
	}
	dir := filepath.Join(home, "sessionctl", "backups")
	before, err := os.ReadDir(dir)
	if err != nil || len(before) != 2 {
		t.Fatalf("backups %v (%v)", before, err)
	}
	immutable(t, filepath.Join(dir, before[0].Name()))
	code, envl, stderr := runOutcome(t, nil, home, "backup", "--keep", "1")
	if code != ExitPartial || envl.Error == nil || envl.Error.Kind != "partial" || !envl.Applied {
		t.Fatalf("exit %d, envelope %+v, stderr %s; want exit 6, kind partial, applied", code, envl, stderr)
	}
	after, _ := os.ReadDir(dir)
	if len(after) != 3 || !strings.Contains(envl.Error.Message, "written, then rotating failed") {
		t.Errorf("backups after: %v; error %q", after, envl.Error.Message)
	}
}

// TestOutcomeTranscriptsKept: a prune whose sessions directory cannot be written (immutable)
// deletes the rows and reports the transcripts as kept (repair.transcripts-kept), not as
// removed; the files are where they were, and undo restores the rows.
func TestOutcomeTranscriptsKept(t *testing.T) {
	for _, tt := range []struct {
		pin  string // "dir": the sessions directory is immutable; "files": each file in it is; "links": each is a symbolic link
		args []string
	}{
		{"dir", []string{"prune-ghosts", "--apply"}}, {"dir", []string{"prune", "--older-than", "7d", "--apply"}},
		{"files", []string{"prune-ghosts", "--apply"}}, {"files", []string{"prune", "--older-than", "7d", "--apply"}},
		{"links", []string{"prune-ghosts", "--apply"}},
	} {
		args := tt.args
		t.Run(tt.pin+"/"+args[0], func(t *testing.T) {
			home := fixtureHome(t, outcomeGenDB)
			sessions := filepath.Join(home, "sessions")
			before, _ := os.ReadDir(sessions)
			pinned := []string{sessions}
			if tt.pin != "dir" {
				pinned = pinned[:0]
				for _, e := range before {
					pinned = append(pinned, filepath.Join(sessions, e.Name()))
				}
			}
			outside := t.TempDir()
			for _, p := range pinned {
				if tt.pin == "links" {
					linkOut(t, p, filepath.Join(outside, filepath.Base(p)))
				} else {
					immutable(t, p)
				}
			}
			cmd := childCmd(t, 0, append([]string{"--home", home, "--now", fixtureNow, "--json"}, args...)...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var envl struct {
				Applied  bool     `json:"applied"`
				Journals []string `json:"journals"`
				Changes  []struct {
					Op string `json:"op"`
				} `json:"changes"`
				Findings []struct {
					Check string `json:"check"`
				} `json:"findings"`
			}
			if err := json.Unmarshal(out, &envl); err != nil || !envl.Applied {
				t.Fatalf("envelope %s (%v)", out, err)
			}
			kept := false
			for _, f := range envl.Findings {
				kept = kept || f.Check == "repair.transcripts-kept"
			}
			for _, c := range envl.Changes {
				if c.Op == "remove file" {
					t.Errorf("a transcript is reported removed: %s", out)
					break
				}
			}
			for _, p := range pinned {
				if tt.pin == "links" {
					linkBack(t, p, filepath.Join(outside, filepath.Base(p)))
				} else {
					mutable(t, p)
				}
			}
			after, _ := os.ReadDir(sessions)
			if !kept || len(after) != len(before) {
				t.Errorf("finding repair.transcripts-kept %v; sessions/ holds %d entries, %d before", kept, len(after), len(before))
			}
			undoAll(t, outcomeGenDB, home, envl.Journals)
		})
	}
}

// linkOut moves the file at p to out and leaves a symbolic link to it at p.
func linkOut(t *testing.T, p, out string) {
	t.Helper()
	if err := os.Rename(p, out); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, p); err != nil {
		t.Fatal(err)
	}
}

// linkBack undoes linkOut, failing when the link at p is gone.
func linkBack(t *testing.T, p, out string) {
	t.Helper()
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer the link left there (%v)", p, err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out, p); err != nil {
		t.Fatal(err)
	}
}

// TestOutcomeFTSRebuildSignalAfterCommit: a SIGTERM right after fts rebuild's COMMIT does not
// turn the committed rebuild into "rolled back; nothing changed": it is reported applied, with
// its journal kept and named.
func TestOutcomeFTSRebuildSignalAfterCommit(t *testing.T) {
	home := fixtureHome(t, "r0817-481156139")
	execSQL(t, filepath.Join(home, "state.db"), "INSERT INTO messages_fts(messages_fts) VALUES('delete-all')")
	fault := []string{sessionsjson.FaultPointEnv + "=" + statedb.FaultAfterCommit + ":sigterm"}
	_, envl, stderr := runOutcome(t, fault, home, "fts", "rebuild", "--apply")
	if !envl.Applied || len(envl.Journals) != 1 {
		t.Fatalf("envelope %+v, stderr %s; want applied with its journal", envl, stderr)
	}
	if _, err := os.Stat(envl.Journals[0]); err != nil {
		t.Errorf("journal: %v", err)
	}
}

// TestOutcomeMirrorPutBackNotDurable (issue 31): resume mark on a db-primary home where every
// sync of the sessions/ directory fails after its rename (injected, as EIO on that fsync):
// the mirror's write fails inside the transaction, which rolls back, and the put-back of the
// original mirror lands (its own directory sync failing too). Nothing is left changed — the
// home is byte for byte as before — so the exit is 5, not 6, with no journal left.
func TestOutcomeMirrorPutBackNotDurable(t *testing.T) {
	home := fixtureHome(t, genDB)
	before := imageOf(t, home)
	fault := []string{sessionsjson.FaultPointEnv + "=" + sessionsjson.FaultAfterRename + ":fail"}
	code, envl, stderr := runOutcome(t, fault, home, "resume", "mark", keyBoth, "--apply")
	if code != ExitWrite || envl.Error == nil || envl.Error.Kind != "write" || envl.Applied || len(envl.Journals) != 0 {
		t.Fatalf("exit %d, envelope %+v: %s; want exit 5, nothing applied, no journal", code, envl, stderr)
	}
	if js := journals(t, home); len(js) != 0 {
		t.Errorf("journals left: %v", js)
	}
	if tmps := tempFiles(t, filepath.Join(home, "sessions")); len(tmps) > 1 { // the fixture's own leftover
		t.Errorf("temp files left: %v", tmps)
	}
	assertSameImage(t, "after the failed write", imageOf(t, home), before)
}
