package commands

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain runs the test binary as sessionctl (and as the test helper programs) when
// testscript starts it under those names; otherwise it runs the tests with TZ=UTC, the zone
// the fixtures were written in.
func TestMain(m *testing.M) {
	os.Setenv("TZ", "UTC")
	time.Local = time.UTC
	testscript.Main(m, map[string]func(){
		"sessionctl": func() { os.Exit(Run(context.Background(), os.Args, os.Stdout, os.Stderr)) },
		"holdflock":  holdFlock,
		"holdopen":   holdOpen,
	})
}

// holdFlock is a helper program: `holdflock FILE READY [FOR]` creates FILE, holds an
// exclusive flock on it, creates READY, and sleeps until killed, or for FOR (a Go duration)
// and exits, letting go of the lock (a stand-in for a running gateway, or for another
// sessionctl writing the home).
func holdFlock() {
	hold := time.Hour
	if len(os.Args) == 4 {
		hold, _ = time.ParseDuration(os.Args[3])
	}
	if len(os.Args) < 3 || len(os.Args) > 4 || hold <= 0 {
		fmt.Fprintln(os.Stderr, "usage: holdflock FILE READY [FOR]")
		os.Exit(2)
	}
	f, err := os.OpenFile(os.Args[1], os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		err = flockExclusive(f, true)
	}
	if err == nil {
		err = os.WriteFile(os.Args[2], []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	untilInterrupted(hold)
}

// untilInterrupted returns after d, or as soon as SIGINT or SIGTERM arrives. testscript
// stops a background helper still running when a script ends (or fails) with SIGINT and
// waits for it without a bound: a helper that slept through it (SIGINT is ignored in a
// process started from a non-interactive shell's background job, and Go keeps it ignored
// unless asked) held the script, and the package, until the test binary's timeout (issue 31:
// TestScripts/maintain_quiet timed out once at full load). Asking for the signals installs
// a handler even where they were ignored.
func untilInterrupted(d time.Duration) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// holdOpen is a helper program: `holdopen FILE READY` opens FILE read-only, creates READY
// and sleeps until killed, holding the descriptor (a stand-in for a process that holds the
// database open, such as a gateway or a sqlite3 shell).
func holdOpen() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: holdopen FILE READY")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err == nil {
		err = os.WriteFile(os.Args[2], []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	untilInterrupted(time.Hour)
	f.Close()
}

// scriptCmds are the scripts' own commands (a platform's test files may add theirs).
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"exitcode":     cmdExitCode,
	"fixture":      cmdFixture,
	"synthetic":    cmdSynthetic,
	"upgradepair":  cmdUpgradePair,
	"waitfile":     cmdWaitFile,
	"dumpmatch":    cmdDumpMatch,
	"hygienematch": cmdHygieneMatch,
	"sqlexec":      cmdSQLExec,
	"homesnap":     cmdHomeSnap,
	"need":         cmdNeed,
	"genhome":      cmdGenhome,
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("TZ", "UTC")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("NOW", "2026-07-16T09:30:00.250000Z")
			return nil
		},
		Cmds: scriptCmds,
		Condition: func(cond string) (bool, error) { // [file:PATH]: PATH exists
			path, ok := strings.CutPrefix(cond, "file:")
			if !ok {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, err := os.Stat(path)
			return err == nil, nil
		},
	})
}

// cmdExitCode runs `exitcode N prog args...` and fails unless prog exits with N.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdFixture copies a fixture generation's home: `fixture GEN DIR` (GEN may be a prefix such
// as r0715).
func cmdFixture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fixture GEN DIR")
	}
	fixtureHomeAt(ts, fullGeneration(ts, args[0]), ts.MkAbs(args[1]))
}

// cmdSynthetic copies the synthetic v30 home (testdata/synthetic-v30), relocated:
// `synthetic DIR`.
func cmdSynthetic(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: synthetic DIR")
	}
	syntheticHomeAt(ts, ts.MkAbs(args[0]))
}

// cmdUpgradePair copies the home of an upgrade pair (testdata/upgrade/<PAIR>), its
// gateway_routing rows relocated: `upgradepair PAIR DIR`.
func cmdUpgradePair(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: upgradepair PAIR DIR")
	}
	dst := ts.MkAbs(args[1])
	if err := copyTree(filepath.Join(fixturesRoot, "..", "upgrade", args[0], "home"), dst); err != nil {
		ts.Fatalf("copy the pair's home: %v", err)
	}
	old := "/home/hermes/fixtures/upgrade/" + args[0] + "/home/sessions"
	if err := relocateRouting(filepath.Join(dst, "state.db"), old, resolvedSessionsDir(dst)); err != nil {
		ts.Fatalf("relocate: %v", err)
	}
}

