package commands

// Crash tests (issue requirement): "a child process killed at random points while rewriting a
// large sessions.json leaves either the old or the new file, always parseable". The same for
// state.db repairs: a killed finalize-orphans / prune-ghosts leaves the database untouched or
// fully repaired, and intact.
//
// Two kinds: TestCrashFaultPoints stops the child deterministically at every fault point of
// the write paths (inside the atomic file write and around the state.db COMMIT) and asserts
// the home it leaves, its journal and undo; the random-delay loops (TestCrashRewriteSessionsJSON,
// TestCrashStateDBRepair) kill it wherever it happens to be, which is mostly not inside a
// write, and assert that whatever state that leaves is sound.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// scale returns the number of entries of the inflated sessions.json and the number of
// killed runs of each random-delay loop. Under the race detector every child process is
// several times slower (a full 20,000-entry rewrite takes ~5 s instead of ~0.5 s) and the
// kills hardly ever land inside the write, so the loops are scaled down to keep the package's
// run time reasonable (the write window itself is TestCrashFaultPoints' work); the plain run
// is the full test.
func scale() (entries, jsonRuns, dbRuns int) {
	if raceEnabled() {
		return 2000, 6, 4
	}
	return 20000, 30, 15
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// killSeed seeds the kill delays, so that a failing run can be repeated.
const killSeed = 20260716

// inflateHome rewrites home's sessions.json (written by the runtime with indent=2) with
// clones of its first entry under new keys until it holds n entries. _README stays first and
// every original member keeps its bytes; the clones follow the last original member.
func inflateHome(t testing.TB, home string, n int) {
	t.Helper()
	path := sessionsJSONPath(home)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not an object", path)
	}
	var protoKey string
	var proto json.RawMessage
	entries := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		key := tok.(string)
		if strings.HasPrefix(key, "_") {
			continue
		}
		entries++
		if proto == nil && bytes.HasPrefix(raw, []byte("{")) {
			protoKey, proto = key, raw
		}
	}
	if proto == nil {
		t.Fatalf("%s: no entry to clone", path)
	}
	end := bytes.LastIndexByte(data, '}')
	var b bytes.Buffer
	b.Write(bytes.TrimRight(data[:end], " \t\r\n"))
	oldKey, _ := json.Marshal(protoKey)
	for i := entries; i < n; i++ {
		key := fmt.Sprintf("agent:main:telegram:dm:9%09d", i)
		newKey, _ := json.Marshal(key)
		clone := bytes.Replace(proto, append([]byte(`"session_key": `), oldKey...), append([]byte(`"session_key": `), newKey...), 1)
		b.WriteString(",\n  ")
		b.Write(newKey)
		b.WriteString(": ")
		b.Write(clone)
	}
	b.WriteString("\n")
	b.Write(data[end:])
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// killChild starts cmd, SIGKILLs it after delay (if it is still running) and waits for it.
// It reports whether the process had already exited by itself.
func killChild(t testing.TB, home string, delay time.Duration, args ...string) (exited bool, code int) {
	// exited: the child finished by itself (code is its exit code); false: it was killed.
	t.Helper()
	cmd := childCmd(t, 0, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(delay):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("child %d did not die after SIGKILL", cmd.Process.Pid)
		}
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return false, -1
	}
	assertCleanStderr(t, "child", stderr.String())
	return true, cmd.ProcessState.ExitCode()
}

// killDelays returns n seeded delays spread over [0, span): half uniformly, half
// concentrated in the last third, where the rewrite happens.
func killDelays(n int, span time.Duration, seed int64) []time.Duration {
	rng := rand.New(rand.NewSource(seed))
	out := make([]time.Duration, n)
	for i := range out {
		if i%2 == 0 {
			out[i] = time.Duration(rng.Int63n(int64(span)))
		} else {
			out[i] = span/3 + time.Duration(rng.Int63n(int64(span*2/3)))
		}
	}
	return out
}

