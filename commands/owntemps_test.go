package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestOwnTempsBesideEveryFile (issue 31, items 3 and 4): a kill between a rewrite's temporary
// file and its rename leaves a file of sessionctl's own name, which its journal names before
// it is created, wherever the rewrite put it — beside the counts file in the home (suspend-stuck
// rewrites only the counts file), and in the directory a symbolic link sessions.json points
// into. check reports it as sessionctl's (journal.leftover-tmp), undo (or the next write)
// removes it, and the runtime's own temporary files beside them are never touched.
func TestOwnTempsBesideEveryFile(t *testing.T) {
	t.Parallel()
	t.Run("counts file", func(t *testing.T) {
		t.Parallel()
		home := fixtureHome(t, genJSON)
		runtimes := filepath.Join(home, ".restart_failure_counts_abc.tmp")
		if err := os.WriteFile(runtimes, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		counts, err := os.ReadFile(filepath.Join(home, ".restart_failure_counts"))
		if err != nil {
			t.Fatal(err)
		}
		sj, err := os.ReadFile(sessionsJSONPath(home))
		if err != nil {
			t.Fatal(err)
		}
		// killed at the second rewrite's temporary file: the counts file's, after sessions.json's
		runToFault(t, home, sessionsjson.FaultAfterTempSync+":2", []string{"suspend-stuck", "--apply"})
		js := journals(t, home)
		if len(js) != 1 {
			t.Fatalf("journals %v, want one", js)
		}
		ours := ownTemp(t, home, js[0])
		code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "check")
		if code != ExitOK && code != ExitFindings || !strings.Contains(stdout, "journal.leftover-tmp") || strings.Contains(stdout, "leftover-tmp .restart") {
			t.Errorf("check: exit %d, does not report %s as sessionctl's alone:\n%s\n%s", code, ours, stdout, stderr)
		}
		if code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", js[0], "--apply"); code != ExitOK {
			t.Fatalf("undo: exit %d\n%s\n%s", code, stdout, stderr)
		}
		if _, err := os.Lstat(ours); err == nil {
			t.Errorf("undo left sessionctl's temporary file %s", ours)
		}
		if got, err := os.ReadFile(sessionsJSONPath(home)); err != nil || !bytes.Equal(got, sj) {
			t.Errorf("sessions.json after undo: %d bytes (%v), want the %d it had", len(got), err, len(sj))
		}
		if _, err := os.Lstat(runtimes); err != nil {
			t.Errorf("the runtime's temporary file: %v", err)
		}
		if got, err := os.ReadFile(filepath.Join(home, ".restart_failure_counts")); err != nil || !bytes.Equal(got, counts) {
			t.Errorf("the counts file after undo: %q (%v), want %q", got, err, counts)
		}
	})
	t.Run("sessions.json a symbolic link", func(t *testing.T) {
		t.Parallel()
		home := fixtureHome(t, genJSON)
		target := filepath.Join(t.TempDir(), "sessions.json")
		if err := os.Rename(sessionsJSONPath(home), target); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, sessionsJSONPath(home)); err != nil {
			t.Fatal(err)
		}
		before, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		runToFault(t, home, sessionsjson.FaultAfterTempSync, []string{"suspend", keyBoth, "--apply"})
		js := journals(t, home)
		if len(js) != 1 {
			t.Fatalf("journals %v, want one", js)
		}
		ours := ownTemp(t, filepath.Dir(target), js[0])
		code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "check")
		if code != ExitOK && code != ExitFindings || !strings.Contains(stdout, "journal.leftover-tmp") {
			t.Errorf("check: exit %d, does not report %s:\n%s\n%s", code, ours, stdout, stderr)
		}
		// the next write of any kind settles it (here a plan-and-apply that changes the same entry)
		if code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "suspend", keyBoth, "--apply"); code != ExitOK || !strings.Contains(stderr, "removed "+ours) {
			t.Fatalf("the next write: exit %d, does not remove %s\n%s\n%s", code, ours, stdout, stderr)
		}
		if _, err := os.Lstat(ours); err == nil {
			t.Errorf("the next write left sessionctl's temporary file %s", ours)
		}
		js = journals(t, home)
		for i := len(js) - 1; i >= 0; i-- {
			if code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", js[i], "--apply"); code != ExitOK {
				t.Fatalf("undo %s: exit %d\n%s\n%s", js[i], code, stdout, stderr)
			}
		}
		if got, err := os.ReadFile(target); err != nil || !bytes.Equal(got, before) {
			t.Errorf("sessions.json after undo: %d bytes (%v), want the %d it had", len(got), err, len(before))
		}
		if fi, err := os.Lstat(sessionsJSONPath(home)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("sessions.json is no longer the symbolic link: %v %v", fi, err)
		}
	})
}

// ownTemp returns the one temporary file of sessionctl's own name, of the journal at
// journalPath, in dir.
func ownTemp(t *testing.T, dir, journalPath string) string {
	t.Helper()
	stem := strings.TrimSuffix(filepath.Base(journalPath), ".json")
	m, err := filepath.Glob(filepath.Join(dir, ".sessionctl-"+stem+"-*.tmp"))
	if err != nil || len(m) != 1 {
		all, _ := filepath.Glob(filepath.Join(dir, "*", ".*.tmp"))
		more, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
		all = append(all, more...)
		t.Fatalf("temporary files of %s in %s: %v (%v); all: %v", stem, dir, m, err, all)
	}
	return m[0]
}
