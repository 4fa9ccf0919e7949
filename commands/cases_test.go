package commands

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// fixtureNow is the frozen clock of every fixture generation.
const fixtureNow = "2026-07-16T09:30:00.250000Z"

// runCLI runs sessionctl in-process and returns its exit code, stdout and stderr.
func runCLI(t testing.TB, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append([]string{"sessionctl"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// forEachCase runs fn as a parallel subtest, on a fresh copy of the generation's home, for
// every case of every generation that has sessionctl arguments (and, with inGenerationOnly,
// that the generation's runtime has). args are the case's arguments after --home and --now.
func forEachCase(t *testing.T, inGenerationOnly bool, fn func(t *testing.T, gen string, c fixtureCase, home string, args []string)) {
	for _, gen := range fxRequireGenerations(t) {
		for _, c := range loadCases(t, gen) {
			if c.CLIArgs == nil || (inGenerationOnly && !c.InGeneration) {
				continue
			}
			t.Run(gen+"/"+c.Name, func(t *testing.T) {
				t.Parallel()
				home := copyFixtureHome(t, gen)
				fn(t, gen, c, home, append([]string{"--home", home, "--now", fixtureNow}, c.CLIArgs...))
			})
		}
	}
}

// TestFixtureCases applies every case of expected/cases.json to a copy of its generation's
// home and compares the result with the runtime's own expected dump.
func TestFixtureCases(t *testing.T) {
	forEachCase(t, false, func(t *testing.T, gen string, c fixtureCase, home string, args []string) {
		code, stdout, stderr := runCLI(t, append(args, "--apply")...)
		if !c.InGeneration {
			if code != ExitData {
				t.Fatalf("%s is not in %s: exit %d, want %d\nstderr: %s", c.Name, gen, code, ExitData, stderr)
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, gen, "before"))
			return
		}
		if code != ExitOK {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		compareDump(t, dumpHome(t, home), loadExpected(t, gen, c.Name))
	})
}

// TestFixtureCasesIdempotent applies each case twice: the second run must plan nothing.
func TestFixtureCasesIdempotent(t *testing.T) {
	forEachCase(t, true, func(t *testing.T, gen string, c fixtureCase, home string, args []string) {
		if code, _, stderr := runCLI(t, append(args, "--apply")...); code != ExitOK {
			t.Fatalf("first apply: exit %d: %s", code, stderr)
		}
		before := len(journals(t, home))
		code, stdout, stderr := runCLI(t, append(args, "--apply")...)
		if code != ExitOK {
			t.Fatalf("second apply: exit %d: %s", code, stderr)
		}
		if !bytes.Contains([]byte(stdout), []byte("nothing to change")) || len(journals(t, home)) != before {
			t.Fatalf("second apply changed something:\n%s", stdout)
		}
		compareDump(t, dumpHome(t, home), loadExpected(t, gen, c.Name))
	})
}

// TestFixtureCasesUndo applies each case, undoes it from its journal, and expects the
// untouched dump back.
func TestFixtureCasesUndo(t *testing.T) {
	forEachCase(t, true, func(t *testing.T, gen string, c fixtureCase, home string, args []string) {
		if code, _, stderr := runCLI(t, append(args, "--apply")...); code != ExitOK {
			t.Fatalf("apply: exit %d: %s", code, stderr)
		}
		paths := journals(t, home)
		if len(paths) == 0 {
			return // nothing was changed (a case where the runtime writes nothing)
		}
		code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", paths[0], "--apply")
		if code != ExitOK {
			t.Fatalf("undo: exit %d\n%s\n%s", code, stdout, stderr)
		}
		compareDump(t, dumpHome(t, home), loadExpected(t, gen, "before"))
	})
}

func journals(t testing.TB, home string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}