// TestCrashRewriteSessionsJSON kills `suspend KEY --apply` on a 20,000-entry json-primary
// home at random points: sessions.json is always byte-equal to the old file or to the fully
// applied new one (both parseable JSON objects with _README first), and `check` afterwards
// neither crashes nor reports a corrupt file.
func TestCrashRewriteSessionsJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop skipped in -short mode")
	}
	t.Parallel()
	killEntries, runs, _ := scale()
	home := fixtureHome(t, genJSON)
	inflateHome(t, home, killEntries)
	path := sessionsJSONPath(home)
	oldBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"suspend", keyBoth, "--apply"}

	// the new bytes: the same command, run to completion on a separate copy
	refHome := fixtureHome(t, genJSON)
	inflateHome(t, refHome, killEntries)
	start := time.Now()
	if code, _, stderr := runChild(t, 0, append([]string{"--home", refHome, "--now", fixtureNow}, args...)...); code != ExitOK {
		t.Fatalf("reference run: exit %d: %s", code, stderr)
	}
	full := time.Since(start)
	newBytes, err := os.ReadFile(sessionsJSONPath(refHome))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"old": oldBytes, "new": newBytes} {
		keys, values, err := decodeOrderedObject(data)
		if err != nil {
			t.Fatalf("%s sessions.json does not parse: %v", name, err)
		}
		if len(keys) != killEntries+1 || keys[0] != "_README" {
			t.Fatalf("%s sessions.json: %d keys, first %q", name, len(keys), keys[0])
		}
		want := name == "new"
		if got := values[keyBoth].(map[string]any)["suspended"]; got != want {
			t.Fatalf("%s sessions.json: suspended = %v", name, got)
		}
	}
	if bytes.Equal(oldBytes, newBytes) {
		t.Fatal("the command changes nothing")
	}

	span := full + full/5
	tmpsBefore := tempFiles(t, filepath.Join(home, "sessions"))
	var sawOld, sawNew, killed, leftTmp, checks int
	for i, delay := range killDelays(runs, span, killSeed) {
		if err := os.WriteFile(path, oldBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		exited, code := killChild(t, home, delay, args...)
		if exited && code != ExitOK {
			t.Fatalf("run %d: the unkilled child exited %d", i, code)
		}
		if !exited {
			killed++
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("run %d (killed after %v): %v", i, delay, err)
		}
		switch {
		case bytes.Equal(got, oldBytes):
			sawOld++
		case bytes.Equal(got, newBytes):
			sawNew++
		default:
			_, _, perr := decodeOrderedObject(got)
			t.Fatalf("run %d (killed after %v): sessions.json is neither the old nor the new file (%d bytes; parse error: %v)", i, delay, len(got), perr)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("run %d: sessions.json mode %v (%v), want 0644", i, fi.Mode().Perm(), err)
		}
		var newTmps []string
		for _, tmp := range tempFiles(t, filepath.Join(home, "sessions")) {
			if !slices.Contains(tmpsBefore, tmp) {
				newTmps = append(newTmps, tmp)
			}
		}
		if len(newTmps) > 0 {
			leftTmp++ // killed in the middle of writing the temp file
		}
		// sessions.json is byte-equal to one of two files, so check is run on each distinct
		// outcome (old, new, old with a half-written temp file) rather than after every run,
		// which keeps the loop within its time budget.
		if (sawOld == 1 && bytes.Equal(got, oldBytes)) || (sawNew == 1 && bytes.Equal(got, newBytes)) || (len(newTmps) > 0 && leftTmp <= 2) || i == runs-1 {
			checks++
			code, stdout, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "check")
			if code != ExitOK && code != ExitFindings {
				t.Errorf("run %d: check exit %d: %s", i, code, stderr)
			}
			assertCleanStderr(t, "check", stderr)
			if strings.Contains(stdout, "sessions-json.unreadable") || strings.Contains(stdout, "corrupt") {
				t.Errorf("run %d: check reports a damaged sessions.json:\n%.2000s", i, stdout)
			}
		}
		// Leftover temp files of a killed save are what the runtime leaves too (check warns
		// about them); remove them so the next run starts clean.
		for _, tmp := range newTmps {
			os.Remove(tmp)
		}
		for _, j := range journals(t, home) {
			os.Remove(j)
		}
	}
	t.Logf("%d runs (full run %v): %d killed (%d while writing the temp file), old file %d times, new file %d times; check run %d times",
		runs, full.Round(time.Millisecond), killed, leftTmp, sawOld, sawNew, checks)
}

