package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// statusMaintenance is data.start_maintenance of `status --json`.
type statusMaintenance struct {
	GhostPrune struct {
		Latched     bool
		WouldChange int `json:"would_change"`
	} `json:"ghost_prune"`
	OrphanFinalize struct {
		Latched     bool
		WouldChange int `json:"would_change"`
	} `json:"orphan_finalize"`
	AutoPrune struct {
		Enabled          bool
		RetentionDays    float64 `json:"retention_days"`
		MinIntervalHours float64 `json:"min_interval_hours"`
		Throttled        bool
		WouldDelete      int `json:"would_delete"`
		Vacuum           bool
	} `json:"auto_prune"`
	EntriesPrune struct {
		MaxAgeDays float64 `json:"max_age_days"`
		WouldDrop  int     `json:"would_drop"`
	} `json:"entries_prune"`
}

// startMaintenance runs `status --json` on home at now and returns data.start_maintenance.
func startMaintenance(t *testing.T, home, now string) *statusMaintenance {
	t.Helper()
	code, stdout, stderr := runCLI(t, "--home", home, "--now", now, "--json", "status")
	if code != ExitOK {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var env struct {
		Data struct {
			StartMaintenance *statusMaintenance `json:"start_maintenance"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatal(err)
	}
	return env.Data.StartMaintenance
}

// TestStatusStartMaintenance: status's auto-prune count under config.yaml's retention_days
// is what the runtime's own prune_sessions deleted at the same age and clock (the hygiene
// fixtures' prune--7d and prune--1d-boundary cases, cases.json "returned": 11 and 22 on
// r0506/r0525, 13 and 24 on r0703+); r0418 has no maybe_auto_prune_and_vacuum. The VACUUM
// follows a prune that deleted something; a last_auto_prune within min_interval_hours
// throttles the gateway's and the CLI's runs.
func TestStatusStartMaintenance(t *testing.T) {
	tests := []struct {
		gen              string
		days7, days1     int
		enabled, repairs bool
	}{
		{"r0418-cb4addaca", 0, 0, false, false},
		{"r0506-3b750715a", 11, 22, true, true},
		{"r0525-3914089d5", 11, 22, true, true},
		{"r0703-52d0d671e", 13, 24, true, true},
		{"r0715-c2a3b9ce5", 13, 24, true, true},
		{"r0817-481156139", 13, 24, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.gen, func(t *testing.T) {
			t.Parallel()
			home := fixtureHome(t, tt.gen)
			m := startMaintenance(t, home, fixtureNow)
			if m == nil || m.AutoPrune.Enabled || m.AutoPrune.WouldDelete != 0 || m.AutoPrune.RetentionDays != 90 ||
				m.EntriesPrune.MaxAgeDays != 90 {
				t.Fatalf("defaults: %+v", m)
			}
			if tt.repairs && m.GhostPrune.Latched {
				t.Errorf("ghost prune latched on the fixture: %+v", m.GhostPrune)
			}
			for days, want := range map[string]int{"7": tt.days7, "1": tt.days1} {
				writeFile(t, filepath.Join(home, "config.yaml"), "sessions:\n  auto_prune: true\n  retention_days: "+days+"\n")
				m := startMaintenance(t, home, fixtureNow)
				a := m.AutoPrune
				if a.Enabled != tt.enabled || a.WouldDelete != want || a.Vacuum != (want > 0) || a.Throttled {
					t.Errorf("retention_days %s: %+v, want %d deleted", days, a, want)
				}
			}
			if !tt.enabled {
				return
			}
			execSQL(t, filepath.Join(home, "state.db"), "INSERT OR REPLACE INTO state_meta (key, value) VALUES ('last_auto_prune', '1784190600')")
			if a := startMaintenance(t, home, fixtureNow).AutoPrune; !a.Throttled || a.WouldDelete != 0 || a.Vacuum {
				t.Errorf("an hour after the last auto-prune: %+v, want throttled", a)
			}
		})
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
