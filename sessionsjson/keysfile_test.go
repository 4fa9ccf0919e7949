package sessionsjson

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEachKeyOfFile: the keys read from a file (mapped, its pages let go as the scan moves
// on) are eachKey's over its bytes, for a file larger than a release step; a missing file is
// fs.ErrNotExist, a directory is refused as ReadRegularFile refuses it, and a file Decode
// refuses is refused.
func TestEachKeyOfFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("{\n  \"_README\": \"x\"")
	for i := 0; b.Len() < 3*releaseStep; i++ {
		fmt.Fprintf(&b, ",\n  \"agent:main:k%d\": %s", i, validEntry)
	}
	b.WriteString(",\n  \"agent:main:k0\": 1\n}\n")
	big := filepath.Join(dir, "sessions.json")
	if err := os.WriteFile(big, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	if err := eachKey([]byte(b.String()), RulesFor(GenR0715), func(k string) { want = append(want, k) }, func(int) {}); err != nil {
		t.Fatal(err)
	}
	if err := EachKeyOfFile(big, MaxSessionsJSONBytes, RulesFor(GenR0715), func(k string) { got = append(got, k) }); err != nil {
		t.Fatal(err)
	}
	if len(want) < 1000 || !slices.Equal(got, want) {
		t.Errorf("%d keys from the file, %d from its bytes", len(got), len(want))
	}

	if err := EachKeyOfFile(filepath.Join(dir, "none.json"), MaxSessionsJSONBytes, RulesFor(GenR0715), func(string) {}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if err := EachKeyOfFile(dir, MaxSessionsJSONBytes, RulesFor(GenR0715), func(string) {}); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v", err)
	}
	if err := EachKeyOfFile(big, 10, RulesFor(GenR0715), func(string) {}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	for name, text := range map[string]string{"empty": "", "truncated": `{"a": {`, "BOM": "\xEF\xBB\xBF{}", "bad UTF-8": "{\"a\": \"\xff\"}"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, derr := Decode([]byte(text), RulesFor(GenR0715))
		err := EachKeyOfFile(path, MaxSessionsJSONBytes, RulesFor(GenR0715), func(string) {})
		if err == nil || derr == nil || err.Error() != derr.Error() {
			t.Errorf("%s: EachKeyOfFile %v, Decode %v", name, err, derr)
		}
	}
}
