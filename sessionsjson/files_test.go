package sessionsjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		setup func(t *testing.T) (write, check string)
		mode  os.FileMode
	}{
		{"new file gets 0600", func(t *testing.T) (string, string) {
			p := filepath.Join(dir, "new.json")
			return p, p
		}, 0o600},
		{"existing mode kept", func(t *testing.T) (string, string) {
			p := filepath.Join(dir, "kept.json")
			mustWrite(t, p, "old", 0o640)
			return p, p
		}, 0o640},
		{"symlink written through", func(t *testing.T) (string, string) {
			real := filepath.Join(dir, "real.json")
			mustWrite(t, real, "old", 0o644)
			link := filepath.Join(dir, "link.json")
			if err := os.Symlink("real.json", link); err != nil {
				t.Fatal(err)
			}
			return link, real
		}, 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write, check := tt.setup(t)
			if err := WriteFileAtomic(write, []byte("new"), ".sessions_*.tmp"); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(check)
			if err != nil || fi.Mode().Perm() != tt.mode {
				t.Fatalf("stat %s: %v %v", check, fi.Mode(), err)
			}
			if data, _ := os.ReadFile(check); string(data) != "new" {
				t.Fatalf("content %q", data)
			}
			if li, _ := os.Lstat(write); write != check && li.Mode()&os.ModeSymlink == 0 {
				t.Fatal("symlink was replaced")
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".sessions_*")); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

// TestWriteFileAtomicFailure: a write that fails, before the temp file exists (a directory
// that refuses new entries) or after it was written (renaming onto a non-empty directory),
// leaves the target as it was and no temp file.
func TestWriteFileAtomicFailure(t *testing.T) {
	t.Run("read-only directory", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "sessions.json")
		mustWrite(t, target, "old", 0o600)
		readOnlyDir(t, dir)
		if err := WriteFileAtomic(target, []byte("new"), ".sessions_*.tmp"); err == nil {
			t.Fatal("write into a read-only directory succeeded")
		}
		assertUnchanged(t, dir, target)
	})
	t.Run("rename onto a directory", func(t *testing.T) {
		// Renaming onto a directory fails after the temp file was written: it must be removed.
		dir := t.TempDir()
		target := filepath.Join(dir, "sessions.json")
		mustWrite(t, target, "old", 0o600)
		sub := filepath.Join(dir, "adir")
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(sub, "x"), "", 0o600)
		if err := WriteFileAtomic(sub, []byte("new"), ".sessions_*.tmp"); err == nil {
			t.Fatal("replacing a non-empty directory succeeded")
		}
		assertUnchanged(t, dir, target)
	})
}

// assertUnchanged checks that target still holds "old" and that dir has no temp file.
func assertUnchanged(t *testing.T, dir, target string) {
	t.Helper()
	if data, _ := os.ReadFile(target); string(data) != "old" {
		t.Fatalf("target changed: %q", data)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".sessions_*")); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

// readOnlyDir makes dir refuse new entries (and renames and removals) until the test ends:
// mode 0500 for an ordinary user; for root, whom permission bits do not stop, the immutable
// attribute (chattr +i), which binds root too. The test is skipped, saying why, when root has
// no chattr or the file system has no immutable attribute.
func readOnlyDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return
	}
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		t.Skip("running as root, which a 0500 directory does not stop, and chattr (to make the directory immutable) is not installed")
	}
	if out, err := exec.Command(chattr, "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("running as root, which a 0500 directory does not stop, and `chattr +i` fails here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command(chattr, "-i", dir).CombinedOutput(); err != nil {
			t.Errorf("chattr -i %s: %v: %s", dir, err, out)
		}
	})
	probe := filepath.Join(dir, ".immutable-probe")
	if err := os.WriteFile(probe, nil, 0o600); err == nil {
		os.Remove(probe)
		t.Skip("running as root, which a 0500 directory does not stop, and the immutable attribute does not stop it either here")
	}
}

