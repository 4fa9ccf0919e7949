package commands

// Robustness tests: hostile or broken input in a home, write refusals, a full disk during the
// rewrite of sessions.json, and the modes of the files the tool writes. Every case asserts the
// exit code of the CLI contract, a one-line stderr without a stack trace, and that the home's
// files are byte for byte as they were wherever nothing may change.
//
// Tests that call Run in-process (runCLI) are deliberately not parallel: concurrent Run calls
// race on urfave/cli's package-global HelpFlag (BoolFlag.Apply writes its defaultValue), which
// `go test -race` reports. Tests that only start child processes run in parallel.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Generations the robustness tests use: one json-primary home with _README and one
// db-primary home.
const (
	genJSON = "r0703-52d0d671e"
	genDB   = "r0715-c2a3b9ce5"
)

// keyBoth is a routing entry present, loaded and not suspended in both genJSON and genDB.
const keyBoth = "agent:main:slack:dm:D043095675"

// Environment of a child process started by childCmd (see TestRobustChildProcess).
const (
	childArgsEnv  = "SESSIONCTL_ROBUST_CHILD_ARGS"  // JSON array of CLI arguments
	childFsizeEnv = "SESSIONCTL_ROBUST_CHILD_FSIZE" // RLIMIT_FSIZE in bytes, optional
)

// TestRobustChildProcess is not a test: it is the body of the child processes the robustness
// and crash tests start (the test binary re-executed with -test.run selecting this function).
// It runs sessionctl with the arguments from the environment, optionally under RLIMIT_FSIZE
// with SIGXFSZ ignored (so that writes past the limit fail with EFBIG), and exits with the
// CLI's exit code. In the ordinary test run it does nothing.
func TestRobustChildProcess(t *testing.T) {
	raw, ok := os.LookupEnv(childArgsEnv)
	if !ok {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, "robust child: bad arguments:", err)
		syscall.Exit(99)
	}
	if lim := os.Getenv(childFsizeEnv); lim != "" {
		n, err := strconv.ParseUint(lim, 10, 64)
		if err == nil {
			err = limitFileSize(n)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "robust child: RLIMIT_FSIZE:", err)
			syscall.Exit(99)
		}
	}
	ctx, stop := NotifyContext(context.Background()) // as cmd/sessionctl does
	code := Run(ctx, append([]string{"sessionctl"}, args...), os.Stdout, os.Stderr)
	stop()
	// syscall.Exit, not os.Exit: the testing package turns os.Exit(0) inside a test into a panic.
	syscall.Exit(code)
}

// childCmd returns the command that runs sessionctl with args in a child process;
// fsize > 0 sets RLIMIT_FSIZE in the child.
func childCmd(t testing.TB, fsize int64, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestRobustChildProcess$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(enc), "TZ=UTC", "NO_COLOR=1")
	if fsize > 0 {
		cmd.Env = append(cmd.Env, childFsizeEnv+"="+strconv.FormatInt(fsize, 10))
	}
	return cmd
}

// runChild runs sessionctl in a child process and returns its exit code, stdout and stderr.
func runChild(t testing.TB, fsize int64, args ...string) (int, string, string) {
	t.Helper()
	cmd := childCmd(t, fsize, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatalf("child sessionctl %q: %v\nstderr: %s", args, err, stderr.String())
	}
	return 0, stdout.String(), stderr.String()
}

// snapshotHome records every file, symlink and directory under home: regular files by mode and
// SHA-256 of their bytes, symlinks by target, directories by mode. Left out, because they
// are not data: the tool's advisory lock (<home>/sessionctl and sessionctl/lock, which
// `--apply` takes before the home is loaded and keeps), SQLite shared-memory files and empty
// write-ahead logs (created by merely opening a WAL database).
func snapshotHome(t testing.TB, home string) map[string]string {
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
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case rel == "sessionctl" || rel == "sessionctl/lock":
			return nil
		case strings.HasSuffix(rel, "-shm"), strings.HasSuffix(rel, "-wal") && info.Size() == 0:
			return nil
		case d.IsDir():
			out[rel] = "dir " + info.Mode().String()
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			out[rel] = "symlink " + target
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[rel] = "file " + info.Mode().String() + " " + hex.EncodeToString(sum[:])
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", home, err)
	}
	return out
}

// assertSameSnapshot fails when two snapshots of a home differ, naming every difference.
func assertSameSnapshot(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range before {
		switch w, ok := after[k]; {
		case !ok:
			diffs = append(diffs, "removed "+k)
		case w != v:
			diffs = append(diffs, fmt.Sprintf("changed %s: %s -> %s", k, v, w))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, "created "+k)
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: the home changed:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

// assertCleanStderr fails when stderr shows a Go panic or stack trace.
func assertCleanStderr(t testing.TB, what, stderr string) {
	t.Helper()
	for _, bad := range []string{"goroutine", "panic", "runtime error", "fatal error"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("%s: stderr contains %q:\n%s", what, bad, stderr)
			return
		}
	}
}

// assertErrorLine fails unless stderr is exactly one line "sessionctl: …" (and clean).
func assertErrorLine(t testing.TB, what, stderr string) {
	t.Helper()
	assertCleanStderr(t, what, stderr)
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "sessionctl: ") || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("%s: stderr is not one line \"sessionctl: …\":\n%q", what, stderr)
	}
}

// cliExpect is one CLI invocation on a prepared home and the exit code it must give. wantAny
// lists the acceptable codes when more than one is (e.g. check: 1 for a finding or 4).
type cliExpect struct {
	args    []string
	want    int
	wantAny []int
	stdout  string // a substring stdout must contain, if set
	// quiet: an error exit may leave stderr empty because the command reports the problem
	// as a finding on stdout (maintain does).
	quiet bool
}

func (e cliExpect) ok(code int) bool {
	if len(e.wantAny) > 0 {
		return slices.Contains(e.wantAny, code)
	}
	return code == e.want
}

