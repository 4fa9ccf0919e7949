package commands

// Issue 29 items 4, 5 and 6 on copies of the r0817 fixture home: which continuation a turn
// lease keeps open, as r0817's _session_turn_lease_key_on_conn walks (hermes_state.py at
// 481156139), with the values real homes carry.

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/check"
)

// Sessions of the r0817 fixture the lease tests use.
const (
	leaseOrphan = "20260621_182357_4cea33" // an orphaned continuation: its parent ended by compression
	leaseRootID = "20260616_194830_db33bd" // leaseOrphan's parent, its lineage root
)

// TestLeaseKeyR0817: finalize-orphans --apply on the fixture with one edit and a live turn
// lease ends exactly the orphans the runtime ends — every one of the fixture's case but those
// whose lease key (the walk's end) holds the lease — and reports the leased one skipped:
//   - a lease expiring 'never' (TEXT: later than any time in SQLite's order) is live and keeps
//     its continuation open; the read does not end (item 4);
//   - two sessions each other's compression parent: the continuation's key is the cycle's
//     member reached last (the walk stops at the repeat), so a lease there keeps it open and
//     one on the other member does not (item 5);
//   - a model_config naming the parent in _branched_from beside a NaN loads as json.loads
//     loads it: the continuation is a fork child, its own key, and the lease on the root does
//     not keep it open (item 6).
func TestLeaseKeyR0817(t *testing.T) {
	lease := func(conv, expires string) string {
		return fmt.Sprintf("INSERT INTO session_turn_leases VALUES ('%s', 'pid=7:host=a', %f, %s)", conv, fixtureNowUnix-10, expires)
	}
	live := fmt.Sprintf("%f", fixtureNowUnix+60)
	cycle := []string{
		`INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
			VALUES ('cycle_mate', 'cli', 1781000000, 1781000100, 'compression', '` + leaseRootID + `')`,
		"UPDATE sessions SET parent_session_id = 'cycle_mate' WHERE id = '" + leaseRootID + "'",
	}
	for _, c := range []struct {
		name   string
		plant  []string
		leased bool // leaseOrphan stays open
	}{
		{"expires never", []string{lease(leaseRootID, "'never'")}, true},
		{"expires never, expired row beside", []string{lease(leaseRootID, "'never'"), lease("cycle_mate", "1")}, true},
		{"cycle: lease on the last member", append(cycle, lease("cycle_mate", live)), true},
		{"cycle: lease on the first member", append(cycle, lease(leaseRootID, live)), false},
		{"branched with NaN", []string{lease(leaseRootID, live),
			`UPDATE sessions SET model_config = '{"_branched_from": "` + leaseRootID + `", "temperature": NaN}' WHERE id = '` + leaseOrphan + `'`}, false},
		{"delegated with -Infinity", []string{lease(leaseRootID, live),
			`UPDATE sessions SET model_config = '{"x": [-Infinity], "_delegate_from": "` + leaseRootID + `"}' WHERE id = '` + leaseOrphan + `'`}, false},
		{"NaN, no marker", []string{lease(leaseRootID, live),
			`UPDATE sessions SET model_config = '{"temperature": NaN}' WHERE id = '` + leaseOrphan + `'`}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := fixtureHome(t, genR0817)
			execSQL(t, filepath.Join(home, "state.db"), c.plant...)
			planted := dumpHome(t, home)
			base := []string{"--home", home, "--now", fixtureNow, "--json"}
			for _, args := range [][]string{{"status"}, {"sessions", "list", "--orphans"}, {"maintain"}} {
				if code, _, stderr := runCLI(t, append(base, args...)...); code != ExitOK && code != ExitFindings {
					t.Errorf("%v: exit %d: %s", args, code, stderr)
				}
			}
			code, stdout, stderr := runCLI(t, append(base, "finalize-orphans", "--apply")...)
			if code != ExitOK {
				t.Fatalf("finalize-orphans --apply: exit %d: %s", code, stderr)
			}
			f := findingsOf(decodeEnvelope(t, stdout), check.OrphanLeased)
			if got := len(f) == 1 && f[0].Subject == leaseOrphan; got != c.leased {
				t.Errorf("%s reported leased: %v, want %v (%+v)", leaseOrphan, got, c.leased, f)
			}
			var keep []string
			if c.leased {
				keep = []string{leaseOrphan}
			}
			compareDump(t, dumpHome(t, home), runtimeOutcome(t, genR0817, "finalize-orphans", planted, keep, nil))
		})
	}
}