// dBCase is a state.db repair run killed at random points.
type dBCase struct {
	args     []string
	expected string   // the fixture's expected dump of the applied repair
	skipKeys []string // dump keys not compared (files removed after the commit)
}

// TestCrashStateDBRepair kills finalize-orphans / prune-ghosts --apply on copies of the
// db-primary fixture at random points: afterwards check does not crash, PRAGMA
// integrity_check is ok and the database dump equals either expected/before.json or the
// repair's expected dump. For prune-ghosts the transcript files are removed after the
// commit, so a kill in between may leave some; the files kept must include every file of
// the repaired home and be within those of the untouched one.
func TestCrashStateDBRepair(t *testing.T) {
	if testing.Short() {
		t.Skip("crash loop skipped in -short mode")
	}
	cases := []dBCase{
		{args: []string{"finalize-orphans", "--apply"}, expected: "finalize-orphans"},
		{args: []string{"prune-ghosts", "--apply"}, expected: "prune-ghosts", skipKeys: []string{"sessions_files"}},
	}
	gen := genDB
	before := loadExpected(t, gen, "before")
	for ci, c := range cases {
		t.Run(c.expected, func(t *testing.T) {
			t.Parallel()
			after := loadExpected(t, gen, c.expected)
			refHome := fixtureHome(t, gen)
			start := time.Now()
			if code, _, stderr := runChild(t, 0, append([]string{"--home", refHome, "--now", fixtureNow}, c.args...)...); code != ExitOK {
				t.Fatalf("reference run: exit %d: %s", code, stderr)
			}
			full := time.Since(start)
			compareDump(t, dumpHome(t, refHome), after)

			_, _, runs := scale()
			var sawBefore, sawAfter, killed int
			for i, delay := range killDelays(runs, full+full/5, killSeed+int64(ci)) {
				home := fixtureHome(t, gen)
				exited, code := killChild(t, home, delay, c.args...)
				if exited && code != ExitOK {
					t.Fatalf("run %d: the unkilled child exited %d", i, code)
				}
				if !exited {
					killed++
				}
				ccode, _, cerr := runChild(t, 0, "--home", home, "--now", fixtureNow, "check")
				if ccode != ExitOK && ccode != ExitFindings {
					t.Errorf("run %d (killed after %v): check exit %d: %s", i, delay, ccode, cerr)
				}
				assertCleanStderr(t, "check", cerr)
				assertIntegrity(t, filepath.Join(home, "state.db"))
				got := dumpHome(t, home)
				files, _ := got["sessions_files"].([]any)
				for _, k := range c.skipKeys {
					delete(got, k)
				}
				dBefore := diffDump(got, dumpWithout(before, c.skipKeys))
				dAfter := diffDump(got, dumpWithout(after, c.skipKeys))
				switch {
				case len(dBefore) == 0:
					sawBefore++
				case len(dAfter) == 0:
					sawAfter++
				default:
					t.Fatalf("run %d (killed after %v): the database is neither untouched nor fully repaired:\nvs before:\n%s\nvs repaired:\n%s",
						i, delay, strings.Join(dBefore[:min(10, len(dBefore))], "\n"), strings.Join(dAfter[:min(10, len(dAfter))], "\n"))
				}
				if slices.Contains(c.skipKeys, "sessions_files") {
					filesBetween(t, fmt.Sprintf("run %d", i), files, before["sessions_files"], after["sessions_files"], len(dBefore) == 0 && len(dAfter) > 0)
				}
			}
			t.Logf("%d runs (full run %v): %d killed, untouched %d, repaired %d", runs, full.Round(time.Millisecond), killed, sawBefore, sawAfter)
		})
	}
}