// runAllUnchanged runs each invocation against home and asserts its exit code, its stderr (one
// line for an error exit; no stack trace ever) and that the home is unchanged afterwards.
func runAllUnchanged(t *testing.T, home string, cmds []cliExpect) {
	t.Helper()
	before := snapshotHome(t, home)
	for _, c := range cmds {
		args := append([]string{"--home", home, "--now", fixtureNow}, c.args...)
		code, stdout, stderr := runCLI(t, args...)
		what := strings.Join(c.args, " ")
		if !c.ok(code) {
			want := fmt.Sprint(c.want)
			if len(c.wantAny) > 0 {
				want = fmt.Sprint(c.wantAny)
			}
			t.Errorf("%s: exit %d, want %s\nstdout: %.2000s\nstderr: %s", what, code, want, stdout, stderr)
		}
		if code >= ExitUsage && !(c.quiet && stderr == "") {
			assertErrorLine(t, what, stderr)
		} else {
			assertCleanStderr(t, what, stderr)
		}
		if c.stdout != "" && !strings.Contains(stdout, c.stdout) {
			t.Errorf("%s: stdout lacks %q:\n%.2000s", what, c.stdout, stdout)
		}
		assertSameSnapshot(t, what, before, snapshotHome(t, home))
		if js := journals(t, home); len(js) > 0 {
			t.Errorf("%s: a journal was written although nothing may change: %v", what, js)
		}
	}
}

