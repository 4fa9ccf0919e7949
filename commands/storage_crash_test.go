package commands

// Crash tests of the storage writes: compact and restore killed (SIGKILL) at each fault point
// of their write paths and at random points lose nothing: state.db passes integrity_check and
// holds the same rows, the journal is there, and undo or a re-run finishes the job.

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/storage"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// TestCrashCompact kills compact --apply after the FTS optimize, after the VACUUM, and at
// random points: the rows are those of the untouched home, the database is sound, and a
// re-run of compact finishes.
func TestCrashCompact(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests skipped in -short mode")
	}
	t.Parallel()
	for _, gen := range []string{genDB, "r0817-481156139"} {
		before := loadExpected(t, gen, "before")
		for _, point := range []string{statedb.FaultAfterOptimize, statedb.FaultAfterVacuum} {
			t.Run(gen+"/"+point, func(t *testing.T) {
				home := fixtureHome(t, gen)
				runToFault(t, home, point, []string{"compact", "--apply"})
				assertIntegrity(t, filepath.Join(home, "state.db"))
				compareDump(t, dumpHome(t, home), before)
				if js := journals(t, home); len(js) != 1 {
					t.Errorf("%d journals, want 1", len(js))
				}
				if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "compact", "--apply"); code != ExitOK {
					t.Fatalf("re-run: exit %d: %s", code, stderr)
				}
				compareDump(t, dumpHome(t, home), before)
			})
		}
	}
	t.Run("random", func(t *testing.T) {
		before := loadExpected(t, genDB, "before")
		for i, delay := range killDelays(6, 400*time.Millisecond, killSeed+7) {
			home := fixtureHome(t, genDB)
			if exited, code := killChild(t, home, delay, "compact", "--apply"); exited && code != ExitOK {
				t.Fatalf("run %d: the unkilled child exited %d", i, code)
			}
			assertIntegrity(t, filepath.Join(home, "state.db"))
			compareDump(t, dumpHome(t, home), before)
		}
	})
}

