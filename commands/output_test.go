package commands

import (
	"strings"
	"testing"
)

// TestTablesWithoutTrailingSpaces: no line of the human output ends in a space, tables
// included (tablewriter pads every column to its width).
func TestTablesWithoutTrailingSpaces(t *testing.T) {
	home := fixtureHome(t, genDB)
	for _, args := range [][]string{
		{"status"},
		{"check"},
		{"entries", "list"},
		{"entries", "show", keyBoth},
		{"sessions", "list", "--limit", "0"},
		{"suspend", keyBoth},
		{"prune-ghosts", "--min-age", "1s"},
	} {
		_, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
		if !strings.Contains(stdout, "\n") {
			t.Errorf("%v: no output (stderr %q)", args, stderr)
		}
		for i, line := range strings.Split(stdout, "\n") {
			if strings.HasSuffix(line, " ") {
				t.Errorf("%v: line %d ends in a space: %q", args, i+1, line)
			}
		}
	}
}
