package commands

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
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

// TestMaintainHygieneSteps runs maintain --apply --backup DIR --prune 7d --compact on every
// generation's fixture home: the result is what maintain --apply, then prune --older-than 7d
// --apply, then compact --apply give on another copy; the backup verifies and holds the home
// as it was before the run; undoing the prune's journals gives back the repaired home; the
// compact is skipped on r0418 (no vacuum()) and journaled elsewhere.
func TestMaintainHygieneSteps(t *testing.T) {
	for _, gen := range fixtureGenerations() {
		t.Run(gen, func(t *testing.T) {
			t.Parallel()
			home, bk := fixtureHome(t, gen), filepath.Join(t.TempDir(), "bk")
			before := dumpHygiene(t, home, false)
			d := runMaintainJSON(t, "--home", home, "--now", fixtureNow, "--json", "maintain", "--apply", "--fail-on", "never",
				"--backup", bk, "--prune", "7d", "--compact")

			// the same commands one by one on another copy
			seq := fixtureHome(t, gen)
			mustRun(t, ExitOK, "--home", seq, "--now", fixtureNow, "maintain", "--apply", "--fail-on", "never")
			repaired := dumpHygiene(t, seq, false)
			mustRun(t, ExitOK, "--home", seq, "--now", fixtureNow, "prune", "--older-than", "7d", "--apply")
			noVacuum := strings.HasPrefix(gen, "r0418")
			mustRun(t, map[bool]int{true: ExitData, false: ExitOK}[noVacuum], "--home", seq, "--now", fixtureNow, "compact", "--apply")
			compareDump(t, dumpHygiene(t, home, false), dumpHygiene(t, seq, false))

			if d.Backup == nil || filepath.Dir(d.Backup.Backup) != bk {
				t.Fatalf("data.backup = %+v", d.Backup)
			}
			mustRun(t, ExitOK, "--home", home, "backup", "verify", d.Backup.Backup)
			// a backup holds no transcript files, and its routing rows name the home's scope
			snap := dumpHygiene(t, d.Backup.Backup, false)
			for _, k := range []string{"sessions_files", "routing", "routing_foreign_scopes"} {
				delete(snap, k)
				delete(before, k)
			}
			compareDump(t, snap, before)

			if got := slices.Contains(d.Skipped, "compact"); got != noVacuum || len(d.StepJournals["compact"]) != map[bool]int{true: 0, false: 1}[noVacuum] {
				t.Errorf("compact: skipped %v, journals %v", got, d.StepJournals["compact"])
			}
			prunes := d.StepJournals["prune"]
			if len(prunes) == 0 {
				t.Fatalf("no prune journal: %+v", d.StepJournals)
			}
			for i := len(prunes) - 1; i >= 0; i-- {
				mustRun(t, ExitOK, "--home", home, "--now", fixtureNow, "undo", prunes[i], "--apply")
			}
			after := dumpHygiene(t, home, false)
			delete(after, "sessions_files") // files the repairs moved stay in their stashes
			delete(repaired, "sessions_files")
			compareDump(t, after, repaired)
		})
	}
}

// maintainData is the part of data of maintain --json the hygiene tests read.
type maintainData struct {
	Skipped      []string            `json:"skipped_steps"`
	StepJournals map[string][]string `json:"step_journals"`
	Backup       *struct {
		Backup string `json:"backup"`
	} `json:"backup"`
}

// runMaintainJSON runs maintain --json (exit 0) and returns its data.
func runMaintainJSON(t *testing.T, args ...string) maintainData {
	t.Helper()
	stdout := mustRun(t, ExitOK, args...)
	var env struct{ Data maintainData }
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return env.Data
}

// mustRun runs the CLI and fails the test unless it exits with code; it returns stdout.
func mustRun(t *testing.T, code int, args ...string) string {
	t.Helper()
	got, stdout, stderr := runCLI(t, args...)
	if got != code {
		t.Fatalf("%v: exit %d, want %d\n%s\n%s", args, got, code, stdout, stderr)
	}
	return stdout
}
