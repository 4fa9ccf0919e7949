//go:build unix

package commands

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// nobody is the uid and gid that owns the home in TestSudoKeepsHomeOwner.
const nobody = 65534

// TestSudoKeepsHomeOwner (issue 31, "run once with sudo, locked out for ever"): on a home
// owned by another user, writes run as root — a routing write, a state.db repair that stashes
// transcripts, a backup — create sessionctl/, its lock, journals, stash directories and
// backups owned by the home's owner and group; then that user's own maintain --apply and
// undo --last --apply work. Skipped unless the test runs as root (it must chown and switch
// user).
func TestSudoKeepsHomeOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it runs writes as root on a home owned by another user, then as that user")
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} { // t.TempDir's directories are 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := fixtureHomeAt(t, genDB, filepath.Join(base, "home"))
	if err := filepath.WalkDir(home, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	}); err != nil {
		t.Fatal(err)
	}
	metrics := filepath.Join(home, "metrics.prom") // a --metrics-file inside the home
	for _, args := range [][]string{{"suspend", keyBoth, "--apply"}, {"prune-ghosts", "--apply"}, {"backup"}, {"status", "--metrics-file", metrics}} {
		if code, _, stderr := runChild(t, 0, append([]string{"--home", home, "--now", fixtureNow}, args...)...); code != ExitOK {
			t.Fatalf("as root: %v: exit %d: %s", args, code, stderr)
		}
	}
	assertOwnedByNobody(t, metrics)
	created := assertOwnedByNobody(t, filepath.Join(home, "sessionctl"))
	if created < 6 { // sessionctl/, lock, journal/, two journals, a stash, backups/…
		t.Fatalf("only %d paths under sessionctl/", created)
	}

	// the owner's own runs: the cron job's maintain, and the undo of root's last journal
	for _, args := range [][]string{{"maintain", "--apply", "--fail-on", "never"}, {"undo", "--last", "--apply"}} {
		runAsNobody(t, base, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
	}
}

// TestSudoStashAcrossFilesystems (issue 31, item 9): a stash filled by a copy, the sessions
// directory being on another filesystem than the home (a symbolic link into /dev/shm, a
// tmpfs), made by root on a home owned by another user: the stash and every file copied into
// it are that user's (a copy keeps its file's owner, as a rename does), and that user's undo
// copies them back. Skipped unless root and /dev/shm is another filesystem.
func TestSudoStashAcrossFilesystems(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it runs a write as root on a home owned by another user, then as that user")
	}
	base := t.TempDir()
	shm, err := os.MkdirTemp("/dev/shm", "sessionctl-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(shm) })
	if sameDevice(t, base, shm) {
		t.Skip("/dev/shm is on the same filesystem as the test's directory")
	}
	for _, d := range []string{filepath.Dir(base), base, shm} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := fixtureHomeAt(t, genDB, filepath.Join(base, "home"))
	sessions := filepath.Join(shm, "sessions")
	if err := os.Rename(filepath.Join(home, "sessions"), sessions); err != nil { // across: a copy
		if err := copyTree(filepath.Join(home, "sessions"), sessions); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(home, "sessions")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(sessions, filepath.Join(home, "sessions")); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{home, shm} {
		if err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		}); err != nil {
			t.Fatal(err)
		}
	}
	transcripts := plainFiles(t, shm)
	if code, _, stderr := runChild(t, 0, "--home", home, "--now", fixtureNow, "prune-ghosts", "--apply"); code != ExitOK {
		t.Fatalf("as root: prune-ghosts: exit %d: %s", code, stderr)
	}
	stashes, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*.files", "*"))
	if len(stashes) == 0 {
		t.Fatal("prune-ghosts stashed no file")
	}
	assertOwnedByNobody(t, filepath.Join(home, "sessionctl"))
	runAsNobody(t, base, "--home", home, "--now", fixtureNow, "undo", "--last", "--apply")
	comparePlainFiles(t, plainFiles(t, shm), transcripts)
	assertOwnedByNobody(t, sessions)
}

// sameDevice reports whether a and b are on the same filesystem.
func sameDevice(t *testing.T, a, b string) bool {
	t.Helper()
	var sa, sb syscall.Stat_t
	if err := syscall.Stat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(b, &sb); err != nil {
		t.Fatal(err)
	}
	return sa.Dev == sb.Dev
}

// assertOwnedByNobody checks that path and everything below it (not followed) is owned by
// nobody:nobody, and returns how many paths it checked.
func assertOwnedByNobody(t *testing.T, path string) int {
	t.Helper()
	var n int
	if err := filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		n++
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody || st.Gid != nobody {
			t.Errorf("%s: owner %d:%d, want the home's %d:%d", p, st.Uid, st.Gid, nobody, nobody)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// runAsNobody runs sessionctl with args as nobody:nobody (a copy of the test binary in base,
// where that user can run it), failing the test unless it exits 0.
func runAsNobody(t *testing.T, base string, args ...string) {
	t.Helper()
	exe := filepath.Join(base, "sessionctl.test")
	if _, err := os.Stat(exe); err != nil {
		data, err := os.ReadFile(mustExecutable(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := childCmd(t, 0, args...)
	cmd.Path, cmd.Args[0] = exe, exe
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	cmd.Dir = base
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("as the home's owner: %v: %v: %s", args, err, stderr.String())
	}
}

// mustExecutable is the running test binary's path.
func mustExecutable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