// dumpWithout returns a shallow copy of dump without keys.
func dumpWithout(dump map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(dump))
	for k, v := range dump {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// filesBetween checks that the transcript files left after a killed prune lie between the
// repaired set and the untouched set; an untouched database must keep every file (they are
// removed only after the commit).
func filesBetween(t testing.TB, what string, got []any, before, after any, untouchedDB bool) {
	t.Helper()
	set := func(v any) map[string]bool {
		m := map[string]bool{}
		list, _ := v.([]any)
		for _, x := range list {
			m[fmt.Sprint(x)] = true
		}
		return m
	}
	g, b, a := set(got), set(before), set(after)
	for f := range a {
		if !g[f] {
			t.Errorf("%s: %s was removed although the repaired home keeps it", what, f)
		}
	}
	for f := range g {
		if !b[f] {
			t.Errorf("%s: unexpected file %s", what, f)
		}
	}
	if untouchedDB && len(g) != len(b) {
		t.Errorf("%s: the database is untouched but transcript files were removed (%d of %d left)", what, len(g), len(b))
	}
}

// Outcomes of a killed run, per store that the command changes.
const (
	killedUntouched   = "untouched"                                         // every store holds its before-image
	killedApplied     = "applied"                                           // every store holds its after-image
	killedMirrorAhead = "split: sessions.json mirror applied, state.db not" // the db-primary mirror was renamed in, the transaction never committed
)

// faultGroup is one command on one fixture home, killed at each of its fault points.
type faultGroup struct {
	home     string            // "json-primary" or "db-primary": the first part of the case name
	gen      string            // the fixture generation
	name     string            // the command, the second part of the case name
	args     []string          // the command line after --home and --now
	expected string            // the fixture's expected dump of the completed command
	points   map[string]string // fault point → the outcome the kill must leave
}

// faultGroups are the commands and the fault points on their write paths: a routing
// rewrite on a json-primary home (sessions.json is the only store), the same on a db-primary
// home (gateway_routing, with the mirror written inside the transaction), and the two state.db
// repairs (journal written inside the transaction, transcripts stashed after the commit).
func faultGroups() []faultGroup {
	jsonPoints := map[string]string{
		journal.FaultJournalTorn:         killedUntouched,
		journal.FaultJournalBeforeRename: killedUntouched,
		sessionsjson.FaultAfterTempWrite: killedUntouched,
		sessionsjson.FaultAfterTempSync:  killedUntouched,
		sessionsjson.FaultAfterRename:    killedApplied,
	}
	dbRoutingPoints := map[string]string{
		journal.FaultJournalTorn:         killedUntouched,
		journal.FaultJournalBeforeRename: killedUntouched,
		sessionsjson.FaultAfterTempWrite: killedUntouched,
		sessionsjson.FaultAfterTempSync:  killedUntouched,
		sessionsjson.FaultAfterRename:    killedMirrorAhead,
		statedb.FaultBeforeCommit:        killedMirrorAhead,
		statedb.FaultAfterCommit:         killedApplied,
	}
	repairPoints := map[string]string{
		journal.FaultJournalTorn:         killedUntouched,
		journal.FaultJournalBeforeRename: killedUntouched,
		statedb.FaultBeforeCommit:        killedUntouched,
		statedb.FaultAfterCommit:         killedApplied,
	}
	suspend := []string{"suspend", keyBoth, "--apply"}
	mark := []string{"resume", "mark", keyBoth, "--apply"}
	return []faultGroup{
		{"json-primary", genJSON, "suspend", suspend, "suspend", jsonPoints},
		{"json-primary", genJSON, "resume-mark", mark, "resume-mark", jsonPoints},
		{"db-primary", genDB, "suspend", suspend, "suspend", dbRoutingPoints},
		{"db-primary", genDB, "resume-mark", mark, "resume-mark", dbRoutingPoints},
		{"db-primary", genDB, "finalize-orphans", []string{"finalize-orphans", "--apply"}, "finalize-orphans", repairPoints},
		{"db-primary", genDB, "prune-ghosts", []string{"prune-ghosts", "--apply"}, "prune-ghosts", repairPoints},
	}
}

// homeImage is what a home holds, split by store: sessions.json's bytes, the dump of
// state.db (and the counts file) without what comes from sessions.json, and the transcript
// files.
type homeImage struct {
	json  []byte
	db    map[string]any
	files []any
}

// imageOf reads home's image; state.db is first opened read-write and checked (PRAGMA
// integrity_check), which runs the recovery the next opener would.
func imageOf(t testing.TB, home string) homeImage {
	t.Helper()
	assertIntegrity(t, filepath.Join(home, "state.db"))
	data, err := os.ReadFile(sessionsJSONPath(home))
	if err != nil {
		t.Fatal(err)
	}
	dump := dumpHome(t, home)
	files, _ := dump["sessions_files"].([]any)
	drop := []string{"sessions_json", "routing_mirror", "sessions_files"}
	if dump["storage"] == "json-primary" {
		drop = append(drop, "routing") // read from sessions.json
	}
	return homeImage{json: data, db: dumpWithout(dump, drop), files: files}
}

// killOutcome classifies got against the before and after images of a command, store by
// store; a store holding neither image fails the test at once (a torn or half-applied store).
func killOutcome(t testing.TB, got, before, after homeImage) string {
	t.Helper()
	jsonChanges := !bytes.Equal(before.json, after.json)
	dbChanges := len(diffDump(after.db, before.db)) > 0
	jsonAfter := jsonChanges && bytes.Equal(got.json, after.json)
	if !bytes.Equal(got.json, before.json) && !jsonAfter {
		_, _, perr := decodeOrderedObject(got.json)
		t.Fatalf("sessions.json is neither the before- nor the after-image (%d bytes; parse error: %v)", len(got.json), perr)
	}
	dBefore, dAfter := diffDump(got.db, before.db), diffDump(got.db, after.db)
	dbAfter := dbChanges && len(dAfter) == 0
	if len(dBefore) > 0 && !dbAfter {
		t.Fatalf("state.db is neither untouched nor fully changed:\nvs before:\n%s\nvs after:\n%s",
			strings.Join(dBefore[:min(10, len(dBefore))], "\n"), strings.Join(dAfter[:min(10, len(dAfter))], "\n"))
	}
	switch {
	case jsonAfter == jsonChanges && dbAfter == dbChanges:
		return killedApplied
	case !jsonAfter && !dbAfter:
		return killedUntouched
	case jsonAfter && !dbAfter:
		return killedMirrorAhead
	}
	return "split: state.db applied, sessions.json not"
}

// runToFault runs args on home in a child process that SIGKILLs itself at point, and
// fails unless the child died of SIGKILL (it cannot have been killed elsewhere: nothing else
// signals it).
func runToFault(t testing.TB, home, point string, args []string) {
	t.Helper()
	cmd := childCmd(t, 0, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
	cmd.Env = append(cmd.Env, sessionsjson.FaultPointEnv+"="+point)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("start child: %v", err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child did not die at %s: %v\nstdout: %.2000s\nstderr: %s", point, cmd.ProcessState, stdout.String(), stderr.String())
	}
	assertCleanStderr(t, "killed child", stderr.String())
}

// newTempFiles returns the temporary files (the runtime's .sessions_*.tmp, sessionctl's own) in
// home's sessions directory and in the home itself that are not
// in before.
func newTempFiles(t testing.TB, home string, before []string) []string {
	t.Helper()
	var out []string
	for _, tmp := range tempFiles(t, filepath.Join(home, "sessions"), home) {
		if !slices.Contains(before, tmp) {
			out = append(out, tmp)
		}
	}
	return out
}

// TestCrashFaultPoints kills each command at each fault point on its write path (the child
// SIGKILLs itself there: no deferred cleanup runs) and asserts:
//   - the child died of SIGKILL (a point that is not reached, or a write that no longer
//     passes through it, fails here);
//   - sessions.json is byte-equal to its before- or after-image, state.db passes
//     integrity_check and dumps equal to its before- or after-image, and the pair is the
//     outcome the case table names (untouched, applied, or a mirror ahead of the database);
//   - a kill between the temp file and the rename leaves that temp file, of sessionctl's own
//     name, holding exactly the after-image, and sessions.json keeps its mode;
//   - the journal exists (every point but journal.before-rename lies after it is written; at
//     journal.torn it is cut at a random byte) and check runs cleanly, reporting a torn journal
//     and sessionctl's temp file as such (never as the runtime's);
//   - `undo JOURNAL --apply` of every journal left, newest first, restores the before-image
//     exactly, whatever the point (the parts of the change that never landed are left alone; a
//     torn journal is settled), and removes sessionctl's temp file; after
//     journal.before-rename the next run of the command removes the journal's temp file.
func TestCrashFaultPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests skipped in -short mode")
	}
	t.Parallel()
	for _, g := range faultGroups() {
		t.Run(g.home+"/"+g.name, func(t *testing.T) {
			t.Parallel()
			before := imageOf(t, fixtureHome(t, g.gen))
			// The after-image: the same command, run to completion on a copy, with a fault
			// point selected that does not exist (fault points are inert unless named).
			refHome := fixtureHome(t, g.gen)
			ref := childCmd(t, 0, append([]string{"--home", refHome, "--now", fixtureNow}, g.args...)...)
			ref.Env = append(ref.Env, sessionsjson.FaultPointEnv+"=crash.no-such-point")
			if out, err := ref.CombinedOutput(); err != nil {
				t.Fatalf("reference run: %v\n%s", err, out)
			}
			refDump := dumpHome(t, refHome)
			compareDump(t, refDump, loadExpected(t, g.gen, g.expected))
			after := imageOf(t, refHome)
			for point, want := range g.points {
				t.Run(point, func(t *testing.T) {
					t.Parallel()
					faultCase(t, g, point, want, before, after)
				})
			}
		})
	}
}

