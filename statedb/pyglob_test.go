package statedb

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The request-dump names and, per ghost id, the names the runtime's
// `sessions_dir.glob(f"request_dump_{session_id}_*.json")` matches among them
// (hermes_state.py _remove_session_files, 3b750715a–c2a3b9ce5). The expected lists were
// computed with Python 3.11.7's fnmatch.fnmatchcase, the rule pathlib's glob applies to one
// path component on POSIX (the runtime requires Python >= 3.11).
var pyGlobNames = []string{"request_dump_g1_1.json", "request_dump_g[1]_1.json", "request_dump_g*_1.json", "request_dump_gX_1.json", "request_dump_g_1.json", "request_dump_g]_1.json", "request_dump_gb_1.json", "request_dump_g-_1.json", "request_dump_gd_1.json", "request_dump_g[x_1.json", "request_dump_g\\_1.json", "request_dump_g^_1.json", "request_dump_g2_a_b.json", "request_dump_gé_1.json", "request_dump_g12_1.json", "request_dump_G1_1.json", ".request_dump_g1_1.json", "request_dump_g1_1.jsonl"}
var pyGlobCases = []struct {
	id   string
	glob bool
	want []string
}{
	{"g[1]", true, []string{"request_dump_g1_1.json"}},
	{"g*", true, []string{"request_dump_g1_1.json", "request_dump_g[1]_1.json", "request_dump_g*_1.json", "request_dump_gX_1.json", "request_dump_g_1.json", "request_dump_g]_1.json", "request_dump_gb_1.json", "request_dump_g-_1.json", "request_dump_gd_1.json", "request_dump_g[x_1.json", "request_dump_g\\_1.json", "request_dump_g^_1.json", "request_dump_g2_a_b.json", "request_dump_gé_1.json", "request_dump_g12_1.json"}},
	{"g?", true, []string{"request_dump_g1_1.json", "request_dump_g*_1.json", "request_dump_gX_1.json", "request_dump_g]_1.json", "request_dump_gb_1.json", "request_dump_g-_1.json", "request_dump_gd_1.json", "request_dump_g\\_1.json", "request_dump_g^_1.json", "request_dump_g2_a_b.json", "request_dump_gé_1.json"}},
	{"g[!1]", true, []string{"request_dump_g*_1.json", "request_dump_gX_1.json", "request_dump_g]_1.json", "request_dump_gb_1.json", "request_dump_g-_1.json", "request_dump_gd_1.json", "request_dump_g\\_1.json", "request_dump_g^_1.json", "request_dump_g2_a_b.json", "request_dump_gé_1.json"}},
	{"g[]]", true, []string{"request_dump_g]_1.json"}},
	{"g[!]]", true, []string{"request_dump_g1_1.json", "request_dump_g*_1.json", "request_dump_gX_1.json", "request_dump_gb_1.json", "request_dump_g-_1.json", "request_dump_gd_1.json", "request_dump_g\\_1.json", "request_dump_g^_1.json", "request_dump_g2_a_b.json", "request_dump_gé_1.json"}},
	{"g[a-c]", true, []string{"request_dump_gb_1.json"}},
	{"g[z-a]", true, []string{}},
	{"g[a-]", true, []string{"request_dump_g-_1.json"}},
	{"g[-a]", true, []string{"request_dump_g-_1.json"}},
	{"g[a-c-e]", true, []string{"request_dump_gb_1.json", "request_dump_g-_1.json"}},
	{"g[x", false, []string{"request_dump_g[x_1.json"}},
	{"g\\[1]", true, []string{}},
	{"g[^1]", true, []string{"request_dump_g1_1.json", "request_dump_g^_1.json"}},
	{"g[!]", false, []string{}},
	{"g1", false, []string{"request_dump_g1_1.json"}},
}

// TestRuntimeDumpGlob: RuntimeDumpFiles matches what the runtime's glob matches, GlobID says
// when that differs in kind from sessionctl's literal match.
func TestRuntimeDumpGlob(t *testing.T) {
	dir := t.TempDir()
	for _, n := range pyGlobNames {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range pyGlobCases {
		got, err := RuntimeDumpFiles(dir, c.id)
		if err != nil {
			t.Fatal(err)
		}
		gotNames := []string{}
		for _, p := range got {
			gotNames = append(gotNames, filepath.Base(p))
		}
		want := map[string]bool{}
		for _, w := range c.want {
			want[w] = true
		}
		if len(gotNames) != len(want) {
			t.Errorf("%q: %v, want %v", c.id, gotNames, c.want)
		}
		for _, n := range gotNames {
			if !want[n] {
				t.Errorf("%q: %v, want %v", c.id, gotNames, c.want)
				break
			}
		}
		if GlobID(c.id) != c.glob {
			t.Errorf("GlobID(%q) = %v, want %v", c.id, !c.glob, c.glob)
		}
	}
	if !GlobRaises("g**") || GlobRaises("g*") || GlobRaises("g*_") {
		t.Error("GlobRaises: only an id holding ** makes Python 3.11/3.12 pathlib raise")
	}
	if !reflect.DeepEqual(parsePyGlob("**a"), parsePyGlob("*a")) {
		t.Error("consecutive stars are one, as fnmatch.translate compresses them")
	}
}
