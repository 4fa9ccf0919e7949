package sessionsjson

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileAtomicIf: the last check runs after the temp file is written, before the
// rename; its error leaves the target as it was, no temp file behind, and is returned.
func TestWriteFileAtomicIf(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sessions.json")
	mustWrite(t, path, "old", 0o644)
	changed := errors.New("replaced by another writer")
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
	var sawTemp bool
	err := WriteFileAtomicIf(path, ".sessions_*.tmp", write, func() error {
		tmps, _ := filepath.Glob(filepath.Join(dir, ".sessions_*.tmp"))
		sawTemp = len(tmps) == 1
		return changed
	})
	if !errors.Is(err, changed) || !sawTemp {
		t.Fatalf("err %v, temp file written before the check %v", err, sawTemp)
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("target %q, want old", data)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".sessions_*.tmp")); len(tmps) != 0 {
		t.Errorf("temp files left: %v", tmps)
	}
	if err := WriteFileAtomicIf(path, ".sessions_*.tmp", write, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "new" {
		t.Errorf("target %q, want new", data)
	}
}
