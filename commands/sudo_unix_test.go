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
	for _, args := range [][]string{{"suspend", keyBoth, "--apply"}, {"prune-ghosts", "--apply"}, {"backup"}} {
		if code, _, stderr := runChild(t, 0, append([]string{"--home", home, "--now", fixtureNow}, args...)...); code != ExitOK {
			t.Fatalf("as root: %v: exit %d: %s", args, code, stderr)
		}
	}
	var created int
	if err := filepath.WalkDir(filepath.Join(home, "sessionctl"), func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		created++
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobody || st.Gid != nobody {
			t.Errorf("%s: owner %d:%d, want the home's %d:%d", p, st.Uid, st.Gid, nobody, nobody)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if created < 6 { // sessionctl/, lock, journal/, two journals, a stash, backups/…
		t.Fatalf("only %d paths under sessionctl/", created)
	}

	// the owner's own runs: the cron job's maintain, and the undo of root's last journal
	exe := filepath.Join(base, "sessionctl.test") // the test binary, where that user can run it
	data, err := os.ReadFile(mustExecutable(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"maintain", "--apply", "--fail-on", "never"}, {"undo", "--last", "--apply"}} {
		cmd := childCmd(t, 0, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
		cmd.Path, cmd.Args[0] = exe, exe
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		cmd.Dir = base
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("as the home's owner: %v: %v: %s", args, err, stderr.String())
		}
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
