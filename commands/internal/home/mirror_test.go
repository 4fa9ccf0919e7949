package home

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestSameEntryAgreesWithSameJSON: the whitespace fast path of the mirror comparison gives
// the answer of the full comparison (sameJSON of the canonical forms) for every pair.
func TestSameEntryAgreesWithSameJSON(t *testing.T) {
	rules := sessionsjson.RulesFor(sessionsjson.GenR0715)
	values := []string{
		`{"a": 1, "b": "x y"}`,
		"{\n  \"a\": 1,\n  \"b\": \"x y\"\n}",
		`{"a":1,"b":"x y"}`,
		`{"a": 1, "b": "xy"}`,
		`{"a": 1, "b": "x  y"}`,
		`{"b": "x y", "a": 1}`,
		`{"a": 1.0, "b": "x y"}`,
		`{"a": 1, "a": 2, "b": "x y"}`,
		`{"a": 2, "b": "x y"}`,
		`{"s": "é"}`,
		`{"s": "\u00e9"}`,
		`{"s": "a\" b", "t": "\\"}`,
		"{\"s\": \"a\\\" b\", \"t\": \"\\\\\"}",
		`{"s": "a\"b", "t": "\\"}`,
		`{"n": 1e400}`,
		"{\n  \"n\": 1e400\n}",
		`{"n": 1E2, "m": -0.5e-3}`,
		`{"n": 100.0, "m": -0.0005}`,
		`{"n": ` + strings.Repeat("9", 400) + `}`,
		"{\"n\":\n " + strings.Repeat("9", 400) + "}",
		`{"n": 123456789012345678901234567890}`,
		`{"n": 123456789012345678901234567890.0}`,
		`{"n": NaN, "i": [Infinity, -Infinity]}`,
		"{\n  \"n\": NaN,\n  \"i\": [Infinity, -Infinity]\n}",
		`{"n": NaN, "i": [1e999, -1e999]}`,
		`{"n": NaN, "i": [Infinity, Infinity]}`,
		`{"s": "\ud800"}`,
		`{"s": "\ufffd"}`,
		`{"l": [1, 2, {"x": null}], "t": true, "f": false}`,
		"{\"l\":[1,2,{\"x\":null}],\"t\":true,\"f\":false}",
		`"not an object"`,
		`[1, 2]`,
		`[1,2]`,
		`[12]`,
		`null`,
	}
	for _, row := range values {
		for _, mirror := range values {
			p, err := sessionsjson.DecodeEntry("k", []byte(row), rules)
			if err != nil {
				t.Fatalf("decode %s: %v", row, err)
			}
			m, err := sessionsjson.DecodeEntry("k", []byte(mirror), rules)
			if err != nil {
				t.Fatalf("decode %s: %v", mirror, err)
			}
			want := SameJSON(p.Raw(), m.Raw())
			if got := sameEntry("k", []byte(row), m, rules); got != want {
				t.Errorf("sameEntry(%q, %q) = %v, sameJSON says %v", row, mirror, got, want)
			}
		}
	}
}

func TestEqualOutsideSpace(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a": 1}`, "{\n  \"a\":1\n}", true},
		{` {"a": 1} `, `{"a":1}`, true},
		{`{"a b": 1}`, `{"ab": 1}`, false},
		{`{"a\" b": 1}`, `{"a\"b": 1}`, false},
		{`{"a\\": "b c"}`, `{"a\\":"b c"}`, true},
		{`{"a\\": "b c"}`, `{"a\\":"bc"}`, false},
		{`[1, 2]`, `[1,2]`, true},
		{`[1, 2]`, `[1,2,3]`, false},
		{`{}`, ``, false},
	} {
		if got := equalOutsideSpace([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("equalOutsideSpace(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestMirrorUnchanged: a sessions.json replaced since it was read (another writer's atomic
// save: a new inode), or rewritten in place at another size or time, is no longer the file
// read; the file as read, or one never read, is.
func TestMirrorUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.json")
	write := func(content string, at time.Time) {
		t.Helper()
		if err := sessionsjson.WriteFileAtomic(path, []byte(content), ".sessions_*.tmp"); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 7, 16, 9, 30, 0, 0, time.UTC)
	write(`{"a": {}}`, at)
	var m Mirror
	if err := m.Unchanged(path); err != nil {
		t.Errorf("never read: %v", err)
	}
	m.Read, _ = os.Stat(path)
	if err := m.Unchanged(path); err != nil {
		t.Errorf("as read: %v", err)
	}
	write(`{"a": {}}`, at) // the same bytes and time, another inode: another writer's save
	if err := m.Unchanged(path); !errors.Is(err, ErrMirrorChanged) {
		t.Errorf("replaced: %v, want ErrMirrorChanged", err)
	}
}
