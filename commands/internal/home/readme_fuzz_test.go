package home

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzReadmeText: never panics; whatever it returns is valid UTF-8 (invalid bytes become
// U+FFFD, so it can be longer than its input) and came from a JSON object.
func FuzzReadmeText(f *testing.F) {
	for _, s := range []string{`{"_README": "x", "k": {}}`, `{"k": 1}`, `[]`, `{"_README": 3}`, ``, `{"_README"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := readmeText(data)
		if got != "" && (!utf8.ValidString(got) || !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))) {
			t.Fatalf("readmeText(%q) = %q", data, got)
		}
	})
}
