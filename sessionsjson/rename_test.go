package sessionsjson

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRenameNoReplace: a rename to a free name moves the file; one to a taken name is refused
// (fs.ErrExist) and changes neither file.
func TestRenameNoReplace(t *testing.T) {
	dir := t.TempDir()
	from, taken, free := filepath.Join(dir, "from"), filepath.Join(dir, "taken"), filepath.Join(dir, "free")
	for path, text := range map[string]string{from: "new", taken: "old"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := RenameNoReplace(from, taken); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("onto a taken name: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(taken); string(got) != "old" {
		t.Errorf("the taken name now holds %q", got)
	}
	if err := RenameNoReplace(from, free); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(free); string(got) != "new" {
		t.Errorf("the new name holds %q", got)
	}
	if _, err := os.Lstat(from); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old name is still there: %v", err)
	}
}