// TestWriteFileAtomicFromWriterError: a streaming writer that fails half way leaves the
// target as it was and no temp file.
func TestWriteFileAtomicFromWriterError(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "sessions.json")
	mustWrite(t, target, "old", 0o600)
	boom := errors.New("boom")
	err := WriteFileAtomicFrom(target, ".sessions_*.tmp", func(w io.Writer) error {
		if _, err := w.Write(bytes.Repeat([]byte("x"), 3<<20)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "old" {
		t.Fatalf("target changed: %.20q", data)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".sessions_*")); len(left) > 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

func mustWrite(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestToolLock(t *testing.T) {
	h := Home{Root: t.TempDir()}
	h.Dir = h.Root
	release, err := AcquireToolLock(h)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(h.ToolLockFile()); string(data) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Fatalf("lock file content %q", data)
	}
	_, err = AcquireToolLock(h)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Fatalf("second acquire = %v", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	release, err = AcquireToolLock(h)
	if err != nil {
		t.Fatalf("re-acquire: %v", err)
	}
	_ = release()
	if fi, _ := os.Stat(h.ToolDir()); fi.Mode().Perm() != 0o700 {
		t.Errorf("tool dir mode %v", fi.Mode())
	}
	missing := Home{Dir: filepath.Join(h.Root, "nope")}
	if _, err := AcquireToolLock(missing); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing home: %v", err)
	}
}

func TestResolveHome(t *testing.T) {
	root := t.TempDir()
	withActive := filepath.Join(root, "withactive")
	mustMkdir(t, withActive)
	mustWrite(t, filepath.Join(withActive, "active_profile"), "coder\n", 0o600)
	badActive := filepath.Join(root, "badactive")
	mustMkdir(t, badActive)
	mustWrite(t, filepath.Join(badActive, "active_profile"), "Bad Name", 0o600)
	dirActive := filepath.Join(root, "diractive")
	mustMkdir(t, filepath.Join(dirActive, "active_profile"))
	binActive := filepath.Join(root, "binactive")
	mustMkdir(t, binActive)
	mustWrite(t, filepath.Join(binActive, "active_profile"), "coder\xff", 0o600)
	twoLines := filepath.Join(root, "twolines")
	mustMkdir(t, twoLines)
	mustWrite(t, filepath.Join(twoLines, "active_profile"), "coder\nother\n", 0o600)
	padded := filepath.Join(root, "padded")
	mustMkdir(t, padded)
	mustWrite(t, filepath.Join(padded, "active_profile"), "\x1c coder\t\n\u3000", 0o600)
	profDir := filepath.Join(withActive, "profiles", "x")
	mustMkdir(t, profDir)
	mustWrite(t, filepath.Join(profDir, "active_profile"), "coder", 0o600)
	tests := []struct {
		name               string
		opts               HomeOptions
		env                map[string]string
		dir, src, psrc, pr string
		err                error
	}{
		{"default", HomeOptions{UserHomeDir: root}, nil, filepath.Join(root, ".hermes"), SourceDefault, "", "", nil},
		{"env trimmed", HomeOptions{UserHomeDir: root}, map[string]string{"HERMES_HOME": " " + withActive + "\n"}, filepath.Join(withActive, "profiles", "coder"), SourceEnv, SourceActiveProfile, "coder", nil},
		{"flag beats env", HomeOptions{Home: root}, map[string]string{"HERMES_HOME": withActive}, root, SourceFlag, "", "", nil},
		{"profile flag", HomeOptions{Home: withActive, Profile: "ops"}, nil, filepath.Join(withActive, "profiles", "ops"), SourceFlag, SourceFlag, "ops", nil},
		{"profile default", HomeOptions{Home: withActive, Profile: "default"}, nil, withActive, SourceFlag, SourceFlag, "default", nil},
		{"invalid profile flag", HomeOptions{Home: root, Profile: "../x"}, nil, "", "", "", "", ErrInvalid},
		{"invalid active_profile", HomeOptions{Home: badActive}, nil, "", "", "", "", ErrCorrupt},
		{"active_profile a directory", HomeOptions{Home: dirActive}, nil, "", "", "", "", ErrCorrupt},
		{"active_profile not UTF-8", HomeOptions{Home: binActive}, nil, "", "", "", "", ErrCorrupt},
		{"active_profile stripped whole", HomeOptions{Home: twoLines}, nil, "", "", "", "", ErrCorrupt},
		{"active_profile stripped as Python strips", HomeOptions{Home: padded}, nil, filepath.Join(padded, "profiles", "coder"), SourceFlag, SourceActiveProfile, "coder", nil},
		{"s6 child ignores active_profile", HomeOptions{Home: withActive}, map[string]string{"HERMES_S6_SUPERVISED_CHILD": "1"}, withActive, SourceFlag, "", "", nil},
		{"profile dir ignores active_profile", HomeOptions{Home: profDir}, nil, profDir, SourceFlag, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Getenv = func(k string) string { return tt.env[k] }
			h, err := ResolveHome(tt.opts)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				var ape *ActiveProfileError
				if errors.Is(tt.err, ErrCorrupt) && (!errors.As(err, &ape) || !strings.HasPrefix(err.Error(), filepath.Join(tt.opts.Home, "active_profile")+": ")) {
					t.Errorf("error %v does not name the active_profile file", err)
				}
				return
			}
			if err != nil || h.Dir != tt.dir || h.HomeSource != tt.src || h.ProfileSource != tt.psrc || h.Profile != tt.pr {
				t.Fatalf("ResolveHome = %+v, %v", h, err)
			}
		})
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func TestHomeValidate(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	mustWrite(t, file, "", 0o600)
	badSessions := filepath.Join(root, "bad")
	mustMkdir(t, badSessions)
	mustWrite(t, filepath.Join(badSessions, "sessions"), "", 0o600)
	withSessions, withDB, empty := filepath.Join(root, "s"), filepath.Join(root, "d"), filepath.Join(root, "empty")
	mustMkdir(t, filepath.Join(withSessions, "sessions"))
	mustMkdir(t, withDB)
	mustWrite(t, filepath.Join(withDB, "state.db"), "", 0o600)
	mustMkdir(t, empty)
	tests := []struct {
		dir string
		err error
	}{
		{withSessions, nil}, {withDB, nil}, {empty, ErrNotFound}, {filepath.Join(root, "missing"), ErrNotFound},
		{file, ErrCorrupt}, {badSessions, ErrCorrupt},
	}
	for _, tt := range tests {
		err := Home{Root: tt.dir, Dir: tt.dir}.Validate()
		if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("Validate(%s) = %v, want %v", tt.dir, err, tt.err)
		}
	}
}

func TestResolvedSessionsDir(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	mustMkdir(t, filepath.Join(real, "sessions"))
	if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	resolvedRoot, _ := filepath.EvalSymlinks(root)
	tests := []struct{ dir, want string }{
		{filepath.Join(root, "link"), filepath.Join(resolvedRoot, "real", "sessions")},
		{filepath.Join(root, "link", "profiles", "p"), filepath.Join(resolvedRoot, "real", "profiles", "p", "sessions")},
	}
	for _, tt := range tests {
		got, err := ResolvedSessionsDir(Home{Dir: tt.dir})
		if err != nil || got != tt.want {
			t.Errorf("ResolvedSessionsDir(%s) = %s, %v; want %s", tt.dir, got, err, tt.want)
		}
	}
}
