package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/startup"
)

// variant runs Start for target on a copy of pair's home after edit changed it.
func variant(t *testing.T, pair, target string, edit func(dir string)) (Routing, StartMaintenance) {
	t.Helper()
	t.Setenv("TZ", "UTC")
	dir := filepath.Join(pairsDir, pair)
	h := openPairWith(t, dir, edit)
	to, err := ResolveTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	r, m, err := Start(context.Background(), h, to)
	if err != nil {
		t.Fatal(err)
	}
	return r, m
}

// openPairWith is openPair with an edit of the copied home before it is opened.
func openPairWith(t *testing.T, dir string, edit func(dir string)) *home.Home {
	t.Helper()
	if edit == nil {
		return openPair(t, dir)
	}
	h := openPair(t, dir)
	h.Close()
	edit(h.Opts.Home.Dir)
	again, err := home.Open(context.Background(), h.Opts, home.Inspect)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(again.Close)
	return again
}

func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestVacuumThrottle: r0817 skips the VACUUM within 30 days of the last one; the prune runs.
func TestVacuumThrottle(t *testing.T) {
	_, m := variant(t, "r0715-c2a3b9ce5--r0817-481156139", "r0817", func(dir string) {
		execSQL(t, dir, "INSERT INTO state_meta (key, value) VALUES ('last_vacuum', '1784130330.75')")
	})
	if a := m.AutoPrune; a.WouldDelete != 6 || a.Vacuum || a.Throttled {
		t.Errorf("auto-prune %+v: want 6 deleted, no VACUUM", a)
	}
	_, m = variant(t, "r0715-c2a3b9ce5--r0817-481156139", "r0715", func(dir string) {
		execSQL(t, dir, "INSERT INTO state_meta (key, value) VALUES ('last_vacuum', '1784130330.75')")
	})
	if a := m.AutoPrune; !a.Vacuum || a.WouldDelete != 7 {
		t.Errorf("r0715 (no VACUUM throttle, started_at rule) %+v: want 7 deleted and VACUUM", a)
	}
}

// TestSecondAutoPrune: with min_interval_hours 0 the CLI's auto-prune runs again after the
// gateway's, and deletes what the orphan finalize ended in between: a continuation started
// 100 days ago whose compression parent started yesterday (so the gateway's started_at rule
// keeps the parent, and with it the continuation's parent link).
func TestSecondAutoPrune(t *testing.T) {
	const config = "sessions:\n  auto_prune: true\n  retention_days: 30\n  min_interval_hours: 0\n"
	_, base := variant(t, "r0715-c2a3b9ce5--r0817-481156139", "r0715", func(dir string) { writeConfig(t, dir, config) })
	_, m := variant(t, "r0715-c2a3b9ce5--r0817-481156139", "r0715", func(dir string) {
		writeConfig(t, dir, config)
		execSQL(t, dir,
			"INSERT INTO sessions (id, source, started_at, ended_at, end_reason) VALUES ('p_x', 'cli', 1784130330.75, 1784213130.75, 'compression')",
			"INSERT INTO sessions (id, source, parent_session_id, started_at, api_call_count, message_count) VALUES ('c_x', 'cli', 'p_x', 1775576730.75, 0, 1)",
			"INSERT INTO messages (session_id, role, content, timestamp) VALUES ('c_x', 'user', 'hi', 1775576730.75)")
	})
	if m.OrphanFinalize.WouldChange != base.OrphanFinalize.WouldChange+1 || m.AutoPrune.WouldDelete != base.AutoPrune.WouldDelete+1 {
		t.Errorf("got %+v\nbase %+v", m, base)
	}
}

// TestGhostPruneFails: a ghost that a remaining row names as parent fails the runtime's one
// DELETE: nothing is deleted and the latch stays unset.
func TestGhostPruneFails(t *testing.T) {
	_, m := variant(t, "r0418-cb4addaca--r0506-3b750715a", "r0506", func(dir string) {
		execSQL(t, dir, "INSERT INTO sessions (id, source, parent_session_id, started_at, title) VALUES ('child_x', 'cli', '20260628_040921_e394e0', 1784000000, 'x')")
	})
	if g := m.GhostPrune; g.WouldChange != 0 || g.Raises == "" || g.Latched {
		t.Errorf("ghost prune %+v", g)
	}
}

// TestLatchValues: any non-empty latch value is set (`if not get_meta(key)`), "" is not.
func TestLatchValues(t *testing.T) {
	_, m := variant(t, "r0715-c2a3b9ce5--r0817-481156139", "r0817", func(dir string) {
		execSQL(t, dir, "INSERT INTO state_meta (key, value) VALUES ('ghost_session_prune_v1', '0'), ('orphaned_compression_finalize_v1', '')")
	})
	if !m.GhostPrune.Latched || m.GhostPrune.WouldChange != 0 || m.OrphanFinalize.Latched || m.OrphanFinalize.WouldChange != 7 {
		t.Errorf("got %+v", m)
	}
}

// TestRollbackToLegacyLoader: an r0418 runtime loads no entry of a sessions.json that starts
// with _README, has no load-time prune and no latched repair.
func TestRollbackToLegacyLoader(t *testing.T) {
	r, m := variant(t, "r0715-c2a3b9ce5--r0817-481156139", "r0418", nil)
	if r.EntriesBefore != 25 || r.Kept != 0 || len(r.Dropped) != 25 || r.LoadedByFrom != 21 || m.GhostPrune.WouldChange != 0 || m.AutoPrune.Enabled {
		t.Errorf("routing %+v, maintenance %+v", r, m)
	}
	for _, d := range r.Dropped {
		if d.Reason != startup.ReasonLoaderFailed {
			t.Errorf("dropped %+v", d)
		}
	}
}

// TestDowngradeToR0703: r0703's loader reads the mirror; its recovery does not reopen
// ws_orphan_reap rows (only agent_close ones).
func TestDowngradeToR0703(t *testing.T) {
	r, _ := variant(t, "r0715-c2a3b9ce5--r0817-481156139", "r0703", nil)
	if r.EntriesBefore != 25 || r.Imported != 0 || r.Kept+len(r.Dropped) != 25 {
		t.Errorf("routing %+v", r)
	}
}

// TestAwareUpdatedAt: an aware updated_at makes the first-hour prune raise: nothing dropped.
func TestAwareUpdatedAt(t *testing.T) {
	_, m := variant(t, "r0525-3914089d5--r0703-52d0d671e", "r0703", func(dir string) {
		path := filepath.Join(dir, "sessions", "sessions.json")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(data), `"updated_at": "2026-07-16T09:04:37.811354"`, `"updated_at": "2026-07-16T09:04:37.811354+00:00"`, 1)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if p := m.EntriesPrune; p.WouldDrop != 0 || p.Raises == "" {
		t.Errorf("entries prune %+v", p)
	}
}

// TestNoStateDB: without state.db nothing ends a row: every entry the loader loads is kept,
// and only the first-hour entries prune acts.
func TestNoStateDB(t *testing.T) {
	r, m := variant(t, "r0525-3914089d5--r0703-52d0d671e", "r0703", func(dir string) {
		if err := os.Remove(filepath.Join(dir, "state.db")); err != nil {
			t.Fatal(err)
		}
	})
	if r.EntriesBefore != 25 || r.Kept != 25 || len(r.Dropped) != 0 || m.GhostPrune.WouldChange != 0 || m.EntriesPrune.WouldDrop != 3 {
		t.Errorf("routing %+v, maintenance %+v", r, m)
	}
}