// cmdDumpMatch compares a home's dump with a fixture's expected dump:
// `dumpmatch HOME GEN CASE` (CASE "before" for the untouched home).
func cmdDumpMatch(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: dumpmatch HOME GEN CASE")
	}
	rec := &scriptTB{ts: ts}
	got := dumpHome(rec, ts.MkAbs(args[0]))
	want := loadExpected(rec, fullGeneration(ts, args[1]), args[2])
	diffs := diffDump(got, want)
	switch {
	case neg && len(diffs) == 0:
		ts.Fatalf("dump unexpectedly matches %s", args[2])
	case !neg && len(diffs) > 0:
		ts.Fatalf("dump differs from %s:\n%s", args[2], strings.Join(diffs[:min(len(diffs), 20)], "\n"))
	}
}

// cmdHygieneMatch compares a home's hygiene dump (no physical fields) with a hygiene
// fixture's expected dump: `hygienematch HOME GEN CASE`.
func cmdHygieneMatch(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: hygienematch HOME GEN CASE")
	}
	rec := &scriptTB{ts: ts}
	diffs := diffDump(dumpHygiene(rec, ts.MkAbs(args[0]), false), loadHygieneExpected(rec, fullGeneration(ts, args[1]), args[2], false))
	switch {
	case neg && len(diffs) == 0:
		ts.Fatalf("dump unexpectedly matches %s", args[2])
	case !neg && len(diffs) > 0:
		ts.Fatalf("dump differs from %s:\n%s", args[2], strings.Join(diffs[:min(len(diffs), 20)], "\n"))
	}
}

// cmdWaitFile waits up to 10 s for a file to exist.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("timed out waiting for %s", args[0])
}

func fullGeneration(ts *testscript.TestScript, prefix string) string {
	for _, g := range fixtureGenerations() {
		if strings.HasPrefix(g, prefix) {
			return g
		}
	}
	ts.Fatalf("no fixture generation %q", prefix)
	return ""
}

// scriptTB adapts a TestScript to the testing.TB the dump helpers take.
type scriptTB struct {
	testing.TB
	ts *testscript.TestScript
}

func (s *scriptTB) Helper()                           {}
func (s *scriptTB) Fatalf(format string, args ...any) { s.ts.Fatalf(format, args...) }
func (s *scriptTB) Errorf(format string, args ...any) { s.ts.Fatalf(format, args...) }

// cmdSQLExec runs one SQL statement on a database: `sqlexec DB SQL`.
func cmdSQLExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sqlexec DB SQL")
	}
	db, err := sql.Open("sqlite", sqliteURI(ts.MkAbs(args[0]), "rw"))
	if err != nil {
		ts.Fatalf("sqlexec: %v", err)
	}
	defer db.Close()
	if _, err := db.Exec(args[1]); err != nil {
		ts.Fatalf("sqlexec: %v", err)
	}
}

// cmdHomeSnap writes a listing of everything under a home, nothing left out (each file by
// mode, modification time and SHA-256; directories; symlinks): `homesnap HOME FILE`. Two
// listings equal under cmp prove the home byte for byte unchanged, with nothing created.
func cmdHomeSnap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: homesnap HOME FILE")
	}
	snap := strictSnapshot(&scriptTB{ts: ts}, ts.MkAbs(args[0]))
	lines := make([]string, 0, len(snap))
	for path, what := range snap {
		lines = append(lines, path+" "+what)
	}
	slices.Sort(lines)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// cmdNeed fails the script unless every tool named is installed: a command on PATH, or a
// file given by its absolute path (bash-completion's script). A script may skip before it
// under -short (the developer loop, scripts/test: `[short] [!exec:zsh] skip`); CI (.ci/run
// installs the tools, then runs scripts/test -slow) never skips.
func cmdNeed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: need TOOL...")
	}
	for _, tool := range args {
		var err error
		if filepath.IsAbs(tool) {
			_, err = os.Stat(tool)
		} else {
			_, err = exec.LookPath(tool)
		}
		if err != nil {
			ts.Fatalf("%s is not installed, and this test needs it (.ci/run installs it: apt-get install zsh fish groff mandoc bash-completion): %v", tool, err)
		}
	}
}
