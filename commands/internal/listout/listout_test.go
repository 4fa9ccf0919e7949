package listout

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"slices"
	"strings"
	"testing"
)

type row struct {
	Name  string            `json:"name"`
	Note  *string           `json:"note"`
	Count int64             `json:"count"`
	On    bool              `json:"on"`
	Ratio *float64          `json:"ratio,omitempty"`
	Extra map[string]string `json:"extra,omitempty"`
	Skip  string            `json:"-"`
}

// TestRecords: the header row is the JSON field names; cells are RFC 4180-quoted and read
// back as written; null is empty, a number or an object as JSON writes it.
func TestRecords(t *testing.T) {
	note, ratio := "a \"quoted\", multi\nline note", 0.25
	rows := []row{{Name: "x,y", Note: &note, Count: 3, On: true, Ratio: &ratio, Extra: map[string]string{"k": "v"}}, {Name: "plain\ttab"}}
	want := [][]string{{"name", "note", "count", "on", "ratio", "extra"},
		{"x,y", note, "3", "true", "0.25", `{"k":"v"}`}, {"plain\ttab", "", "0", "false", "", ""}}
	for _, format := range []Format{CSV, TSV} {
		var buf bytes.Buffer
		w, err := NewRecords[row](&buf, format)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		r := csv.NewReader(&buf)
		if format == TSV {
			r.Comma = '\t'
		}
		got, err := r.ReadAll()
		if err != nil || !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: %q, %v; want %q", format, got, err, want)
		}
	}
}

// TestPipe: items arrive in order; an error of consume stops produce and is returned; an
// error of produce is returned after what it emitted was consumed.
func TestPipe(t *testing.T) {
	ctx := context.Background()
	count := func(n int, fail error) func(context.Context, func(int) error) error {
		return func(_ context.Context, emit func(int) error) error {
			for i := range n {
				if err := emit(i); err != nil {
					return err
				}
			}
			return fail
		}
	}
	var got []int
	if err := Pipe(ctx, count(5000, nil), func(i int) error { got = append(got, i); return nil }); err != nil || len(got) != 5000 || !slices.IsSorted(got) {
		t.Errorf("5000 items: %d, sorted %v, %v", len(got), slices.IsSorted(got), err)
	}
	stop := errors.New("stop")
	n := 0
	if err := Pipe(ctx, count(1e6, nil), func(int) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || n != 10 {
		t.Errorf("consume error: %v after %d", err, n)
	}
	bad := errors.New("bad row")
	n = 0
	if err := Pipe(ctx, count(3, bad), func(int) error { n++; return nil }); !errors.Is(err, bad) || n != 3 {
		t.Errorf("produce error: %v after %d", err, n)
	}
}

// TestRequested: the envelope a command line asks for, as the error path reads it.
func TestRequested(t *testing.T) {
	tests := map[string]Format{
		"--json sessions list":                   JSON,
		"sessions list --format json":            JSON,
		"sessions list --format=ndjson":          NDJSON,
		"sessions list --format csv":             "",
		"--json sessions list --format ndjson":   JSON,
		"sessions list -- --format ndjson":       "",
		"sessions list --format":                 "",
		"entries list --json=false":              "",
		"entries list --limit 3 --format ndjson": NDJSON,
	}
	for args, want := range tests {
		if got := Requested(strings.Fields(args)); got != want {
			t.Errorf("%s: %q, want %q", args, got, want)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "table, json, ndjson, csv, tsv") {
		t.Errorf("ParseFormat(xml): %v", err)
	}
}

// TestPrintable: control characters are written as their escapes, line breaks only where
// lines are not kept; other text, wide characters included, is left as it is.
func TestPrintable(t *testing.T) {
	for _, tt := range []struct {
		in    string
		lines bool
		want  string
	}{
		{"agent:main:slack:dm:D043095675", false, "agent:main:slack:dm:D043095675"},
		{"会话 title", false, "会话 title"},
		{"key\n\x00\x1b[31m", false, `key\n\x00\x1b[31m`},
		{"a\r\tb\x7f\u0085", false, `a\r\tb\x7f\u0085`},
		{"{\n  \"a\": 1\n}\x1b", true, "{\n  \"a\": 1\n}\\x1b"},
	} {
		if got := Printable(tt.in, tt.lines); got != tt.want {
			t.Errorf("Printable(%q, %v) = %q, want %q", tt.in, tt.lines, got, tt.want)
		}
	}
}
