package commands

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/suggest"
)

// TestVersion: --version prints the build's version and exits 0, and every envelope, a
// usage error's included, carries it.
func TestVersion(t *testing.T) {
	v := version()
	if v == "" {
		t.Fatal("version() is empty")
	}
	for _, flag := range []string{"--version", "-v"} {
		code, stdout, stderr := runCLI(t, flag)
		if code != ExitOK || stdout != "sessionctl version "+v+"\n" || stderr != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 0 and %q", flag, code, stdout, stderr, "sessionctl version "+v)
		}
	}
	home := fixtureHome(t, genDB)
	for _, args := range [][]string{
		{"status"},
		{"resume", "mark", keyBoth, "--reason"},
		{"frob"},
	} {
		_, stdout, _ := runCLI(t, append([]string{"--home", home, "--now", fixtureNow, "--json"}, args...)...)
		var env struct {
			Version *string `json:"version"`
		}
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Errorf("%v: %v\n%s", args, err, stdout)
			continue
		}
		if env.Version == nil || *env.Version != v {
			t.Errorf("%v: envelope version %v, want %q", args, env.Version, v)
		}
	}
}

// TestNearest: suggestions are near misses only.
func TestNearest(t *testing.T) {
	names := []string{"status", "check", "entries", "sessions", "resume", "suspend", "unsuspend", "maintain", "undo"}
	tests := map[string]string{
		"statsu": "status", "chek": "check", "sesions": "sessions", "resum": "resume",
		"maint": "maintain", "undoo": "undo", "frob": "", "x": "", "": "", "delete": "",
	}
	for word, want := range tests {
		if got := suggest.Nearest(word, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", word, got, want)
		}
	}
	if d := suggest.EditDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
	if !strings.Contains(didYouMean("statsu", names), `did you mean "status"?`) {
		t.Errorf("didYouMean: %q", didYouMean("statsu", names))
	}
}

// TestAgeFlagNeedsUnit: a bare number given to a duration flag is a usage error whose message
// names the flag and spells out the units.
func TestAgeFlagNeedsUnit(t *testing.T) {
	gens := requireGenerations(t)
	home := fixtureHome(t, gens[len(gens)-1])
	for _, args := range [][]string{
		{"prune-ghosts", "--min-age", "7"},
		{"finalize-orphans", "--min-age", "7"},
		{"resume", "clear", "--stale", "--max-age", "7"},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
		flag := args[len(args)-2]
		want := flag + " 7: a duration needs a unit: 7d, 7h, 7m, 7s or 7w"
		if code != ExitUsage || !strings.Contains(stderr, want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d and %q", args, code, stderr, stdout, ExitUsage, want)
		}
	}
	for _, age := range []string{"36h", "1.5d", "2w", "90m", "600s"} {
		if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "prune-ghosts", "--min-age", age); code != ExitOK {
			t.Errorf("prune-ghosts --min-age %s: exit %d: %s", age, code, stderr)
		}
	}
}