// execSQL runs statements on a home's state.db and checkpoints the WAL, so that the file
// stands alone.
func execSQL(t testing.TB, dbPath string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteURI(dbPath, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range append(stmts, "PRAGMA wal_checkpoint(PASSIVE)") {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// sessionsJSONPath is the path of a home's sessions.json.
func sessionsJSONPath(home string) string { return filepath.Join(home, "sessions", "sessions.json") }

// writeCmds are writes that, on the fixtures, all have something to change; on a broken
// home each must be refused before it writes anything.
func writeCmds(want int) []cliExpect {
	return []cliExpect{
		{args: []string{"suspend", keyBoth, "--apply"}, want: want},
		{args: []string{"resume", "mark", keyBoth, "--apply"}, want: want},
		{args: []string{"suspend-stuck", "--apply"}, want: want},
		{args: []string{"repoint", "--apply"}, want: want},
		{args: []string{"finalize-orphans", "--apply"}, want: want},
		{args: []string{"prune-ghosts", "--apply"}, want: want},
		// maintain reports a refused repair as the finding maintain.writes-refused on stdout
		{args: []string{"maintain", "--apply"}, want: want, quiet: true},
	}
}

// TestRobustBrokenStateDB: a state.db that is empty, truncated, not SQLite at all, or has no
// schema_version table makes every command exit 4 with one line on stderr, and nothing in the
// home changes (writes included).
func TestRobustBrokenStateDB(t *testing.T) {
	breakers := map[string]func(t *testing.T, db string){
		"zero-length": func(t *testing.T, db string) {
			if err := os.Truncate(db, 0); err != nil {
				t.Fatal(err)
			}
		},
		"truncated": func(t *testing.T, db string) {
			if err := os.Truncate(db, 4096); err != nil {
				t.Fatal(err)
			}
		},
		"truncated-odd": func(t *testing.T, db string) {
			if err := os.Truncate(db, 1000); err != nil {
				t.Fatal(err)
			}
		},
		"not-sqlite": func(t *testing.T, db string) {
			junk := bytes.Repeat([]byte("this is not an SQLite database\n"), 200)
			if err := os.WriteFile(db, junk, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"no-schema-version": func(t *testing.T, db string) {
			execSQL(t, db, "DROP TABLE schema_version")
		},
	}
	for _, gen := range []string{genJSON, genDB} {
		for name, breakDB := range breakers {
			t.Run(gen+"/"+name, func(t *testing.T) {
				home := fixtureHome(t, gen)
				breakDB(t, filepath.Join(home, "state.db"))
				cmds := []cliExpect{
					{args: []string{"status"}, want: ExitData},
					{args: []string{"--json", "status"}, want: ExitData},
					{args: []string{"check"}, want: ExitFindings, stdout: "db.corrupt"},
					{args: []string{"entries", "list"}, want: ExitData},
					{args: []string{"entries", "show", keyBoth}, want: ExitData},
					{args: []string{"sessions", "list"}, want: ExitData},
				}
				runAllUnchanged(t, home, append(cmds, writeCmds(ExitData)...))
			})
		}
	}
}

// TestRobustNewerSchema: a state.db whose schema_version is newer than the tool knows is
// read (and flagged), and every write exits 4 without changing anything.
func TestRobustNewerSchema(t *testing.T) {
	for _, gen := range []string{genJSON, genDB} {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			execSQL(t, filepath.Join(home, "state.db"), "UPDATE schema_version SET version = 30")
			reads := []cliExpect{
				{args: []string{"status"}, want: ExitOK, stdout: "v30, UNKNOWN"},
				{args: []string{"--json", "status"}, want: ExitOK, stdout: `"schema_known": false`},
				{args: []string{"check"}, want: ExitFindings, stdout: "db.schema-unknown"},
				{args: []string{"entries", "list"}, want: ExitOK, stdout: keyBoth},
				{args: []string{"entries", "show", keyBoth}, want: ExitOK},
				{args: []string{"sessions", "list"}, want: ExitOK},
				// plans are reads: they still work
				{args: []string{"suspend", keyBoth}, want: ExitOK, stdout: "plan only"},
			}
			writes := append(writeCmds(ExitData),
				cliExpect{args: []string{"unsuspend", "agent:main:discord:thread:207223967628599736:207223967628599736", "--apply"}, want: ExitData},
				cliExpect{args: []string{"resume", "clear", "--all", "--apply"}, want: ExitData},
				cliExpect{args: []string{"resume", "clear", "--stale", "--apply"}, want: ExitData},
			)
			runAllUnchanged(t, home, append(reads, writes...))
		})
	}
}

// TestRobustBrokenSessionsJSON: a sessions.json that the runtime cannot load (BOM, not an
// object, invalid UTF-8 inside a string, nesting deeper than the runtime's recursion limit
// hidden in an unknown field) or a directory in its place: reads and writes exit 4 with one
// line on stderr, check reports it (exit 1) or exits 4, and nothing changes.
func TestRobustBrokenSessionsJSON(t *testing.T) {
	replaceIn := func(t *testing.T, home, old, new string) {
		t.Helper()
		path := sessionsJSONPath(home)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("%s has no %q", path, old)
		}
		if err := os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	breakers := map[string]func(t *testing.T, home string){
		"bom": func(t *testing.T, home string) {
			path := sessionsJSONPath(home)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append([]byte("\xef\xbb\xbf"), data...), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"empty-array": func(t *testing.T, home string) {
			if err := os.WriteFile(sessionsJSONPath(home), []byte("[]"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"invalid-utf8": func(t *testing.T, home string) {
			replaceIn(t, home, `"display_name": "Hana"`, "\"display_name\": \"Ha\xff\xfe\xc0na\"")
		},
		"deep-nesting": func(t *testing.T, home string) {
			const depth = 100000
			deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
			replaceIn(t, home, `"display_name": "Hana",`, `"x_deep": `+deep+`, "display_name": "Hana",`)
		},
		"deep-objects": func(t *testing.T, home string) {
			const depth = 100000
			deep := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
			replaceIn(t, home, `"display_name": "Hana",`, `"x_deep": `+deep+`, "display_name": "Hana",`)
		},
		"directory": func(t *testing.T, home string) {
			path := sessionsJSONPath(home)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		},
	}
	for _, gen := range []string{genJSON, genDB} {
		for name, breakJSON := range breakers {
			t.Run(gen+"/"+name, func(t *testing.T) {
				home := fixtureHome(t, gen)
				breakJSON(t, home)
				cmds := []cliExpect{
					{args: []string{"status"}, want: ExitData},
					{args: []string{"check"}, wantAny: []int{ExitFindings, ExitData}},
					{args: []string{"entries", "list"}, want: ExitData},
					{args: []string{"entries", "show", keyBoth}, want: ExitData},
				}
				if gen == genDB {
					// db-primary: sessions.json is only the mirror; the runtime routes from
					// gateway_routing. check reports the broken mirror as a warning.
					cmds[1] = cliExpect{args: []string{"check"}, wantAny: []int{ExitOK, ExitFindings, ExitData}, stdout: "sessions-json.unreadable"}
				}
				// routing writes (maintain is left out: its state.db repairs do not depend on
				// sessions.json and may rightly run)
				routingWrites := []cliExpect{
					{args: []string{"suspend", keyBoth, "--apply"}, want: ExitData},
					{args: []string{"unsuspend", "agent:main:discord:thread:207223967628599736:207223967628599736", "--apply"}, want: ExitData},
					{args: []string{"resume", "mark", keyBoth, "--apply"}, want: ExitData},
					{args: []string{"resume", "clear", "--all", "--apply"}, want: ExitData},
					{args: []string{"suspend-stuck", "--apply"}, want: ExitData},
					{args: []string{"repoint", "--apply"}, want: ExitData},
				}
				runAllUnchanged(t, home, append(cmds, routingWrites...))
			})
		}
	}
}

// TestRobustDeepNestingChild runs the 100000-deep sessions.json in a separate process, so
// that a stack overflow (fatal, unrecoverable in-process) would show as a crash of the child
// rather than of the test binary.
func TestRobustDeepNestingChild(t *testing.T) {
	t.Parallel()
	home := fixtureHome(t, genJSON)
	path := sessionsJSONPath(home)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const depth = 100000
	deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	data = bytes.Replace(data, []byte(`"display_name": "Hana",`), []byte(`"x_deep": `+deep+`, "display_name": "Hana",`), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshotHome(t, home)
	for _, args := range [][]string{{"status"}, {"suspend", keyBoth, "--apply"}} {
		code, _, stderr := runChild(t, 0, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
		what := strings.Join(args, " ")
		if code != ExitData {
			t.Errorf("%s: exit %d, want %d\nstderr: %.3000s", what, code, ExitData, stderr)
		}
		assertErrorLine(t, what, stderr)
	}
	assertSameSnapshot(t, "deep nesting", before, snapshotHome(t, home))
}

// TestRobustBadRestartCounts: a .restart_failure_counts that is an array or holds a
// non-integer count is reported; suspend-stuck --apply leaves the file untouched.
func TestRobustBadRestartCounts(t *testing.T) {
	for _, content := range []string{"[1,2]", `{"k":"x"}`, `{"agent:main:slack:dm:D043095675": "3"}`, "not json", ""} {
		for _, gen := range []string{genJSON, genDB} {
			t.Run(gen+"/"+strconv.Quote(content), func(t *testing.T) {
				home := fixtureHome(t, gen)
				path := filepath.Join(home, ".restart_failure_counts")
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				runAllUnchanged(t, home, []cliExpect{
					{args: []string{"status"}, want: ExitOK},
					{args: []string{"check", "--fail-on", "warn"}, want: ExitFindings, stdout: "counts."},
					{args: []string{"suspend-stuck"}, want: ExitOK},
					{args: []string{"suspend-stuck", "--apply"}, want: ExitOK, stdout: "counts."},
				})
			})
		}
	}
}

// TestRobustHugeStringField: a 10 MB display_name decodes, and a routing write on that very
// entry succeeds and keeps the field byte for byte (json-primary; db-primary mirror).
func TestRobustHugeStringField(t *testing.T) {
	for _, gen := range []string{genJSON, genDB} {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			path := sessionsJSONPath(home)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			reps := 10 << 20 / 18
			if raceEnabled() {
				reps /= 5 // 2 MB under the race detector, which makes the 10 MB run take ~30 s
			}
			huge := strings.Repeat("Hana \\u00e9 \\\"q\\\" ", reps) // 18 bytes of JSON each: 10 MB
			decoded := strings.Repeat("Hana \u00e9 \"q\" ", reps)
			data = bytes.Replace(data, []byte(`"display_name": "Hana"`), []byte(`"display_name": "`+huge+`"`), 1)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			// decode: the entry loads (entries show is not used here: it renders the whole
			// 10 MB value through the table writer, which takes seconds)
			code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "entries", "list")
			if code != ExitOK || !strings.Contains(stdout, keyBoth) {
				t.Fatalf("entries list: exit %d: %s", code, stderr)
			}
			code, stdout, stderr = runCLI(t, "--home", home, "--now", fixtureNow, "suspend", keyBoth, "--apply")
			if code != ExitOK {
				t.Fatalf("suspend --apply: exit %d\n%s\n%s", code, stdout, stderr)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(after, []byte(`"display_name": "`+huge+`"`)) {
				t.Errorf("the 10 MB display_name was not kept byte for byte")
			}
			keys, values, err := decodeOrderedObject(after)
			if err != nil {
				t.Fatalf("rewritten sessions.json does not parse: %v", err)
			}
			if keys[0] != "_README" && gen == genJSON {
				t.Errorf("first key %q, want _README", keys[0])
			}
			entry, _ := values[keyBoth].(map[string]any)
			if entry["suspended"] != true {
				t.Errorf("suspended = %v, want true", entry["suspended"])
			}
			if s, _ := entry["display_name"].(string); s != decoded {
				t.Errorf("display_name decodes to %d bytes after the write, want %d", len(s), len(decoded))
			}
		})
	}
}

// TestRobustReadOnlySessionsDir: with sessions/ not writable, a routing write fails before
// anything changes (exit 4 or 5) and leaves no temp file. Permission bits do not bind root,
// so as root sessions/ is made immutable instead (readOnlyDir).
func TestRobustReadOnlySessionsDir(t *testing.T) {
	home := fixtureHome(t, genJSON)
	readOnlyDir(t, filepath.Join(home, "sessions"))
	before := snapshotHome(t, home)
	code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "suspend", keyBoth, "--apply")
	if code != ExitWrite && code != ExitData {
		t.Errorf("exit %d, want %d or %d\nstderr: %s", code, ExitWrite, ExitData, stderr)
	}
	assertErrorLine(t, "suspend --apply", stderr)
	after := snapshotHome(t, home)
	for k := range after {
		if strings.HasPrefix(k, "sessionctl/journal") {
			delete(after, k) // the journal lives outside sessions/; judged by TestRobustDiskFull
		}
	}
	assertSameSnapshot(t, "read-only sessions dir", before, after)
}

// readOnlyDir makes dir refuse new entries (and renames and removals) until the test ends:
// mode 0555 for an ordinary user; for root, whom permission bits do not stop, the immutable
// attribute (chattr +i), which binds root too. The test is skipped, saying why, when root has
// no chattr or the file system has no immutable attribute.
func readOnlyDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		t.Skip("running as root, which a 0555 directory does not stop, and chattr (to make the directory immutable) is not installed")
	}
	if out, err := exec.Command(chattr, "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("running as root, which a 0555 directory does not stop, and `chattr +i` fails here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command(chattr, "-i", dir).CombinedOutput(); err != nil {
			t.Errorf("chattr -i %s: %v: %s", dir, err, out)
		}
	})
	probe := filepath.Join(dir, ".rb-immutable-probe")
	if err := os.WriteFile(probe, nil, 0o600); err == nil {
		os.Remove(probe)
		t.Skip("running as root, which a 0555 directory does not stop, and the immutable attribute does not stop it either here")
	}
}

// TestRobustSymlinkedSessionsJSON: sessions.json is a symlink to a file outside the home; a
// routing write goes through to the target (same bytes as on a plain copy), the link stays
// the same link, the target keeps its mode, and no temp file is left in either directory.
func TestRobustSymlinkedSessionsJSON(t *testing.T) {
	for _, gen := range []string{genJSON, genDB} {
		t.Run(gen, func(t *testing.T) {
			plain := fixtureHome(t, gen)
			if code, _, stderr := runCLI(t, "--home", plain, "--now", fixtureNow, "suspend", keyBoth, "--apply"); code != ExitOK {
				t.Fatalf("plain copy: exit %d: %s", code, stderr)
			}
			want, err := os.ReadFile(sessionsJSONPath(plain))
			if err != nil {
				t.Fatal(err)
			}

			home := fixtureHome(t, gen)
			outside := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(outside, "routing-index.json")
			link := sessionsJSONPath(home)
			if err := os.Rename(link, target); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(target, 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			tmpsBefore := tempFiles(t, filepath.Dir(link), outside)
			code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "suspend", keyBoth, "--apply")
			if code != ExitOK {
				t.Fatalf("suspend --apply through symlink: exit %d\n%s\n%s", code, stdout, stderr)
			}
			fi, err := os.Lstat(link)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("sessions.json is no longer a symlink (mode %v)", fi.Mode())
			}
			if got, _ := os.Readlink(link); got != target {
				t.Errorf("symlink now points at %q, want %q", got, target)
			}
			got, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("target bytes differ from the same write on a plain copy")
			}
			if st, err := os.Stat(target); err != nil || st.Mode().Perm() != 0o640 {
				t.Errorf("target mode = %v (%v), want 0640", st.Mode().Perm(), err)
			}
			if tmps := tempFiles(t, filepath.Dir(link), outside); !slices.Equal(tmps, tmpsBefore) {
				t.Errorf("temp files: before %v, after %v", tmpsBefore, tmps)
			}
		})
	}
}

// tempFiles lists the temporary files of a sessions.json rewrite in dirs: the runtime's
// (.sessions_*.tmp) and sessionctl's (.sessionctl-*.tmp).
func tempFiles(t testing.TB, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, d := range dirs {
		for _, pattern := range []string{".sessions_*.tmp", ".sessionctl-*.tmp"} {
			m, err := filepath.Glob(filepath.Join(d, pattern))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m...)
		}
	}
	slices.Sort(out)
	return out
}

