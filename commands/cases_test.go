package commands

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	for _, gen := range requireGenerations(t) {
		for _, c := range loadCases(t, gen) {
			if c.CLIArgs == nil || (inGenerationOnly && !c.InGeneration) {
				continue
			}
			t.Run(gen+"/"+c.Name, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, gen)
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
// untouched home back: the same dump (state.db, routing, counts, sessions files) and the same
// bytes in every file outside state.db and sessionctl/ (where --apply keeps its lock file
// and the journals). A case that writes nothing must leave the home untouched and write no
// journal.
func TestFixtureCasesUndo(t *testing.T) {
	forEachCase(t, true, func(t *testing.T, gen string, c fixtureCase, home string, args []string) {
		original := plainFiles(t, home)
		if code, _, stderr := runCLI(t, append(args, "--apply")...); code != ExitOK {
			t.Fatalf("apply: exit %d: %s", code, stderr)
		}
		paths := journals(t, home)
		runtimeChanges := len(diffDump(loadExpected(t, gen, c.Name), loadExpected(t, gen, "before"))) > 0
		switch {
		case len(paths) == 0 && runtimeChanges:
			t.Fatalf("apply wrote no journal, but the runtime changes the home in %s", c.Name)
		case len(paths) > 0 && !runtimeChanges:
			t.Fatalf("apply wrote %v, but the runtime leaves the home as it is in %s", paths, c.Name)
		case len(paths) == 0:
			// nothing was changed (a case where the runtime writes nothing): nothing to undo,
			// and the home must be as it was
		case len(paths) > 1:
			t.Fatalf("apply wrote %d journals: %v", len(paths), paths)
		default:
			code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", paths[0], "--apply")
			if code != ExitOK {
				t.Fatalf("undo: exit %d\n%s\n%s", code, stdout, stderr)
			}
		}
		compareDump(t, dumpHome(t, home), loadExpected(t, gen, "before"))
		comparePlainFiles(t, plainFiles(t, home), original)
	})
}

// plainFiles reads every regular file of home except state.db and its sidecars and what
// sessionctl/ holds (journals and their stashes), by slash-separated relative path.
func plainFiles(t testing.TB, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(home, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && rel == "sessionctl":
			return filepath.SkipDir
		case d.IsDir() || strings.HasPrefix(rel, "state.db"):
			return nil
		}
		data, err := os.ReadFile(path)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", home, err)
	}
	return out
}

// comparePlainFiles reports every file added, removed or changed.
func comparePlainFiles(t testing.TB, got, want map[string]string) {
	t.Helper()
	for name, data := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s is missing", name)
		} else if g != data {
			t.Errorf("%s differs from the original:\n got: %.300q\nwant: %.300q", name, g, data)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s was added", name)
		}
	}
}

func journals(t testing.TB, home string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}
