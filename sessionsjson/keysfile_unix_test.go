//go:build unix

package sessionsjson

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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
