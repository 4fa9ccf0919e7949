package commands

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

// TestWaitOnEveryWrite: every command that takes --apply, and maintain and backup (which
// take the lock without it), take --wait too.
func TestWaitOnEveryWrite(t *testing.T) {
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(path + " " + c.Name)
			writes := lookupFlag(c.Flags, "--apply") != nil || name == "maintain" || name == "backup"
			if writes && lookupFlag(c.Flags, "--wait") == nil {
				t.Errorf("%s writes but has no --wait", name)
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", allCommands())
}

// TestWaitInterrupted: a write waiting for another sessionctl's lock stops when a signal
// cancels the run: exit 130 at once, nothing written, and the metrics file says so.
func TestWaitInterrupted(t *testing.T) {
	home := fixtureHome(t, "r0703-52d0d671e")
	release, err := sessionsjson.AcquireToolLock(sessionsjson.Home{Dir: home})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	prom := filepath.Join(t.TempDir(), "m.prom")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	time.AfterFunc(200*time.Millisecond, func() { cancel(&Interrupted{Signal: os.Interrupt}) })
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"sessionctl", "--home", home, "--now", fixtureNow, "maintain", "--apply", "--wait", "1m", "--metrics-file", prom}, &stdout, &stderr, settings{})
	if code != ExitInterrupted || time.Since(start) > 10*time.Second {
		t.Fatalf("exit %d after %s, want 130 at once; stderr %s", code, time.Since(start), stderr.String())
	}
	if !strings.Contains(stderr.String(), "waiting for the tool lock: interrupted") {
		t.Errorf("stderr %q", stderr.String())
	}
	if diffs := diffDump(dumpHome(t, home), loadExpected(t, "r0703-52d0d671e", "before")); len(diffs) > 0 {
		t.Errorf("the home changed: %v", diffs)
	}
	data, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^sessionctl_last_run_exit_code\{command="maintain",home="[^"]+"\} 130$`).Match(data) {
		t.Errorf("metrics file:\n%s", data)
	}
}

// TestMetricsWriteFailsAtTheEnd: a metrics file that passed the check before the run but
// cannot be replaced at its end (its temporary name is taken) is exit 4: check prints the
// error (an error envelope), maintain --apply reports what it did with its journals and sets
// error in its envelope.
func TestMetricsWriteFailsAtTheEnd(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		journals bool
	}{
		{[]string{"check"}, false},
		{[]string{"maintain", "--apply"}, true},
	} {
		t.Run(tt.args[0], func(t *testing.T) {
			home, dir := fixtureHome(t, "r0703-52d0d671e"), t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, ".m.prom."+strconv.Itoa(os.Getpid())+".tmp"), 0o700); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--home", home, "--now", fixtureNow, "--json"}, tt.args...)
			code, stdout, stderr := runCLI(t, append(args, "--metrics-file", filepath.Join(dir, "m.prom"))...)
			var env struct {
				ExitCode int        `json:"exit_code"`
				Error    *errorJSON `json:"error"`
				Journals []string   `json:"journals"`
			}
			if err := json.Unmarshal([]byte(stdout), &env); err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			if code != ExitData || env.ExitCode != ExitData || env.Error == nil || env.Error.Kind != "data" || !strings.Contains(stderr, "sessionctl: metrics file ") {
				t.Errorf("exit %d, envelope %+v, stderr %q", code, env, stderr)
			}
			if (len(env.Journals) > 0) != tt.journals {
				t.Errorf("journals %v", env.Journals)
			}
		})
	}
}

// unit is a systemd unit file: its sections' settings in order (a key may repeat).
type unit map[string][][2]string

// get is the last value of key in section ("" when unset).
func (u unit) get(section, key string) string {
	v := ""
	for _, kv := range u[section] {
		if kv[0] == key {
			v = kv[1]
		}
	}
	return v
}

