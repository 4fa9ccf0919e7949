package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// tracedRun runs sessionctl --json in a child process with the fsync trace selected
// (sessionsjson.FaultSyncTrace) and returns its exit code and the trace's lines, the paths
// made relative to home ("HOME/…").
func tracedRun(t *testing.T, home string, args ...string) (int, []string) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "fsync.trace")
	code, envl, stderr := runOutcome(t, []string{sessionsjson.FaultPointEnv + "=" + sessionsjson.FaultSyncTrace + ":" + trace}, home, args...)
	if code != ExitOK {
		t.Fatalf("%q: exit %d, envelope %+v: %s", args, code, envl, stderr)
	}
	data, err := os.ReadFile(trace)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" {
			lines = append(lines, strings.ReplaceAll(l, home, "HOME"))
		}
	}
	return code, lines
}

// assertSyncs checks that the trace holds, in this order (other syncs may come between),
// a line matching each pattern: "file GLOB" or "dir GLOB", GLOB as filepath.Match takes it.
func assertSyncs(t *testing.T, what string, lines, patterns []string) {
	t.Helper()
	i := 0
	for _, l := range lines {
		if i < len(patterns) && syncMatches(patterns[i], l) {
			i++
		}
	}
	if i < len(patterns) {
		t.Errorf("%s: no sync matching %q (in order, after %q) among\n%s", what, patterns[i], patterns[:i], strings.Join(lines, "\n"))
	}
}

func syncMatches(pattern, line string) bool {
	pk, pp, _ := strings.Cut(pattern, " ")
	lk, lp, _ := strings.Cut(line, " ")
	ok, err := filepath.Match(pp, lp)
	return err == nil && ok && pk == lk
}

// TestDurableWritesSync: every durable write fsyncs what it wrote, and the directory that
// names it, before it goes on (issue 33), seen through the fsync trace of the real binary:
// the temp file of an atomic replace (sessions.json, the counts file, an undo's finished
// journal, the metrics file) before its directory, each journal (its temp file: journals are
// replaced atomically, issue 31) before its directory, a
// prune's row store directory and stash, every file of a backup and its manifest before the
// backup directory is published, compact's copy before its name. (A row store's content is
// committed by SQLite with synchronous=FULL: TestRowStoreSynchronousFull in statedb.)
func TestDurableWritesSync(t *testing.T) {
	const journal = "HOME/sessionctl/journal"
	json := fixtureHome(t, "r0703-52d0d671e")
	_, lines := tracedRun(t, json, "suspend", "agent:main:slack:dm:D043095675", "--apply")
	assertSyncs(t, "suspend (sessions.json)", lines, []string{"file " + journal + "/.journal_*-suspend.tmp", "dir " + journal,
		"file HOME/sessions/.sessionctl-*-suspend-*.tmp", "dir HOME/sessions"})
	_, lines = tracedRun(t, json, "suspend-stuck", "--apply")
	assertSyncs(t, "suspend-stuck (counts file)", lines, []string{"file " + journal + "/.journal_*-suspend-stuck.tmp", "dir " + journal,
		"file HOME/.sessionctl-*-suspend-stuck-*.tmp", "dir HOME"})
	_, lines = tracedRun(t, json, "undo", "--last", "--apply")
	assertSyncs(t, "undo", lines, []string{"file " + journal + "/.journal_*-undo.tmp", "dir " + journal,
		"file HOME/.sessionctl-*-undo-*.tmp", "dir HOME", "file " + journal + "/.journal_*.tmp", "dir " + journal})

	db := fixtureHome(t, genR0817)
	_, lines = tracedRun(t, db, "prune-ghosts", "--apply")
	assertSyncs(t, "prune-ghosts", lines, []string{"file " + journal + "/.journal_*-prune-ghosts.tmp", "dir " + journal,
		"dir " + journal + "/*-prune-ghosts.files", "dir HOME/sessions"})
	_, lines = tracedRun(t, db, "prune", "--older-than", "7d", "--apply")
	assertSyncs(t, "prune", lines, []string{"dir " + journal, "file " + journal + "/.journal_*-prune.tmp", "dir " + journal,
		"dir " + journal + "/*-prune.files", "dir HOME/sessions"})
	_, lines = tracedRun(t, db, "undo", "--last", "--apply")
	assertSyncs(t, "undo of prune", lines, []string{"file " + journal + "/.journal_*-undo.tmp", "dir " + journal,
		"dir HOME/sessions", "file " + journal + "/.journal_*.tmp", "dir " + journal})
	_, lines = tracedRun(t, db, "compact", "--apply")
	assertSyncs(t, "compact", lines, []string{"file " + journal + "/.journal_*-compact.tmp", "dir " + journal})
	out := t.TempDir()
	_, lines = tracedRun(t, db, "compact", "--into", filepath.Join(out, "c.db"))
	assertSyncs(t, "compact --into", lines, []string{"file " + out + "/.c.db.sessionctl-*", "dir " + out})
	_, lines = tracedRun(t, db, "maintain", "--metrics-file", filepath.Join(db, "m.prom"))
	assertSyncs(t, "metrics file", lines, []string{"file HOME/.m.prom.*.tmp", "dir HOME"})

	const tmp = "HOME/sessionctl/backups/.tmp-backup-*"
	_, lines = tracedRun(t, db, "backup", "--transcripts")
	assertSyncs(t, "backup", lines, []string{"file " + tmp + "/state.db", "file " + tmp + "/sessions/sessions.json",
		"file " + tmp + "/.restart_failure_counts", "file " + tmp + "/sessions/*.jsonl", "dir " + tmp + "/sessions",
		"file " + tmp + "/manifest.json", "dir " + tmp, "dir HOME/sessionctl/backups"})
	backups, err := filepath.Glob(filepath.Join(db, "sessionctl", "backups", "2*"))
	if err != nil || len(backups) != 1 {
		t.Fatalf("backups %v, %v", backups, err)
	}
	_, lines = tracedRun(t, db, "restore", backups[0], "--apply")
	const saved = journal + "/.tmp-backup-*"
	assertSyncs(t, "restore", lines, []string{"file " + saved + "/state.db", "file " + saved + "/manifest.json", "dir " + saved, "dir " + journal,
		"file " + journal + "/.journal_*-restore.tmp", "dir " + journal,
		"file HOME/.state.db.sessionctl-restore", "file HOME/sessions/.sessions.json.sessionctl-restore", "dir HOME", "dir HOME/sessions"})
	_, lines = tracedRun(t, db, "--now", "2027-01-01T00:00:00Z", "journal", "prune", "--older-than", "1s", "--apply")
	assertSyncs(t, "journal prune", lines, []string{"dir " + journal})
}

// TestEverySyncIsTraced: no production code fsyncs a file but through sessionsjson's Fsync
// and syncPath, so the trace TestDurableWritesSync reads sees every sync.
func TestEverySyncIsTraced(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		slash := filepath.ToSlash(path)
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(slash, "../scripts/") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := strings.Count(string(src), ".Sync()")
		if slash == "../sessionsjson/atomic.go" {
			n -= 2 // Fsync's and syncPath's own
		}
		if n != 0 {
			t.Errorf("%s: %d fsync(s) not through sessionsjson.Fsync, SyncFile or SyncDir", path, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