// padHome appends a top-level "_pad" member of n bytes to sessions.json (an underscore key:
// skipped by the runtime, kept by the tool), so that the file is larger than anything else
// the write path writes.
func padHome(t testing.TB, home string, n int) {
	t.Helper()
	path := sessionsJSONPath(home)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(data, '}')
	if end < 0 {
		t.Fatalf("%s: no closing brace", path)
	}
	body := bytes.TrimRight(data[:end], " \n\t\r")
	padded := append([]byte{}, body...)
	padded = append(padded, ",\n  \"_pad\": \""+strings.Repeat("p", n)+"\"\n"...)
	padded = append(padded, data[end:]...)
	if err := os.WriteFile(path, padded, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRobustDiskFull: the rewrite of sessions.json fails with EFBIG (a child process under a
// low RLIMIT_FSIZE, SIGXFSZ ignored): exit 5, sessions.json byte-identical, no temp file
// left, no journal of a change that was not made, and on a db-primary home the
// gateway_routing rows unchanged (the transaction rolled back with the mirror write).
func TestRobustDiskFull(t *testing.T) {
	const limit = 256 << 10
	for _, gen := range []string{genJSON, genDB} {
		t.Run(gen, func(t *testing.T) {
			t.Parallel()
			home := fixtureHome(t, gen)
			padHome(t, home, 2*limit)
			// the padded home is sound: the same write works without the limit
			control := fixtureHome(t, gen)
			padHome(t, control, 2*limit)
			if code, _, stderr := runChild(t, 0, "--home", control, "--now", fixtureNow, "suspend", keyBoth, "--apply"); code != ExitOK {
				t.Fatalf("control write without a size limit: exit %d: %s", code, stderr)
			}

			dumpBefore := dumpHome(t, home)
			before := snapshotHome(t, home)
			tmpsBefore := tempFiles(t, filepath.Join(home, "sessions"))
			code, stdout, stderr := runChild(t, limit, "--home", home, "--now", fixtureNow, "suspend", keyBoth, "--apply")
			if code != ExitWrite {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitWrite, stdout, stderr)
			}
			assertErrorLine(t, "suspend --apply under RLIMIT_FSIZE", stderr)
			if !strings.Contains(stderr, "file too large") {
				t.Errorf("stderr does not name the EFBIG failure: %s", stderr)
			}
			if tmps := tempFiles(t, filepath.Join(home, "sessions")); !slices.Equal(tmps, tmpsBefore) {
				t.Errorf("temp files: before %v, after %v", tmpsBefore, tmps)
			}
			compareDump(t, dumpHome(t, home), dumpBefore)
			after := snapshotHome(t, home)
			for k := range after {
				if strings.HasPrefix(k, "sessionctl/journal") {
					delete(after, k)
				}
			}
			assertSameSnapshot(t, "disk full", before, after)
			if js := journals(t, home); len(js) > 0 {
				t.Errorf("routing write failed with exit %d (\"nothing changed\") but left a journal of the change that was never made: %v", code, js)
			}
		})
	}
}

// TestRobustDiskFullStateDBRepair: a state.db repair whose commit cannot be written (the WAL
// would grow past RLIMIT_FSIZE; the journal, ~11 KB, still fits) exits 5, rolls back, removes
// its journal and changes nothing.
func TestRobustDiskFullStateDBRepair(t *testing.T) {
	t.Parallel()
	home := fixtureHome(t, genDB)
	dumpBefore := dumpHome(t, home)
	before := snapshotHome(t, home)
	code, stdout, stderr := runChild(t, 40<<10, "--home", home, "--now", fixtureNow, "prune-ghosts", "--apply")
	if code != ExitWrite {
		t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitWrite, stdout, stderr)
	}
	assertErrorLine(t, "prune-ghosts --apply under RLIMIT_FSIZE", stderr)
	if js := journals(t, home); len(js) > 0 {
		t.Errorf("the journal of the rolled-back repair is left: %v", js)
	}
	after := snapshotHome(t, home)
	// Tolerated: the (now empty) journal directory, and a write-ahead log holding the
	// uncommitted frames of the failed transaction, which SQLite ignores (no commit frame):
	// state.db itself must be byte-identical, and the database must read as before.
	delete(after, "sessionctl/journal")
	delete(after, "state.db-wal")
	assertSameSnapshot(t, "prune-ghosts under RLIMIT_FSIZE", before, after)
	compareDump(t, dumpHome(t, home), dumpBefore)
	assertIntegrity(t, filepath.Join(home, "state.db"))
	compareDump(t, dumpHome(t, home), dumpBefore)
}

// TestRobustDiskFullRollbackJournal: on a rollback-journal home (r0817), a prune whose commit
// cannot finish rewriting state.db (pages past RLIMIT_FSIZE) leaves state.db partly rewritten
// with its hot journal, which this process cannot roll back under the same limit: the run
// exits 6 naming its journal (not 5: state.db's bytes changed), status says what happened, and
// once a read-write open rolls the transaction back, state.db is byte for byte as before and
// undo of the kept journal finds nothing to change.
func TestRobustDiskFullRollbackJournal(t *testing.T) {
	t.Parallel()
	home := fixtureHome(t, "r0817-481156139")
	db := filepath.Join(home, "state.db")
	dbBefore := snapshotHome(t, home)["state.db"]
	code, _, stderr := runChild(t, 250<<10, "--home", home, "--now", fixtureNow, "prune", "--older-than", "7d", "--apply")
	js := journals(t, home)
	if code != ExitPartial || len(js) != 1 || !strings.Contains(stderr, js[0]) || !strings.Contains(stderr, "mid-transaction") {
		t.Fatalf("exit %d, journals %v, stderr %s; want exit 6 naming the kept journal and the interrupted transaction", code, js, stderr)
	}
	if _, err := os.Stat(db + "-journal"); err != nil {
		t.Fatalf("no hot journal left (%v): the limit did not cut the commit", err)
	}
	code, _, stderr = runChild(t, 0, "--home", home, "--now", fixtureNow, "status")
	if code != ExitData || !strings.Contains(stderr, "mid-transaction") {
		t.Errorf("status on the interrupted home: exit %d, stderr %s", code, stderr)
	}
	if _, stdout, _ := runChild(t, 0, "--home", home, "--now", fixtureNow, "check"); !strings.Contains(stdout, "ERROR db.interrupted state.db") || strings.Contains(stdout, "db.corrupt") {
		t.Errorf("check on the interrupted home calls it other than db.interrupted:\n%s", stdout)
	}
	assertIntegrity(t, db) // a read-write open: SQLite rolls the transaction back
	if after := snapshotHome(t, home)["state.db"]; after != dbBefore {
		t.Errorf("state.db after the rollback differs from before")
	}
	if code, stdout, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "undo", js[0], "--apply"); code != ExitOK || !strings.Contains(stdout+stderr, "nothing to change") {
		t.Errorf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestRobustRoutingCommitInterrupted: a gateway_routing write on a rollback-journal home whose
// commit a file-size limit cuts leaves state.db partly rewritten with its hot journal: exit 6
// with the journal kept and named, not 5 (found by a helper's fault audit). The next write,
// here the undo of that journal, rolls the journal back first (SQLite's recovery) instead of
// refusing the home, and finds nothing left to change: state.db is as before.
func TestRobustRoutingCommitInterrupted(t *testing.T) {
	t.Parallel()
	home := fixtureHome(t, "r0817-481156139")
	db := filepath.Join(home, "state.db")
	dbBefore := snapshotHome(t, home)["state.db"]
	code, _, stderr := runChild(t, 250<<10, "--home", home, "--now", fixtureNow, "entries", "prune", "--older-than", "2d", "--apply")
	js := journals(t, home)
	if code != ExitPartial || len(js) != 1 || !strings.Contains(stderr, js[0]) || !strings.Contains(stderr, "mid-transaction") {
		t.Fatalf("exit %d, journals %v, stderr %s; want exit 6 naming the kept journal and the interrupted transaction", code, js, stderr)
	}
	if _, err := os.Stat(db + "-journal"); err != nil {
		t.Fatalf("no hot journal left (%v): the limit did not cut the commit", err)
	}
	// while a gateway runs (it rolls the journal back itself) a write leaves the journal alone
	interrupted := snapshotHome(t, home)
	lock, err := os.OpenFile(filepath.Join(home, "gateway.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := flockExclusive(lock, false); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "suspend-stuck", "--apply"); (code != ExitRefused && code != ExitData) || strings.Contains(stderr, "rolled it back") {
		t.Errorf("suspend-stuck while a gateway runs: exit %d, stderr %s; want 3 or 4, nothing rolled back", code, stderr)
	}
	lock.Close()
	if err := os.Remove(filepath.Join(home, "gateway.lock")); err != nil {
		t.Fatal(err)
	}
	if after := snapshotHome(t, home); after["state.db"] != interrupted["state.db"] || after["state.db-journal"] != interrupted["state.db-journal"] {
		t.Errorf("a refused write changed state.db or its journal")
	}
	code, stdout, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "undo", js[0], "--apply")
	if code != ExitOK || !strings.Contains(stdout+stderr, "nothing to change") || !strings.Contains(stderr, "rolled it back") {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	if after := snapshotHome(t, home)["state.db"]; after != dbBefore {
		t.Errorf("state.db after the undo differs from before")
	}
	assertIntegrity(t, db)
}

// TestRobustRestoreInterrupted: restore --apply on a home an interrupted write left with a
// hot journal rolls it back first and says so, and its journal records the home as it is
// (db-primary, r0817), not as an unreadable database.
func TestRobustRestoreInterrupted(t *testing.T) {
	t.Parallel()
	home := fixtureHome(t, "r0817-481156139")
	to := t.TempDir()
	if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "backup", "--to", to); code != ExitOK {
		t.Fatalf("backup: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runChild(t, 250<<10, "--home", home, "--now", fixtureNow, "entries", "prune", "--older-than", "2d", "--apply"); code != ExitPartial {
		t.Fatalf("entries prune under the limit: exit %d: %s", code, stderr)
	}
	backups, err := filepath.Glob(filepath.Join(to, "*"))
	if err != nil || len(backups) != 1 {
		t.Fatalf("backups %v (%v)", backups, err)
	}
	code, envl, stderr := runOutcome(t, nil, home, "restore", backups[0], "--apply")
	if code != ExitOK || !envl.Applied || !strings.Contains(stderr, "rolled it back") {
		t.Fatalf("restore: exit %d %+v: %s", code, envl, stderr)
	}
	var j struct{ Storage, Generation string }
	data, err := os.ReadFile(envl.Journals[0])
	if err != nil || json.Unmarshal(data, &j) != nil || j.Storage != "db-primary" || !strings.HasPrefix(j.Generation, "r0817") {
		t.Errorf("restore journal records storage %q, generation %q (%v): want the home's", j.Storage, j.Generation, err)
	}
}

// TestRobustIOFaultIsNotCorrupt: a WAL database whose shared-memory file cannot be grown (a
// file-size limit here, a full disk in the field) fails with the file system's I/O error, exit
// 4, never called corrupt (found by a helper's fault audit: it said "corrupt or not a Hermes
// state.db" of a sound file).
func TestRobustIOFaultIsNotCorrupt(t *testing.T) {
	t.Parallel()
	home := fixtureHome(t, genDB)
	if err := os.WriteFile(filepath.Join(home, "state.db-wal"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runChild(t, 8<<10, "--home", home, "--now", fixtureNow, "status")
	if code != ExitData || !strings.Contains(stderr, "I/O error") || strings.Contains(stderr, "corrupt") {
		t.Errorf("status: exit %d, stderr %s; want 4 with the I/O error, not corrupt", code, stderr)
	}
}

// TestRobustSidecarNotRegular: a state.db-journal, -wal or -shm that is a named pipe (which
// SQLite's open would wait on for good, deaf to SIGTERM) or a symbolic link is refused at
// once, exit 4, naming it, by a read and by a write (found by a helper's audit: status hung).
func TestRobustSidecarNotRegular(t *testing.T) {
	for _, gen := range []string{genDB, "r0817-481156139"} {
		for _, side := range []string{"-journal", "-wal", "-shm"} {
			t.Run(gen+"/"+side, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, gen)
				path := filepath.Join(home, "state.db"+side)
				_ = os.Remove(path)
				mkfifo(t, path)
				for _, args := range [][]string{{"status"}, {"prune-ghosts", "--apply"}} {
					cmd := childCmd(t, 0, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					done := make(chan error, 1)
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					go func() { done <- cmd.Wait() }()
					select {
					case <-done:
					case <-time.After(20 * time.Second):
						_ = cmd.Process.Kill()
						t.Fatalf("%v hangs on a named pipe state.db%s", args, side)
					}
					if code := cmd.ProcessState.ExitCode(); code != ExitData || !strings.Contains(stderr.String(), "state.db"+side+" is a named pipe") {
						t.Errorf("%v: exit %d, stderr %s; want 4 naming the pipe", args, code, stderr.String())
					}
				}
			})
		}
	}
}

// TestRobustBackupOfBadFile: a backup whose sessions.json or counts file is not a regular
// file is refused before anything is written, exit 4: no backup directory, no sessionctl/
// (found by a helper's audit: exit 5 "nothing kept" after creating both).
func TestRobustBackupOfBadFile(t *testing.T) {
	for _, rel := range []string{".restart_failure_counts", "sessions/sessions.json"} {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			home := fixtureHome(t, genDB)
			path := filepath.Join(home, filepath.FromSlash(rel))
			_ = os.Remove(path)
			mkfifo(t, path)
			before := exactSnapshot(t, home)
			code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "backup")
			if code != ExitData || !strings.Contains(stderr, "named pipe") {
				t.Errorf("backup: exit %d, stderr %s; want 4 naming the pipe", code, stderr)
			}
			assertNothingCreated(t, "backup", home, before)
		})
	}
}

// TestRobustControlCharactersEscaped: a routing key holding a line break and an escape
// sequence is shown escaped by the lists, the findings and entries show: nothing from the
// home drives the terminal or splits a finding's line (found by a helper's audit).
func TestRobustControlCharactersEscaped(t *testing.T) {
	home := fixtureHome(t, genJSON)
	path := sessionsJSONPath(home)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const key = `agent:main:slack:dm:EVIL\n\u001b[31mRED` // as sessions.json escapes it
	evil := strings.Replace(string(data), "{", "{\n  \""+key+"\": {\"session_id\": \"20260705_031119_d3efc5e6\"},", 1)
	if err := os.WriteFile(path, []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"entries", "list"}, {"check"}, {"entries", "show", "agent:main:slack:dm:EVIL\n\x1b[31mRED"},
		{"entries", "show", "agent:main:slack:dm:EVIL\n\x1b[31mREDX"}} { // the last one unknown: the error says the key
		_, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
		if strings.ContainsRune(stdout+stderr, 0x1b) || !strings.Contains(stdout+stderr, `EVIL\n\x1b[31mRED`) {
			t.Errorf("%v: the key is not shown escaped:\n%s%s", args, stdout, stderr)
		}
	}
}

