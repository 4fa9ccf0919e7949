package commands

import (
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
