package sessionsjson

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestToolLockRefusesLinks: a symbolic link (or a file of the wrong type) as
// <home>/sessionctl, its lock, its journal directory or an entry of it is refused with
// ErrUnsafeToolPath, and nothing is created or written where it points. A home reached
// through a link is fine.
func TestToolLockRefusesLinks(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, h Home, outside string)
	}{
		{"tool dir is a link", func(t *testing.T, h Home, outside string) {
			mustSymlink(t, outside, h.ToolDir())
		}},
		{"tool dir is a file", func(t *testing.T, h Home, outside string) {
			mustWrite(t, h.ToolDir(), "x", 0o600)
		}},
		{"lock is a link to a file", func(t *testing.T, h Home, outside string) {
			mustMkdir(t, h.ToolDir())
			mustWrite(t, filepath.Join(outside, "x"), "keep", 0o600)
			mustSymlink(t, filepath.Join(outside, "x"), h.ToolLockFile())
		}},
		{"lock is a dangling link", func(t *testing.T, h Home, outside string) {
			mustMkdir(t, h.ToolDir())
			mustSymlink(t, filepath.Join(outside, "new"), h.ToolLockFile())
		}},
		{"lock is a named pipe", func(t *testing.T, h Home, outside string) {
			mustMkdir(t, h.ToolDir())
			mkfifo(t, h.ToolLockFile())
		}},
		{"journal dir is a link", func(t *testing.T, h Home, outside string) {
			mustMkdir(t, h.ToolDir())
			mustSymlink(t, outside, h.JournalDir())
		}},
		{"a stash is a link", func(t *testing.T, h Home, outside string) {
			mustMkdir(t, h.JournalDir())
			mustSymlink(t, outside, filepath.Join(h.JournalDir(), "j.files"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, outside := Home{Dir: t.TempDir()}, t.TempDir()
			tt.plant(t, h, outside)
			before := listDir(t, outside)
			release, err := AcquireToolLock(h)
			if err == nil {
				release()
				t.Fatal("lock taken")
			}
			if !errors.Is(err, ErrUnsafeToolPath) {
				t.Fatalf("error %v is not ErrUnsafeToolPath", err)
			}
			if after := listDir(t, outside); after != before {
				t.Errorf("outside the home: %s, was %s", after, before)
			}
			if data, err := os.ReadFile(filepath.Join(outside, "x")); err == nil && string(data) != "keep" {
				t.Errorf("file outside written: %q", data)
			}
		})
	}
	t.Run("home through a link", func(t *testing.T) {
		real := t.TempDir()
		link := filepath.Join(t.TempDir(), "home")
		mustSymlink(t, real, link)
		release, err := AcquireToolLock(Home{Dir: link})
		if err != nil {
			t.Fatal(err)
		}
		release()
		if _, err := os.Stat(filepath.Join(real, "sessionctl", "lock")); err != nil {
			t.Fatal(err)
		}
	})
}

// TestMakeToolDir: directories below <home>/sessionctl are made one at a time, never through
// a link, and only there; the directories to sync are returned.
func TestMakeToolDir(t *testing.T) {
	h := Home{Dir: t.TempDir()}
	dirs, err := MakeToolDir(h, filepath.Join(h.JournalDir(), "j.files"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(h.JournalDir(), "j.files"), h.Dir, h.ToolDir(), h.JournalDir()}
	if len(dirs) != len(want) {
		t.Fatalf("dirs = %v, want %v", dirs, want)
	}
	for i := range want {
		if dirs[i] != want[i] {
			t.Fatalf("dirs = %v, want %v", dirs, want)
		}
	}
	if dirs, err := MakeToolDir(h, h.JournalDir()); err != nil || len(dirs) != 1 {
		t.Fatalf("again: %v, %v", dirs, err)
	}
	for _, dir := range []string{h.Dir, filepath.Join(h.Dir, "sessions"), h.ToolDir() + "/../x", "sessionctl/journal"} {
		if _, err := MakeToolDir(h, dir); !errors.Is(err, ErrUnsafeToolPath) {
			t.Errorf("MakeToolDir(%s) = %v", dir, err)
		}
	}
	outside := t.TempDir()
	mustSymlink(t, outside, filepath.Join(h.JournalDir(), "l.files"))
	if _, err := MakeToolDir(h, filepath.Join(h.JournalDir(), "l.files", "deeper")); !errors.Is(err, ErrUnsafeToolPath) {
		t.Errorf("through a link: %v", err)
	}
	if got := listDir(t, outside); got != "" {
		t.Errorf("made outside: %s", got)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := ""
	for _, e := range entries {
		s += e.Name() + " "
	}
	return s
}

// TestRelBelow: a path is below a root when its relative path does not climb out, whatever
// the separator; a name that starts with two dots is not a climb.
func TestRelBelow(t *testing.T) {
	root := filepath.Join(string(filepath.Separator)+"h", "sessionctl")
	for _, tt := range []struct {
		path string
		want bool
	}{
		{root, true},
		{filepath.Join(root, "backups"), true},
		{filepath.Join(root, "..backups"), true},
		{filepath.Dir(root), false},
		{filepath.Join(filepath.Dir(root), "elsewhere"), false},
		{filepath.Join(string(filepath.Separator)+"other", "sessionctl"), false},
	} {
		if _, got := RelBelow(root, tt.path); got != tt.want {
			t.Errorf("RelBelow(%s, %s) = %v, want %v", root, tt.path, got, tt.want)
		}
	}
}
