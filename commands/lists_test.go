package commands

import (
	"encoding/json"
	"testing"
)

// TestListsCarryTotal: sessions list and entries list --json are valid JSON whose
// data.total counts what the filter selects, whatever --limit cut.
func TestListsCarryTotal(t *testing.T) {
	home := fixtureHome(t, genDB)
	tests := []struct {
		args         []string
		field        string
		shown, total int
	}{
		{[]string{"sessions", "list"}, "sessions", 50, 55},
		{[]string{"sessions", "list", "--limit", "0"}, "sessions", 55, 55},
		{[]string{"sessions", "list", "--limit", "7"}, "sessions", 7, 55},
		{[]string{"sessions", "list", "--ghosts", "--limit", "1"}, "sessions", 1, 2},
		{[]string{"sessions", "list", "--source", "nosuch"}, "sessions", 0, 0},
		{[]string{"entries", "list", "--limit", "2"}, "entries", 2, 18},
		{[]string{"entries", "list"}, "entries", 18, 18},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow, "--json"}, tt.args...)...)
		if code != ExitOK || stderr != "" {
			t.Errorf("%v: exit %d, stderr %q", tt.args, code, stderr)
			continue
		}
		var env struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Errorf("%v: %v\n%s", tt.args, err, stdout)
			continue
		}
		var items []json.RawMessage
		var total int
		if err := json.Unmarshal(env.Data[tt.field], &items); err != nil {
			t.Errorf("%v: data.%s: %v", tt.args, tt.field, err)
		}
		if err := json.Unmarshal(env.Data["total"], &total); err != nil {
			t.Errorf("%v: data.total: %v", tt.args, err)
		}
		if len(items) != tt.shown || total != tt.total {
			t.Errorf("%v: %d shown, total %d; want %d of %d", tt.args, len(items), total, tt.shown, tt.total)
		}
	}
}
