package commands

import (
	"slices"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/cmdtree"
)

// TestFlagNamesOneKind: no flag name takes a value in one command and is a switch in
// another. fish's script skips a flag's value by the flag's name alone, whichever command the
// line is at (one list for the whole table).
func TestFlagNamesOneKind(t *testing.T) {
	root := tree(docsApp())
	kinds := map[string]bool{}
	check := func(where string, flags []cmdtree.Flag) {
		for _, f := range flags {
			for _, n := range f.Names {
				if v, seen := kinds[n]; seen && v != f.Value {
					t.Errorf("%s: --%s takes a value here and not elsewhere (or the other way)", where, n)
				}
				kinds[n] = f.Value
			}
		}
	}
	check("global", root.Flags)
	root.Walk(func(path string, c *cmdtree.Command) { check(path, c.Flags) })
}

// TestFlagChoices: the flags whose values complete from a closed set are those their help
// lists one for, and no other (cmdtree.Flag.Choices reads the help).
func TestFlagChoices(t *testing.T) {
	root := tree(docsApp())
	got := map[string][]string{}
	root.Walk(func(path string, c *cmdtree.Command) {
		for _, f := range c.Flags {
			if ch := f.Choices(); ch != nil {
				got[path+" --"+f.Names[0]] = ch
			}
		}
	})
	levels := []string{"error", "warn", "never"}
	formats := []string{"table", "json", "ndjson", "csv", "tsv"}
	want := map[string][]string{
		"check --fail-on": levels, "maintain --fail-on": levels, "upgrade-check --fail-on": levels,
		"entries list --format": formats, "sessions list --format": formats,
		"sessions list --sort": {"started", "ended", "messages", "id"},
		"resume mark --reason": {"restart_timeout", "shutdown_timeout", "restart_interrupted"},
	}
	for k, v := range got {
		if !slices.Equal(v, want[k]) {
			t.Errorf("%s completes %q, want %q", k, v, want[k])
		}
	}
	for k := range want {
		if got[k] == nil {
			t.Errorf("%s completes nothing, want %q", k, want[k])
		}
	}
}
