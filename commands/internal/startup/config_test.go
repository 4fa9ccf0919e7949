package startup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestSessionsSettings reads config.yaml's sessions: section as the runtime's callers do
// (PyYAML's YAML 1.1 scalars, int() and bool() of the values) under r0715's rules.
func TestSessionsSettings(t *testing.T) {
	m := sessionsjson.RulesFor(sessionsjson.GenR0715).Maintenance
	cases := []struct {
		name, yaml   string
		enabled      bool
		days, hours  int64
		vacuum       bool
		raises, note bool
	}{
		{"no file", "", false, 90, 24, true, false, false},
		{"yes", "sessions:\n  auto_prune: yes\n", true, 90, 24, true, false, false},
		{"no", "sessions:\n  auto_prune: no\n", false, 90, 24, true, false, false},
		{"quoted no is a string", "sessions:\n  auto_prune: 'no'\n", true, 90, 24, true, false, false},
		{"on, hex days", "sessions:\n  auto_prune: on\n  retention_days: 0x1e\n", true, 30, 24, true, false, false},
		{"float days", "sessions:\n  auto_prune: true\n  retention_days: 30.9\n", true, 30, 24, true, false, false},
		{"string days", "sessions:\n  auto_prune: true\n  retention_days: ' 3_0 '\n", true, 30, 24, true, false, false},
		{"sexagesimal", "sessions:\n  auto_prune: true\n  min_interval_hours: 1:30\n", true, 90, 90, true, false, false},
		{"1e3 is a string", "sessions:\n  auto_prune: true\n  retention_days: 1e3\n", true, 90, 24, true, true, false},
		{"bad days", "sessions:\n  auto_prune: true\n  retention_days: abc\n", true, 90, 24, true, true, false},
		{"bad days, disabled", "sessions:\n  auto_prune: false\n  retention_days: abc\n", false, 90, 24, true, false, false},
		{"null days", "sessions:\n  auto_prune: true\n  retention_days:\n", true, 90, 24, true, true, false},
		{"vacuum string", "sessions:\n  auto_prune: true\n  vacuum_after_prune: 'false'\n", true, 90, 24, true, false, false},
		{"vacuum off", "sessions:\n  auto_prune: true\n  vacuum_after_prune: off\n", true, 90, 24, false, false, false},
		{"sessions true", "sessions: true\n", false, 90, 24, false, true, false},
		{"sessions empty list", "sessions: []\n", false, 90, 24, true, false, false},
		{"sessions null", "sessions:\nmodel: x\n", false, 90, 24, true, false, false},
		{"top-level list", "- sessions\n", false, 90, 24, true, false, false},
		{"alias", "base: &b {auto_prune: true, retention_days: 7}\nsessions: *b\n", true, 7, 24, true, false, false},
		{"duplicate key", "sessions:\n  auto_prune: true\nsessions:\n  auto_prune: false\n", false, 90, 24, true, false, false},
		{"two documents", "sessions: {auto_prune: true}\n---\nx: 1\n", false, 90, 24, true, false, true},
		{"broken", "sessions: [unclosed\n", false, 90, 24, true, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.yaml != "" {
				if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(c.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			sec := readSessionsSection(sessionsjson.Home{Root: dir, Dir: dir})
			got := sec.settings(m)
			if got.enabled != c.enabled || got.retentionDays != c.days || got.minIntervalHours != c.hours ||
				got.vacuum != c.vacuum || (got.raises != "") != c.raises || (sec.note != "") != c.note {
				t.Errorf("got %+v (note %q)", got, sec.note)
			}
		})
	}
}
