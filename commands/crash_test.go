package commands

// Crash tests (issue requirement): "a child process killed at random points while rewriting a
// large sessions.json leaves either the old or the new file, always parseable". The same for
// state.db repairs: a killed finalize-orphans / prune-ghosts leaves the database untouched or
// fully repaired, and intact.

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
)

// crashScale returns the number of entries of the inflated sessions.json and the number of
// killed runs of each loop. Under the race detector every child process is several times
// slower (a full 20,000-entry rewrite takes ~5 s instead of ~0.5 s), so the loops are
// scaled down to keep the package's run time reasonable; the plain run is the full test.
func crashScale() (entries, jsonRuns, dbRuns int) {
	if crashRaceEnabled() {
		return 4000, 12, 8
	}
	return 20000, 30, 15
}

// crashRaceEnabled reports whether the test binary was built with -race.
func crashRaceEnabled() bool {
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

// crashSeed seeds the kill delays, so that a failing run can be repeated.
const crashSeed = 20260716

// crashInflate rewrites home's sessions.json (written by the runtime with indent=2) with
// clones of its first entry under new keys until it holds n entries. _README stays first and
// every original member keeps its bytes; the clones follow the last original member.
func crashInflate(t testing.TB, home string, n int) {
	t.Helper()
	path := rbSessionsJSON(home)
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

// crashKill starts cmd, SIGKILLs it after delay (if it is still running) and waits for it.
// It reports whether the process had already exited by itself.
func crashKill(t testing.TB, home string, delay time.Duration, args ...string) (exited bool, code int) {
	// exited: the child finished by itself (code is its exit code); false: it was killed.
	t.Helper()
	cmd := rbChildCmd(t, 0, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
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
	rbAssertCleanStderr(t, "child", stderr.String())
	return true, cmd.ProcessState.ExitCode()
}

// crashDelays returns n seeded delays spread over [0, span): half uniformly, half
// concentrated in the last third, where the rewrite happens.
func crashDelays(n int, span time.Duration, seed int64) []time.Duration {
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
	crashEntries, runs, _ := crashScale()
	home := copyFixtureHome(t, rbGenJSON)
	crashInflate(t, home, crashEntries)
	path := rbSessionsJSON(home)
	oldBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"suspend", rbKey, "--apply"}

	// the new bytes: the same command, run to completion on a separate copy
	refHome := copyFixtureHome(t, rbGenJSON)
	crashInflate(t, refHome, crashEntries)
	start := time.Now()
	if code, _, stderr := rbRunChild(t, 0, append([]string{"--home", refHome, "--now", fixtureNow}, args...)...); code != ExitOK {
		t.Fatalf("reference run: exit %d: %s", code, stderr)
	}
	full := time.Since(start)
	newBytes, err := os.ReadFile(rbSessionsJSON(refHome))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"old": oldBytes, "new": newBytes} {
		keys, values, err := fxDecodeOrderedObject(data)
		if err != nil {
			t.Fatalf("%s sessions.json does not parse: %v", name, err)
		}
		if len(keys) != crashEntries+1 || keys[0] != "_README" {
			t.Fatalf("%s sessions.json: %d keys, first %q", name, len(keys), keys[0])
		}
		want := name == "new"
		if got := values[rbKey].(map[string]any)["suspended"]; got != want {
			t.Fatalf("%s sessions.json: suspended = %v", name, got)
		}
	}
	if bytes.Equal(oldBytes, newBytes) {
		t.Fatal("the command changes nothing")
	}

	span := full + full/5
	tmpsBefore := rbTempFiles(t, filepath.Join(home, "sessions"))
	var sawOld, sawNew, killed, leftTmp, checks int
	for i, delay := range crashDelays(runs, span, crashSeed) {
		if err := os.WriteFile(path, oldBytes, 0o644); err != nil {
			t.Fatal(err)
		}
		exited, code := crashKill(t, home, delay, args...)
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
			_, _, perr := fxDecodeOrderedObject(got)
			t.Fatalf("run %d (killed after %v): sessions.json is neither the old nor the new file (%d bytes; parse error: %v)", i, delay, len(got), perr)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("run %d: sessions.json mode %v (%v), want 0644", i, fi.Mode().Perm(), err)
		}
		var newTmps []string
		for _, tmp := range rbTempFiles(t, filepath.Join(home, "sessions")) {
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
			code, stdout, stderr := rbRunChild(t, 0, "--home", home, "--now", fixtureNow, "check")
			if code != ExitOK && code != ExitFindings {
				t.Errorf("run %d: check exit %d: %s", i, code, stderr)
			}
			rbAssertCleanStderr(t, "check", stderr)
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

// crashDBCase is a state.db repair run killed at random points.
type crashDBCase struct {
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
	cases := []crashDBCase{
		{args: []string{"finalize-orphans", "--apply"}, expected: "finalize-orphans"},
		{args: []string{"prune-ghosts", "--apply"}, expected: "prune-ghosts", skipKeys: []string{"sessions_files"}},
	}
	gen := rbGenDB
	before := loadExpected(t, gen, "before")
	for ci, c := range cases {
		t.Run(c.expected, func(t *testing.T) {
			t.Parallel()
			after := loadExpected(t, gen, c.expected)
			refHome := copyFixtureHome(t, gen)
			start := time.Now()
			if code, _, stderr := rbRunChild(t, 0, append([]string{"--home", refHome, "--now", fixtureNow}, c.args...)...); code != ExitOK {
				t.Fatalf("reference run: exit %d: %s", code, stderr)
			}
			full := time.Since(start)
			compareDump(t, dumpHome(t, refHome), after)

			_, _, runs := crashScale()
			var sawBefore, sawAfter, killed int
			for i, delay := range crashDelays(runs, full+full/5, crashSeed+int64(ci)) {
				home := copyFixtureHome(t, gen)
				exited, code := crashKill(t, home, delay, c.args...)
				if exited && code != ExitOK {
					t.Fatalf("run %d: the unkilled child exited %d", i, code)
				}
				if !exited {
					killed++
				}
				ccode, _, cerr := rbRunChild(t, 0, "--home", home, "--now", fixtureNow, "check")
				if ccode != ExitOK && ccode != ExitFindings {
					t.Errorf("run %d (killed after %v): check exit %d: %s", i, delay, ccode, cerr)
				}
				rbAssertCleanStderr(t, "check", cerr)
				rbIntegrityCheck(t, filepath.Join(home, "state.db"))
				got := dumpHome(t, home)
				files, _ := got["sessions_files"].([]any)
				for _, k := range c.skipKeys {
					delete(got, k)
				}
				dBefore := diffDump(got, crashWithout(before, c.skipKeys))
				dAfter := diffDump(got, crashWithout(after, c.skipKeys))
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
					crashFilesBetween(t, i, files, before["sessions_files"], after["sessions_files"], len(dBefore) == 0 && len(dAfter) > 0)
				}
			}
			t.Logf("%d runs (full run %v): %d killed, untouched %d, repaired %d", runs, full.Round(time.Millisecond), killed, sawBefore, sawAfter)
		})
	}
}

// crashWithout returns a shallow copy of dump without keys.
func crashWithout(dump map[string]any, keys []string) map[string]any {
	out := make(map[string]any, len(dump))
	for k, v := range dump {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// crashFilesBetween checks that the transcript files left after a killed prune lie between the
// repaired set and the untouched set; an untouched database must keep every file (they are
// removed only after the commit).
func crashFilesBetween(t testing.TB, run int, got []any, before, after any, untouchedDB bool) {
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
			t.Errorf("run %d: %s was removed although the repaired home keeps it", run, f)
		}
	}
	for f := range g {
		if !b[f] {
			t.Errorf("run %d: unexpected file %s", run, f)
		}
	}
	if untouchedDB && len(g) != len(b) {
		t.Errorf("run %d: the database is untouched but transcript files were removed (%d of %d left)", run, len(g), len(b))
	}
}
