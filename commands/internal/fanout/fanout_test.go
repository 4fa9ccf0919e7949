package fanout

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// doc is an indented envelope as the runs print it, with white space inside a string.
const doc = "{\n  \"command\": \"status\",\n  \"message\": \"a \\\"quoted\\\"  text\\n\",\n  \"list\": [\n    1,\n    2\n  ]\n}\n"

// join writes each run's output through a Stream of form, in writes of chunk bytes.
func join(t *testing.T, form Form, chunk int, runs ...string) string {
	t.Helper()
	var buf bytes.Buffer
	s := New(&buf, form)
	for i, r := range runs {
		w := s.Next("== " + string(rune('a'+i)) + " ==")
		for len(r) > 0 {
			n := min(chunk, len(r))
			if _, err := io.WriteString(w, r[:n]); err != nil {
				t.Fatal(err)
			}
			r = r[n:]
		}
	}
	if err := s.End(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestArray: the envelopes make one valid JSON array, whatever the writes' sizes; a run that
// writes nothing adds no element, and no run at all is an empty array.
func TestArray(t *testing.T) {
	for _, chunk := range []int{1, 3, 1000} {
		out := join(t, Array, chunk, doc, "", doc)
		var got []map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 2 {
			t.Fatalf("chunk %d: %v, %d elements:\n%s", chunk, err, len(got), out)
		}
	}
	if out := join(t, Array, 10); out != "[]\n" {
		t.Errorf("no runs: %q", out)
	}
}

// TestLines: each envelope is compacted onto its own line, strings untouched.
func TestLines(t *testing.T) {
	var want bytes.Buffer
	if err := json.Compact(&want, []byte(doc)); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 2, 1000} {
		out := join(t, Lines, chunk, doc, doc)
		if exp := want.String() + "\n" + want.String() + "\n"; out != exp {
			t.Errorf("chunk %d:\n%s\nwant\n%s", chunk, out, exp)
		}
	}
}

// TestSections: each run's output under its title, blank lines between; a run that writes
// nothing shows no title.
func TestSections(t *testing.T) {
	out := join(t, Sections, 4, "one\n", "", "three\n")
	if want := "== a ==\none\n\n== c ==\nthree\n"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
