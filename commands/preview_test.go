package commands

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestPreviewStartPerGeneration: status' next-start preview of a crash start (no
// .clean_shutdown) on each generation's fixture home, as that generation's start runs
// (GatewayRunner.start; docs/decisions.md "The next-start preview follows the start's order"):
//   - r0418 (cb4addaca): crash recovery suspends what was active within 120 s (2d328d5c7); no
//     auto-resume yet;
//   - r0506 (3b750715a): it marks resume_pending instead (f1e029251, 05-03); still no
//     auto-resume (fad684b1f, 05-07);
//   - r0525 (3914089d5): resume scheduling runs after crash recovery, so what it marked is
//     auto-resumed by the same start;
//   - r0703, r0715 (52d0d671e, c2a3b9ce5): the store's load-time prune (00d8c2c91) runs first,
//     so an entry it repoints (updated_at = now) is marked and auto-resumed too.
func TestPreviewStartPerGeneration(t *testing.T) {
	const active, repointed = "agent:main:slack:dm:D057332747", "agent:main:slack:dm:D026897520"
	tests := []struct {
		gen           string
		active        []string // the actions on the entry active within 120 s, in order
		repointed     []string // the actions on the entry whose row ended by compression
		anyAutoResume bool
	}{
		{"r0418-cb4addaca", []string{"suspend"}, nil, false},
		{"r0506-3b750715a", []string{"mark resume_pending (restart_interrupted)"}, nil, false},
		{"r0525-3914089d5", []string{"mark resume_pending (restart_interrupted)", "auto-resume"}, nil, true},
		{"r0703-52d0d671e", []string{"mark resume_pending (restart_interrupted)", "auto-resume"},
			[]string{"repoint to 20260713_122336_478460", "mark resume_pending (restart_interrupted)", "auto-resume"}, true},
		{"r0715-c2a3b9ce5", []string{"mark resume_pending (restart_interrupted)", "auto-resume"},
			[]string{"repoint to 20260713_122336_478460", "mark resume_pending (restart_interrupted)", "auto-resume"}, true},
		// r0817 recovers the latest row of the key (the ws_orphan_reap sibling, which carries the
		// parent's key in an r0817-written home) and dates the entry by its last activity, so
		// crash recovery does not mark it (runtime-v26.md §2.3, observed on this fixture).
		{"r0817-481156139", []string{"mark resume_pending (restart_interrupted)", "auto-resume"},
			[]string{"repoint to 20260713_182336_7f2d5f"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.gen, func(t *testing.T) {
			actions := nextStart(t, fixtureHome(t, tt.gen))
			autoResume := false
			for _, acts := range actions {
				autoResume = autoResume || slices.Contains(acts, "auto-resume")
			}
			if !slices.Equal(actions[active], tt.active) {
				t.Errorf("%s: %q, want %q", active, actions[active], tt.active)
			}
			if !slices.Equal(actions[repointed], tt.repointed) {
				t.Errorf("%s: %q, want %q", repointed, actions[repointed], tt.repointed)
			}
			if autoResume != tt.anyAutoResume {
				t.Errorf("auto-resume anywhere: %v, want %v", autoResume, tt.anyAutoResume)
			}
		})
	}
}

// TestPreviewDroppedEntryLeftAlone: before r0817, an entry whose row ended for a reason the
// load-time prune cannot recover (user_exit) is deleted by that prune, the store's first act
// at a crash start; the later passes never see it: crash recovery does not mark the entry
// active within 120 s, the stuck-loop check does not suspend the key counted 3 times, and
// resume scheduling does not auto-resume the fresh resume_pending entry. Each is only dropped.
func TestPreviewDroppedEntryLeftAlone(t *testing.T) {
	entries := map[string]string{ // key -> its session, whose row the test ends user_exit
		"agent:main:slack:dm:D057332747":           "20260715_003415_7f6dd189", // updated within 120 s
		"agent:main:telegram:dm:846968166":         "20260714_021501_055cddbf", // restart count 3
		"agent:main:discord:dm:446016092511257183": "20260713_085900_3496e059", // resume_pending, fresh
	}
	for _, gen := range []string{"r0703-52d0d671e", "r0715-c2a3b9ce5"} {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			before := nextStart(t, home)
			for key, id := range entries {
				if acts := before[key]; len(acts) == 0 || slices.Contains(acts, "drop") {
					t.Fatalf("%s before its row ended: %q, want a crash, stuck-loop or auto-resume action", key, acts)
				}
				execSQL(t, filepath.Join(home, "state.db"),
					"UPDATE sessions SET ended_at = 1784194000, end_reason = 'user_exit' WHERE id = '"+id+"'")
			}
			after := nextStart(t, home)
			for key := range entries {
				if !slices.Equal(after[key], []string{"drop"}) {
					t.Errorf("%s: %q, want only [drop]", key, after[key])
				}
			}
		})
	}
}