// TestRobustRoutingWriteKeepsOtherWriter: a gateway_routing row another writer (a gateway
// sessionctl cannot see) changes between sessionctl's read and its write is not overwritten:
// the write is refused, exit 3, nothing changed, no journal, the other writer's row kept
// (found by a helper's concurrency audit: sessionctl wrote over it, and its undo then
// restored the row from before the other writer too).
func TestRobustRoutingWriteKeepsOtherWriter(t *testing.T) {
	home := fixtureHome(t, genDB)
	const key = "agent:main:slack:dm:D043095675"
	ctx := context.Background()
	conn := connTo(t, home, "BEGIN IMMEDIATE")
	cmd := childCmd(t, 0, "--home", home, "--now", fixtureNow, "suspend", key, "--apply")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // sessionctl has read the row and waits for the write lock
	if _, err := conn.ExecContext(ctx, "UPDATE gateway_routing SET entry_json = json_set(entry_json, '$.input_tokens', 888) WHERE session_key = ?", key); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != ExitRefused || !strings.Contains(stderr.String(), "changed since it was read") {
		t.Errorf("suspend: exit %d, stderr %s; want 3, the row changed since it was read", code, stderr.String())
	}
	var tokens int
	var suspended sql.NullBool
	if err := conn.QueryRowContext(ctx, "SELECT json_extract(entry_json, '$.input_tokens'), json_extract(entry_json, '$.suspended') FROM gateway_routing WHERE session_key = ?", key).Scan(&tokens, &suspended); err != nil {
		t.Fatal(err)
	}
	if tokens != 888 || suspended.Bool {
		t.Errorf("the row holds input_tokens %d, suspended %v: want the other writer's 888, not suspended", tokens, suspended.Bool)
	}
	if js := journals(t, home); len(js) != 0 {
		t.Errorf("journals %v, want none", js)
	}
}

