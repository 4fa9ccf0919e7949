package startup

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestReadResetPolicy: the default policy per generation (mode both until 9c272a306, none
// from r0715), config.yaml's session_reset over it as SessionResetPolicy.from_dict and
// _validate_gateway_config take it (52d0d671e), and the sources left unknown.
func TestReadResetPolicy(t *testing.T) {
	r0703, r0715 := sessionsjson.RulesFor(sessionsjson.GenR0703), sessionsjson.RulesFor(sessionsjson.GenR0715)
	const day = 1440 * 60e6
	tests := []struct {
		name  string
		rules sessionsjson.Rules
		files map[string]string
		want  ResetPolicy
		known bool
	}{
		{"r0703 defaults", r0703, nil, ResetPolicy{"both", 4, day}, true},
		{"r0715 defaults", r0715, nil, ResetPolicy{"none", 4, day}, true},
		{"mode and times", r0703, map[string]string{"config.yaml": "session_reset:\n  mode: daily\n  at_hour: 6\n  idle_minutes: 30\n"}, ResetPolicy{"daily", 6, 30 * 60e6}, true},
		{"nulls take the defaults", r0715, map[string]string{"config.yaml": "session_reset:\n  mode: ~\n  at_hour: null\n"}, ResetPolicy{"none", 4, day}, true},
		{"empty mapping ignored", r0703, map[string]string{"config.yaml": "session_reset: {}\n"}, ResetPolicy{"both", 4, day}, true},
		{"hour out of range: 4", r0703, map[string]string{"config.yaml": "session_reset:\n  at_hour: 25\n"}, ResetPolicy{"both", 4, day}, true},
		{"idle not positive: 1440", r0703, map[string]string{"config.yaml": "session_reset:\n  idle_minutes: 0\n"}, ResetPolicy{"both", 4, day}, true},
		{"hour a string", r0703, map[string]string{"config.yaml": "session_reset:\n  at_hour: four\n"}, ResetPolicy{"both", 4, day}, false},
		{"mode not a string", r0703, map[string]string{"config.yaml": "session_reset:\n  mode: 3\n"}, ResetPolicy{"", 4, day}, false},
		{"gateway.json policies", r0703, map[string]string{"gateway.json": `{"reset_by_platform": {}}`}, ResetPolicy{"both", 4, day}, false},
		{"gateway.json without", r0703, map[string]string{"gateway.json": `{"quick_commands": {}}`}, ResetPolicy{"both", 4, day}, true},
		{".env override", r0703, map[string]string{".env": "OTHER=1\nexport SESSION_RESET_HOUR=2\n"}, ResetPolicy{"both", 4, day}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, known := ReadResetPolicy(sessionsjson.Home{Dir: dir}, tt.rules)
			if known != tt.known || known && got != tt.want {
				t.Errorf("got %+v known %v, want %+v known %v", got, known, tt.want, tt.known)
			}
		})
	}
}

// TestResetReason: _should_reset's idle check (strictly after updated + idle) and daily
// check (updated before the latest at_hour boundary, yesterday's before that hour), and the
// first moment either yields a reset.
func TestResetReason(t *testing.T) {
	at := func(s string) int64 {
		ts, err := sessionsjson.ParseISO(s)
		if err != nil {
			t.Fatal(err)
		}
		return ts.WallMicros()
	}
	both := ResetPolicy{"both", 4, 1440 * 60e6}
	idle := ResetPolicy{"idle", 4, 60 * 60e6}
	daily := ResetPolicy{"daily", 4, 1440 * 60e6}
	tests := []struct {
		name            string
		p               ResetPolicy
		updated, now    string
		want, firstFrom string
	}{
		{"daily boundary passed", both, "2026-07-15T20:00:00", "2026-07-16T09:30:00", ResetDaily, "2026-07-16T04:00:00"},
		{"before today's hour: yesterday's", daily, "2026-07-16T01:00:00", "2026-07-16T03:59:59", "", "2026-07-16T04:00:00"},
		{"exactly at the boundary: not before it", daily, "2026-07-16T04:00:00", "2026-07-16T09:00:00", "", "2026-07-17T04:00:00"},
		{"idle exactly at the deadline: not yet", idle, "2026-07-16T08:00:00", "2026-07-16T09:00:00", "", "2026-07-16T09:00:00.000001"},
		{"idle past the deadline", idle, "2026-07-16T08:00:00", "2026-07-16T09:00:00.000001", ResetIdle, "2026-07-16T09:00:00.000001"},
		{"idle checked first", both, "2026-07-14T20:00:00", "2026-07-16T09:00:00", ResetIdle, "2026-07-15T04:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Reason(at(tt.updated), at(tt.now)); got != tt.want {
				t.Errorf("Reason = %q, want %q", got, tt.want)
			}
			if got := sessionsjson.FormatNaive(tt.p.Starts(at(tt.updated))); got != tt.firstFrom {
				t.Errorf("Starts = %s, want %s", got, tt.firstFrom)
			}
		})
	}
	if got := (ResetPolicy{Mode: "none"}).Starts(1); got != 0 {
		t.Errorf("mode none starts at %d", got)
	}
}
