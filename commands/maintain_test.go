package commands

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestMaintainIgnoreJSON: --ignore drops a check's findings from the envelope's findings and
// from --fail-on, and data.ignored lists them.
func TestMaintainIgnoreJSON(t *testing.T) {
	home := fixtureHome(t, genJSON)
	base := []string{"--home", home, "--now", fixtureNow, "--json", "maintain", "--apply", "--fail-on", "warn"}
	if code, _, stderr := runCLI(t, base...); code != ExitFindings {
		t.Fatalf("without --ignore: exit %d, want %d: %s", code, ExitFindings, stderr)
	}
	code, stdout, stderr := runCLI(t, append(base, "--ignore", "sessions-json.leftover-tmp", "--ignore", "entry.future-timestamp")...)
	if code != ExitOK {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitOK, stdout, stderr)
	}
	var env struct {
		Findings []struct{ Check string } `json:"findings"`
		ExitCode int                      `json:"exit_code"`
		Data     struct {
			Ignored []struct{ Check, Severity string } `json:"ignored"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for _, f := range env.Findings {
		if f.Check == "sessions-json.leftover-tmp" || f.Check == "entry.future-timestamp" {
			t.Errorf("ignored finding %s is in findings", f.Check)
		}
	}
	got := map[string]bool{}
	for _, f := range env.Data.Ignored {
		got[f.Check] = true
	}
	if len(env.Data.Ignored) != 2 || !got["sessions-json.leftover-tmp"] || !got["entry.future-timestamp"] {
		t.Errorf("data.ignored = %+v, want the two warnings", env.Data.Ignored)
	}
	if env.ExitCode != ExitOK {
		t.Errorf("exit_code = %d", env.ExitCode)
	}
	// nothing ignored: data.ignored is an empty array, not null
	_, stdout, _ = runCLI(t, "--home", home, "--now", fixtureNow, "--json", "maintain")
	if !strings.Contains(stdout, `"ignored": []`) {
		t.Errorf("data.ignored without --ignore is not []:\n%s", stdout)
	}
}

// TestMaintainQuietKeepsStderr: a maintain whose step fails (state.db's commit cannot be
// written under RLIMIT_FSIZE) says so on stderr under -q exactly as without it.
func TestMaintainQuietKeepsStderr(t *testing.T) {
	t.Parallel()
	var stderrs [2]string
	for i, quiet := range []bool{false, true} {
		home := fixtureHome(t, genDB)
		args := []string{"--home", home, "--now", fixtureNow, "maintain", "--apply"}
		if quiet {
			args = append([]string{"-q"}, args...)
		}
		code, _, stderr := runChild(t, 40<<10, args...)
		if code != ExitWrite && code != ExitPartial {
			t.Fatalf("%v: exit %d, want %d or %d\nstderr: %s", args, code, ExitWrite, ExitPartial, stderr)
		}
		assertErrorLine(t, strings.Join(args, " "), stderr)
		stderrs[i] = journalName.ReplaceAllString(strings.ReplaceAll(stderr, home, "HOME"), "JOURNAL")
	}
	if stderrs[0] == "" || stderrs[0] != stderrs[1] {
		t.Errorf("stderr differs under -q:\nwithout: %s\nwith -q:  %s", stderrs[0], stderrs[1])
	}
}

// journalName matches the time-stamped part of a journal's file name.
var journalName = regexp.MustCompile(`\d{8}T\d{6}\.\d+Z`)
