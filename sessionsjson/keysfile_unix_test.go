//go:build unix

package sessionsjson

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestEachKeyOfFileCut: a file cut shorter in place while it is read (its mapping then faults)
// ends the scan with an error, not a crash.
func TestEachKeyOfFileCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.json")
	text := "{" + strings.Repeat(`"k": `+validEntry+`, `, 4*releaseStep/len(validEntry)) + `"z": 1}`
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cut := false
	err := EachKeyOfFile(path, MaxSessionsJSONBytes, RulesFor(GenR0715), func(string) {
		if !cut {
			cut = true
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !errors.Is(err, errFileShrank) {
		t.Fatalf("EachKeyOfFile on a file cut while read: %v", err)
	}
}

// TestCrossDevice: a rename's EXDEV, wrapped as os.Rename wraps it, is a move to another
// filesystem; other errors are not.
func TestCrossDevice(t *testing.T) {
	if !CrossDevice(&os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EXDEV}) {
		t.Error("EXDEV is not seen as a cross-device rename")
	}
	for _, err := range []error{nil, &os.LinkError{Op: "rename", Err: syscall.ENOENT}, fs.ErrExist} {
		if CrossDevice(err) {
			t.Errorf("%v seen as a cross-device rename", err)
		}
	}
}
