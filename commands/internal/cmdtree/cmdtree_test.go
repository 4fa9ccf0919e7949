package cmdtree

import (
	"slices"
	"strings"
	"testing"
)

// TestChoices: a closed set is read from a value flag's help only when every value listed
// after the value's name is one plain word.
func TestChoices(t *testing.T) {
	for usage, want := range map[string][]string{
		"`LEVEL` that fails the run: error, warn or never":                                   {"error", "warn", "never"},
		"`LEVEL` that fails the run: error (data lost, the default), warn or never":          {"error", "warn", "never"},
		"output `F`: table, json (the envelope, as --json), ndjson (one a line), csv or tsv": {"table", "json", "ndjson", "csv", "tsv"},
		"order by `KEY`: started, ended, messages or id (newest, most first)":                {"started", "ended", "messages", "id"},
		"`GEN`: a generation (r0715, r0817) or a schema version (v21, v26)":                  nil,
		"age `D` for --stale, with a unit: s, m, h, d or w (90m, 1h, 2d)":                    nil,
		"the Hermes home `DIR`": nil,
		"leave the findings of check `ID` out: not printed, not counted (repeatable)": nil,
	} {
		if got := (Flag{Usage: usage, Value: true}).Choices(); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", usage, got, want)
		}
	}
	if got := (Flag{Usage: "`X`: a or b"}).Choices(); got != nil {
		t.Errorf("a switch has choices %q", got)
	}
}

// TestRoffText: text is escaped for roff and broken into lines of at most 80 bytes, none
// read as a request.
func TestRoffText(t *testing.T) {
	if got, want := escape(`a\b --x (dm, group, …) née`), `a\eb \-\-x (dm, group, ...) n\[u00E9]e`; got != want {
		t.Errorf("escape: %q, want %q", got, want)
	}
	long := strings.Repeat("word ", 30) + ".dot 'quote"
	for _, text := range []string{fill(long), noFill(long)} {
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if len(l) > lineWidth || strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
				t.Errorf("line %q: over %d bytes or read as a request", l, lineWidth)
			}
		}
	}
	if got := strings.NewReplacer("\\c\n", "", `\&`, "").Replace(noFill(long)); got != long+"\n" {
		t.Errorf("noFill joined is %q, want the line itself", got)
	}
	if got := fill(".x"); got != "\\&.x\n" {
		t.Errorf("fill(.x) = %q", got)
	}
}