// connTo opens a connection of this process to home's state.db, runs stmts on it, and closes
// it when the test ends: another writer of the database.
func connTo(t *testing.T, home string, stmts ...string) *sql.Conn {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteURI(filepath.Join(home, "state.db"), "rw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, q := range stmts {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return conn
}

// midWrite is connTo in the middle of a write whose pages went to state.db already (a one-page
// cache spills them), its rollback journal beside it.
func midWrite(t *testing.T, home string) *sql.Conn {
	t.Helper()
	return connTo(t, home, "PRAGMA cache_size = 1", "BEGIN IMMEDIATE", "UPDATE sessions SET input_tokens = input_tokens + 1")
}

// hotJournalCopy returns a home copied from gen whose state.db carries a hot rollback journal
// (a copy taken while another connection was in the middle of a write), after stmts ran and
// committed first.
func hotJournalCopy(t *testing.T, gen string, stmts ...string) string {
	t.Helper()
	src := fixtureHome(t, gen)
	execSQL(t, filepath.Join(src, "state.db"), stmts...)
	ctx := context.Background()
	conn := midWrite(t, src)
	dst := filepath.Join(t.TempDir(), "home")
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "state.db-journal")); err != nil {
		t.Fatalf("no journal in the copy: %v", err)
	}
	return dst
}