// TestCrashRestore kills restore --apply after staging its copies and after swapping
// state.db in: the database is sound, `undo JOURNAL --apply` gives back the home as it was
// before the restore, and the restore run again gives the home of a restore that was not
// interrupted.
func TestCrashRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("crash tests skipped in -short mode")
	}
	t.Parallel()
	setup := func(t *testing.T) (home, backup string) {
		home = fixtureHome(t, genDB)
		to := t.TempDir()
		if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "backup", "--to", to); code != ExitOK {
			t.Fatalf("backup: exit %d: %s", code, stderr)
		}
		if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "prune-ghosts", "--apply"); code != ExitOK {
			t.Fatalf("prune-ghosts: exit %d: %s", code, stderr)
		}
		return home, filepath.Join(to, "20260716T093000Z")
	}
	before := dumpHome(t, fixtureHome(t, genDB))
	refHome, refBackup := setup(t)
	changed := dumpHome(t, refHome)
	if code, _, stderr := runChild(t, 0, "--home", refHome, "--now", fixtureNow, "restore", refBackup, "--apply"); code != ExitOK {
		t.Fatalf("reference restore: exit %d: %s", code, stderr)
	}
	restored := dumpHome(t, refHome)
	// killed while it saves the files it replaces (issue 31): no journal, the home as it
	// was, a temporary directory of sessionctl's that check reports and the next write removes
	t.Run(storage.FaultBackupFilled, func(t *testing.T) {
		home, backup := setup(t)
		runToFault(t, home, storage.FaultBackupFilled, []string{"restore", backup, "--apply"})
		compareDump(t, dumpHome(t, home), changed)
		if js := journals(t, home); len(js) != 1 || !strings.HasSuffix(js[0], "-prune-ghosts.json") {
			t.Fatalf("journals %v, want prune-ghosts' alone", js)
		}
		left, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", journal.SavedTemp+"*"))
		if len(left) != 1 {
			t.Fatalf("saved copies left: %v, want one", left)
		}
		code, stdout, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "check")
		if code != ExitOK && code != ExitFindings || !strings.Contains(stdout, "journal.orphan-stash") || !strings.Contains(stdout, journal.SavedTemp) {
			t.Errorf("check: exit %d, does not report %s\n%s\n%s", code, left[0], stdout, stderr)
		}
		code, _, stderr = runChild(t, 0, "--home", home, "--now", fixtureNow, "restore", backup, "--apply")
		if code != ExitOK || !strings.Contains(stderr, "removed "+left[0]) {
			t.Fatalf("restore again: exit %d, does not say it removed %s: %s", code, left[0], stderr)
		}
		if _, err := os.Lstat(left[0]); err == nil {
			t.Errorf("%s is still there", left[0])
		}
		compareDump(t, dumpHome(t, home), restored)
		js := journals(t, home)
		for i := len(js) - 1; i >= 0; i-- {
			if code, stdout, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "undo", js[i], "--apply"); code != ExitOK {
				t.Fatalf("undo %s: exit %d\n%s\n%s", js[i], code, stdout, stderr)
			}
		}
		compareDump(t, dumpHome(t, home), before)
	})
	for _, point := range []string{journal.FaultJournalTorn, storage.FaultRestoreStaged, storage.FaultRestoreSwapped} {
		t.Run(point, func(t *testing.T) {
			home, backup := setup(t)
			runToFault(t, home, point, []string{"restore", backup, "--apply"})
			assertIntegrity(t, filepath.Join(home, "state.db"))
			js := journals(t, home)
			var restoreJournal string
			for _, j := range js {
				if strings.HasSuffix(j, "-restore.json") {
					restoreJournal = j
				}
			}
			if restoreJournal == "" {
				t.Fatalf("no restore journal among %v", js)
			}
			code, stdout, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "undo", restoreJournal, "--apply")
			if code != ExitOK {
				t.Fatalf("undo: exit %d\n%s\n%s", code, stdout, stderr)
			}
			assertIntegrity(t, filepath.Join(home, "state.db"))
			compareDump(t, dumpHome(t, home), changed)
			if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "restore", backup, "--apply"); code != ExitOK {
				t.Fatalf("restore again: exit %d: %s", code, stderr)
			}
			compareDump(t, dumpHome(t, home), restored)
		})
	}
}

// TestRestoreSignalBeforeSwap: SIGINT or SIGTERM while a restore saves the current files or
// stages the backup's stops it before its first rename: exit 130 / 143, nothing applied, no
// journal, no saved copy and no staged file left, the home as it was (found by a helper's
// fault audit: the restore went on and exited 0).
func TestRestoreSignalBeforeSwap(t *testing.T) {
	for _, tt := range []struct {
		mode string
		code int
	}{{"sigint", 130}, {"sigterm", 143}} {
		t.Run(tt.mode, func(t *testing.T) {
			home := fixtureHome(t, genDB)
			to := t.TempDir()
			if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "backup", "--to", to); code != ExitOK {
				t.Fatalf("backup: exit %d: %s", code, stderr)
			}
			if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "prune-ghosts", "--apply"); code != ExitOK {
				t.Fatalf("prune-ghosts: exit %d: %s", code, stderr)
			}
			before := snapshotHome(t, home)
			fault := []string{sessionsjson.FaultPointEnv + "=" + storage.FaultRestoreStaged + ":" + tt.mode}
			code, envl, stderr := runOutcome(t, fault, home, "restore", filepath.Join(to, "20260716T093000Z"), "--apply")
			if code != tt.code || envl.Applied || len(envl.Journals) != 0 || envl.Error == nil || envl.Error.Kind != "interrupted" {
				t.Fatalf("exit %d %+v: %s; want %d, interrupted, nothing applied", code, envl, stderr, tt.code)
			}
			if after := snapshotHome(t, home); !maps.Equal(after, before) {
				t.Errorf("the home changed: %d files before, %d after", len(before), len(after))
			}
		})
	}
}