// faultCase runs one (command, fault point) case of TestCrashFaultPoints and returns the home,
// undone to its before-image.
func faultCase(t *testing.T, g faultGroup, point, want string, before, after homeImage) string {
	home := fixtureHome(t, g.gen)
	sj := sessionsJSONPath(home)
	fi, err := os.Stat(sj)
	if err != nil {
		t.Fatal(err)
	}
	mode := fi.Mode().Perm()
	tmpsBefore := tempFiles(t, filepath.Join(home, "sessions"), home)

	runToFault(t, home, point, g.args)

	got := imageOf(t, home)
	outcome := killOutcome(t, got, before, after)
	if outcome != want {
		t.Errorf("killed at %s: %s, want %s", point, outcome, want)
	}
	if fi, err := os.Stat(sj); err != nil || fi.Mode().Perm() != mode {
		t.Errorf("sessions.json mode %v (%v), want %v", fi.Mode().Perm(), err, mode)
	}
	tmps := newTempFiles(t, home, tmpsBefore)
	if point == sessionsjson.FaultAfterTempWrite || point == sessionsjson.FaultAfterTempSync {
		// sessionctl's own temp file (never the runtime's name): its journal names it
		if len(tmps) != 1 || !strings.HasPrefix(filepath.Base(tmps[0]), ".sessionctl-") {
			t.Fatalf("killed at %s: new temp files %v, want one of sessionctl's own", point, tmps)
		}
		if data, err := os.ReadFile(tmps[0]); err != nil || !bytes.Equal(data, after.json) {
			t.Errorf("killed at %s: the temp file is not the complete after-image (%d bytes, %v)", point, len(data), err)
		}
	} else if len(tmps) > 0 {
		t.Errorf("killed at %s: temp files left: %v", point, tmps)
	}
	if g.name == "prune-ghosts" {
		filesBetween(t, point, got.files, before.files, after.files, outcome == killedUntouched)
	}
	js := journals(t, home)
	wantJournals := 1 // every other fault point lies after the journal is written
	if point == journal.FaultJournalBeforeRename {
		wantJournals = 0 // its temporary file only
	}
	if len(js) != wantJournals {
		t.Fatalf("killed at %s: %d journals, want %d", point, len(js), wantJournals)
	}

	code, stdout, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "check")
	if code != ExitOK && code != ExitFindings {
		t.Errorf("check: exit %d: %s", code, stderr)
	}
	assertCleanStderr(t, "check", stderr)
	if strings.Contains(stdout, "sessions-json.unreadable") || strings.Contains(stdout, "corrupt") || strings.Contains(stdout, "sessions-json.leftover-tmp .sessionctl-") {
		t.Errorf("check reports a damaged store, or sessionctl's temp file as the runtime's:\n%.2000s", stdout)
	}
	if len(tmps) > 0 && !strings.Contains(stdout, "journal.leftover-tmp") {
		t.Errorf("check does not report sessionctl's own temp file:\n%.2000s", stdout)
	}
	if point == journal.FaultJournalTorn && !strings.Contains(stdout, "journal.torn") {
		t.Errorf("check does not report the torn journal:\n%.2000s", stdout)
	}
	// an entry edited in the mirror differs from its row; one removed from it is missing there
	if outcome == killedMirrorAhead && !strings.Contains(stdout, "routing.mirror-differs") && !strings.Contains(stdout, "routing.mirror-missing") {
		t.Errorf("check does not report the mirror ahead of gateway_routing:\n%.2000s", stdout)
	}

	if point == journal.FaultJournalBeforeRename { // the next write settles the temporary file, then is undone
		code, stdout, stderr = runChild(t, 0, append([]string{"--home", home, "--now", fixtureNow}, g.args...)...)
		if code != ExitOK {
			t.Fatalf("the next run: exit %d\nstdout: %.2000s\nstderr: %s", code, stdout, stderr)
		}
		if left, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", ".journal_*.tmp")); len(left) > 0 {
			t.Errorf("the next write left the journal's temporary file: %v", left)
		}
		js = journals(t, home)
	}
	for i := len(js) - 1; i >= 0; i-- { // every journal left, newest first
		code, stdout, stderr = runChild(t, 0, "--home", home, "--now", fixtureNow, "undo", js[i], "--apply")
		if code != ExitOK {
			t.Fatalf("killed at %s (%s): undo %s: exit %d\nstdout: %.2000s\nstderr: %s", point, outcome, js[i], code, stdout, stderr)
		}
		if point == journal.FaultJournalTorn && !strings.Contains(stderr, "torn") {
			t.Errorf("undo of a torn journal does not say so: %s", stderr)
		}
	}
	if left := newTempFiles(t, home, tmpsBefore); len(left) > 0 {
		t.Errorf("killed at %s: undo left sessionctl's temp files: %v", point, left)
	}
	if left := journals(t, home); point == journal.FaultJournalTorn && len(left) > 0 {
		t.Errorf("killed at %s: the torn journal is still listed: %v", point, left)
	}
	assertSameImage(t, "after undo", imageOf(t, home), before)
	return home
}

// assertSameImage fails unless got equals want in every store.
func assertSameImage(t testing.TB, what string, got, want homeImage) {
	t.Helper()
	if !bytes.Equal(got.json, want.json) {
		t.Errorf("%s: sessions.json differs (%d bytes, want %d)", what, len(got.json), len(want.json))
	}
	if d := diffDump(got.db, want.db); len(d) > 0 {
		t.Errorf("%s: state.db differs:\n%s", what, strings.Join(d[:min(10, len(d))], "\n"))
	}
	if d := diffDump(map[string]any{"files": got.files}, map[string]any{"files": want.files}); len(d) > 0 {
		t.Errorf("%s: transcript files differ:\n%s", what, strings.Join(d[:min(10, len(d))], "\n"))
	}
}