// TestRobustRecoverOnlyWhereWritten: the rollback of a hot journal before an --apply run is
// left alone where the run is refused anyway — a schema sessionctl does not write — so that a
// refused run changes nothing and creates nothing (found by a review: state.db was rolled
// back, and sessionctl/lock created, before the run refused the schema).
func TestRobustRecoverOnlyWhereWritten(t *testing.T) {
	home := hotJournalCopy(t, "r0817-481156139", "UPDATE schema_version SET version = 99")
	before := exactSnapshot(t, home)
	code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "finalize-orphans", "--apply")
	if code != ExitData || strings.Contains(stderr, "rolled it back") {
		t.Errorf("finalize-orphans: exit %d, stderr %s; want 4, nothing rolled back", code, stderr)
	}
	if after := exactSnapshot(t, home); !maps.Equal(after, before) {
		t.Errorf("a refused run changed the home")
	}
	assertNothingCreated(t, "finalize-orphans", home, before)
}

// TestRobustRecoverLeavesLiveWriter: a rollback journal of a transaction another process has
// under way (it holds the write lock) is not taken for one left behind: the run says nothing
// of a rollback, waits for the writer, and goes on (found by a review: it reported rolling
// back what the other process then committed).
func TestRobustRecoverLeavesLiveWriter(t *testing.T) {
	t.Parallel()
	home := fixtureHome(t, "r0817-481156139")
	ctx := context.Background()
	conn := midWrite(t, home)
	cmd := childCmd(t, 0, "--home", home, "--now", fixtureNow, "finalize-orphans", "--apply")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second) // past a read's busy timeout: the open waits, as for any busy database
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != ExitOK || strings.Contains(stderr.String(), "rolled") || strings.Contains(stderr.String(), "mid-transaction") {
		t.Errorf("finalize-orphans beside a live writer: exit %d, stderr %s", code, stderr.String())
	}
}

