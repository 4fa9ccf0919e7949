package commands

import (
	"strings"
	"testing"
)

// The hygiene fixtures have no case for r0817's prune_never_active_keyed_sessions: these tests
// build on the r0817 home, whose 20260611_065035_d866ce2c is an open discord row with no
// message, title, activity or tokens, started 35.11 days before now, that the gateway_routing
// row of neverActiveKey names.
const (
	neverActiveGen = "r0817-481156139"
	neverActiveID  = "20260611_065035_d866ce2c"
	neverActiveKey = "agent:main:discord:group:530923628534746815:703229436493144576"
)

// TestPruneNeverActive: the row and the routing row naming it go in one journal (the
// sessions.json mirror is left, as the runtime leaves it), everything else stays; undo gives
// the home of before back.
func TestPruneNeverActive(t *testing.T) {
	home := fixtureHome(t, neverActiveGen)
	original := plainFiles(t, home)
	args := []string{"--home", home, "--now", fixtureNow, "prune", "--never-active", "10d"}
	code, stdout, stderr := runCLI(t, args...)
	if code != ExitOK || !strings.Contains(stdout, "plan only: 2 changes") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr = runCLI(t, append(args, "--apply")...); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := loadHygieneExpected(t, neverActiveGen, "before", false)
	delete(want["sessions"].(map[string]any), neverActiveID)
	delete(want["message_counts"].(map[string]any), neverActiveID)
	delete(want["routing"].(map[string]any), neverActiveKey)
	compareDump(t, dumpHygiene(t, home, false), want)
	paths := journals(t, home)
	if len(paths) != 1 {
		t.Fatalf("journals %v, want one", paths)
	}
	if code, stdout, stderr = runCLI(t, "--home", home, "--now", fixtureNow, "undo", paths[0], "--apply"); code != ExitOK {
		t.Fatalf("undo: exit %d\n%s\n%s", code, stdout, stderr)
	}
	compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, neverActiveGen, "before", false))
	comparePlainFiles(t, plainFiles(t, home), original)
}

// TestPruneNeverActiveRules: the age is compared strictly with started_at (35.11 days: kept at
// 36d, its default 30d takes it), and a generation without the function refuses (exit 4).
func TestPruneNeverActiveRules(t *testing.T) {
	home := fixtureHome(t, neverActiveGen)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prune", "--never-active", "36d"}, "nothing to change"},
		{[]string{"prune", "--never-active"}, "sessions/" + neverActiveID + " "},
		{[]string{"prune", "--never-active", "--older-than", "35d"}, "gateway_routing "},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, tc.args...)...)
		if code != ExitOK || !strings.Contains(stdout, tc.want) {
			t.Errorf("%v: exit %d, want %q in\n%s\n%s", tc.args, code, tc.want, stdout, stderr)
		}
	}
	older := fixtureHome(t, "r0715-c2a3b9ce5")
	code, _, stderr := runCLI(t, "--home", older, "--now", fixtureNow, "prune", "--never-active", "--apply")
	if code != ExitData || !strings.Contains(stderr, "prune_never_active_keyed_sessions") {
		t.Fatalf("r0715: exit %d, want %d: %s", code, ExitData, stderr)
	}
	compareDump(t, dumpHygiene(t, older, false), loadHygieneExpected(t, "r0715-c2a3b9ce5", "before", false))
}