// readUnit parses a unit file: [Section] headers, Key=Value lines, # and ; comments; a line
// continued with a backslash or anything else is an error.
func readUnit(t *testing.T, path string) unit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, section := unit{}, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
		case section != "" && strings.Contains(line, "=") && !strings.HasSuffix(line, `\`):
			k, v, _ := strings.Cut(line, "=")
			u[section] = append(u[section], [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		default:
			t.Fatalf("%s:%d: not a unit file line: %q", path, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSystemdUnits: contrib/systemd's timer starts the service, whose ExecStart command line
// is one sessionctl accepts — run as written (its home and metrics file moved into a
// temporary directory) on a fixture home, it maintains the home and writes the metrics file —
// and whose hardening leaves the home and the metrics directory writable. Where
// systemd-analyze is installed, `systemd-analyze verify` accepts both units.
func TestSystemdUnits(t *testing.T) {
	dir := filepath.Join("..", "contrib", "systemd")
	svc := readUnit(t, filepath.Join(dir, "sessionctl-maintain.service"))
	timer := readUnit(t, filepath.Join(dir, "sessionctl-maintain.timer"))
	if timer.get("Timer", "Unit") != "sessionctl-maintain.service" || timer.get("Install", "WantedBy") != "timers.target" || timer.get("Timer", "OnCalendar") == "" {
		t.Errorf("timer: %v", timer)
	}
	if svc.get("Service", "Type") != "oneshot" || svc.get("Service", "SuccessExitStatus") != "1" {
		t.Errorf("service: Type %q, SuccessExitStatus %q", svc.get("Service", "Type"), svc.get("Service", "SuccessExitStatus"))
	}
	exec := svc.get("Service", "ExecStart")
	if strings.ContainsAny(exec, `"'%$\`) {
		t.Fatalf("ExecStart %q: quoting, specifiers or variables this test does not expand", exec)
	}
	args := strings.Fields(exec)
	if !filepath.IsAbs(args[0]) || filepath.Base(args[0]) != "sessionctl" {
		t.Fatalf("ExecStart runs %s", args[0])
	}
	homeEnv, ok := strings.CutPrefix(svc.get("Service", "Environment"), "HERMES_HOME=")
	if !ok {
		t.Fatalf("Environment %q does not set HERMES_HOME", svc.get("Service", "Environment"))
	}
	rw := strings.Fields(svc.get("Service", "ReadWritePaths"))
	promIdx := -1
	for i, a := range args {
		if a == "--metrics-file" && i+1 < len(args) {
			promIdx = i + 1
		}
	}
	if promIdx < 0 || !strings.Contains(exec, " maintain --apply ") || !strings.Contains(exec, " --wait 5m ") {
		t.Fatalf("ExecStart %q: want maintain --apply --wait 5m --metrics-file …", exec)
	}
	for _, p := range []string{homeEnv, filepath.Dir(args[promIdx])} {
		if !underAny(p, rw) {
			t.Errorf("%s is not writable under ProtectSystem=%s (ReadWritePaths=%v)", p, svc.get("Service", "ProtectSystem"), rw)
		}
	}

	home := fixtureHome(t, "r0817-481156139")
	prom := filepath.Join(t.TempDir(), filepath.Base(args[promIdx]))
	run := append([]string{"--home", home, "--now", fixtureNow}, args[1:]...)
	run[3+promIdx] = prom
	code, stdout, stderr := runCLI(t, run...)
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("ExecStart as run: exit %d\n%s%s", code, stdout, stderr)
	}
	if data, err := os.ReadFile(prom); err != nil || !bytes.Contains(data, []byte("sessionctl_maintain_changes_applied")) {
		t.Errorf("metrics file: %v\n%s", err, data)
	}
	verifyUnits(t, dir)
}

// underAny reports whether path is one of dirs or below one.
func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// verifyUnits runs `systemd-analyze verify` on copies of the units whose ExecStart runs this
// test binary (the installed path does not exist here): it must accept them without a word
// about them. Skipped where systemd-analyze is not installed.
func verifyUnits(t *testing.T, dir string) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: units not verified")
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var paths []string
	for _, name := range []string{"sessionctl-maintain.service", "sessionctl-maintain.timer"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte("ExecStart=/usr/local/bin/sessionctl "), []byte("ExecStart="+self+" "))
		paths = append(paths, filepath.Join(tmp, name))
		if err := os.WriteFile(paths[len(paths)-1], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(analyze, append([]string{"verify"}, paths...)...).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("sessionctl-maintain")) {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