// assertIntegrity opens the database read-write (running any WAL recovery, as the next
// opener would) and fails unless PRAGMA integrity_check says ok.
func assertIntegrity(t testing.TB, dbPath string) {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteURI(dbPath, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	if res != "ok" {
		t.Errorf("integrity_check: %s", res)
	}
}

// TestRobustWrittenFileModes: a rewritten sessions.json keeps its mode (0644 stays 0644,
// 0600 stays 0600, 0640 stays 0640), a rewritten .restart_failure_counts keeps its mode, and
// the files the tool creates (journal, lock) are 0600 in 0700 directories.
func TestRobustWrittenFileModes(t *testing.T) {
	for _, gen := range []string{genJSON, genDB} {
		for _, mode := range []fs.FileMode{0o644, 0o600, 0o640} {
			t.Run(fmt.Sprintf("%s/%04o", gen, mode), func(t *testing.T) {
				home := fixtureHome(t, gen)
				sj := sessionsJSONPath(home)
				counts := filepath.Join(home, ".restart_failure_counts")
				for _, p := range []string{sj, counts} {
					if err := os.Chmod(p, mode); err != nil {
						t.Fatal(err)
					}
				}
				oldSJ, _ := os.ReadFile(sj)
				oldCounts, _ := os.ReadFile(counts)
				code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "suspend-stuck", "--apply")
				if code != ExitOK {
					t.Fatalf("suspend-stuck --apply: exit %d\n%s\n%s", code, stdout, stderr)
				}
				newSJ, _ := os.ReadFile(sj)
				newCounts, err := os.ReadFile(counts)
				if bytes.Equal(oldSJ, newSJ) || err != nil || bytes.Equal(oldCounts, newCounts) {
					t.Fatalf("suspend-stuck did not rewrite both sessions.json and .restart_failure_counts (counts err %v)", err)
				}
				assertMode(t, sj, mode)
				assertMode(t, counts, mode)
				assertMode(t, filepath.Join(home, "sessionctl"), fs.ModeDir|0o700)
				assertMode(t, filepath.Join(home, "sessionctl", "lock"), 0o600)
				assertMode(t, filepath.Join(home, "sessionctl", "journal"), fs.ModeDir|0o700)
				js := journals(t, home)
				if len(js) != 1 {
					t.Fatalf("journals: %v, want one", js)
				}
				assertMode(t, js[0], 0o600)

				// a state.db repair's journal is 0600 too
				if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "finalize-orphans", "--apply"); code != ExitOK {
					t.Fatalf("finalize-orphans --apply: exit %d: %s", code, stderr)
				}
				js = journals(t, home)
				if len(js) != 2 {
					t.Fatalf("journals: %v, want two", js)
				}
				for _, j := range js {
					assertMode(t, j, 0o600)
				}
			})
		}
	}
}

// assertMode fails unless path (not following a final symlink) has exactly mode.
func assertMode(t testing.TB, path string, mode fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Errorf("stat %s: %v", path, err)
		return
	}
	if got := fi.Mode() & (fs.ModeType | fs.ModePerm); got != mode {
		t.Errorf("%s: mode %v, want %v", path, got, mode)
	}
}

// TestRobustCreatedFileModesUnderUmask: with a permissive umask (0), the lock and journal are
// still 0600 and their directories 0700. Runs in a child so that the umask of the test
// process is not touched.
func TestRobustCreatedFileModesUnderUmask(t *testing.T) {
	t.Parallel()
	home := fixtureHome(t, genJSON)
	cmd := childCmd(t, 0, "--home", home, "--now", fixtureNow, "suspend", keyBoth, "--apply")
	cmd.Path = "/bin/sh"
	cmd.Args = append([]string{"sh", "-c", `umask 0 && exec "$0" "$@"`}, cmd.Args...) // $0: the test binary
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("suspend --apply under umask 0: %v\n%s", err, out)
	}
	assertMode(t, filepath.Join(home, "sessionctl"), fs.ModeDir|0o700)
	assertMode(t, filepath.Join(home, "sessionctl", "lock"), 0o600)
	assertMode(t, filepath.Join(home, "sessionctl", "journal"), fs.ModeDir|0o700)
	for _, j := range journals(t, home) {
		assertMode(t, j, 0o600)
	}
	assertMode(t, sessionsJSONPath(home), 0o644)
}
