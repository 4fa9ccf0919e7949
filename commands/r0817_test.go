package commands

// What changed at r0817 (schema v26, upstream 481156139) beyond the fixture cases, on copies
// of the r0817 fixture home: the system_prompts GC of the ghost prune and of prune.

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/check"
)

const (
	genR0817       = "r0817-481156139"
	fixtureNowUnix = 1784194200.25 // fixtureNow
)

// promptHashes returns the hashes of system_prompts, sorted.
func promptHashes(t *testing.T, home string) []string {
	t.Helper()
	db := openDB(t, home, "ro")
	defer db.Close()
	rows, err := db.Query("SELECT hash FROM system_prompts ORDER BY hash")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPromptGCR0817: r0817's prune_empty_ghost_sessions deletes, in the transaction of its
// DELETE, every system_prompts row no session references any more — the deleted ghosts'
// prompts and any that were unreferenced before — and keeps the rest (hermes_state.py
// _delete_unreferenced_system_prompts, 7d066c3c5, PR #77755). The change is reported and
// journaled; undo restores prompts and sessions together. In batches the GC runs in every
// batch that deletes, and the end state is the same.
func TestPromptGCR0817(t *testing.T) {
	for _, batch := range []int{0, 1} {
		t.Run(fmt.Sprint("batch", batch), func(t *testing.T) {
			home := fixtureHome(t, genR0817)
			execSQL(t, filepath.Join(home, "state.db"),
				"INSERT INTO system_prompts (hash, prompt) VALUES ('aaa-ghost', 'used by a ghost'), ('bbb-kept', 'used by a kept row'), ('ccc-orphan', 'used by nobody')",
				"UPDATE sessions SET system_prompt_hash = 'aaa-ghost' WHERE id = '20260702_210131_8d7ee4'",
				"UPDATE sessions SET system_prompt_hash = 'bbb-kept' WHERE id IN ('20260628_040921_e394e0', '20260710_211111_e3f695')")
			before := dumpHome(t, home)
			code, stdout, stderr := runCLIWith(t, settings{batchRows: batch}, "--home", home, "--now", fixtureNow, "--json", "prune-ghosts", "--apply")
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got := promptHashes(t, home); !slices.Equal(got, []string{"bbb-kept"}) {
				t.Fatalf("system_prompts after the prune: %v; want [bbb-kept]", got)
			}
			for _, target := range []string{`"system_prompts/aaa-ghost"`, `"system_prompts/ccc-orphan"`} {
				if !strings.Contains(stdout, target) {
					t.Errorf("envelope does not report %s:\n%s", target, stdout)
				}
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, genR0817, "prune-ghosts"))
			undoJournals(t, home)
			if got := promptHashes(t, home); !slices.Equal(got, []string{"aaa-ghost", "bbb-kept", "ccc-orphan"}) {
				t.Fatalf("system_prompts after undo: %v", got)
			}
			compareDump(t, dumpHome(t, home), before)
		})
	}
}

// TestPromptGCPruneR0817: r0817's prune_sessions deletes, in its one transaction, every
// system_prompts row no remaining session references — a pruned session's prompt and one
// unreferenced before — and keeps a prompt a kept session references (7d066c3c5); undo
// restores them with the sessions.
func TestPromptGCPruneR0817(t *testing.T) {
	const pruned, kept = "20260616_194830_db33bd", "20260715_182742_40d711" // 7d: deleted, kept
	home := fixtureHome(t, genR0817)
	execSQL(t, filepath.Join(home, "state.db"),
		"INSERT INTO system_prompts (hash, prompt) VALUES ('aaa-pruned', 'used by a pruned row'), ('bbb-kept', 'used by a kept row'), ('ccc-orphan', 'used by nobody')",
		"UPDATE sessions SET system_prompt_hash = 'aaa-pruned' WHERE id = '"+pruned+"'",
		"UPDATE sessions SET system_prompt_hash = 'bbb-kept' WHERE id = '"+kept+"'")
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "prune", "--older-than", "7d", "--apply")
	if code != ExitOK || !strings.Contains(stdout, `"sessions/`+pruned+`"`) {
		t.Fatalf("prune: exit %d (want %s pruned)\n%s\n%s", code, pruned, stdout, stderr)
	}
	if got := promptHashes(t, home); !slices.Equal(got, []string{"bbb-kept"}) {
		t.Fatalf("system_prompts after the prune: %v; want [bbb-kept]", got)
	}
	undoJournals(t, home)
	if got := promptHashes(t, home); !slices.Equal(got, []string{"aaa-pruned", "bbb-kept", "ccc-orphan"}) {
		t.Fatalf("system_prompts after undo: %v", got)
	}
}

// TestTurnLeaseSkipR0817: finalize-orphans and prune-ghosts skip a session whose lineage
// root (reached through compression-ended parents) holds a live turn lease
// (session_turn_leases, 6e929a969; live = expires_at >= now, as for compression locks), say
// so, and check does not advise a fix for it; an expired lease changes nothing. A lease
// expiring exactly at now is still live; 1 µs before now it has expired.
func TestTurnLeaseSkipR0817(t *testing.T) {
	const (
		orphan1     = "20260621_182357_4cea33" // its parent 20260616_194830_db33bd ended by compression
		orphan1Root = "20260616_194830_db33bd"
		ghostOld1   = "20260702_210131_8d7ee4"
	)
	for _, tc := range []struct {
		name    string
		expires float64
		live    bool
	}{
		{"live", fixtureNowUnix + 60, true},
		{"expiring at now", fixtureNowUnix, true},
		{"expired 1 µs ago", fixtureNowUnix - 0.000001, false},
	} {
		live, expires := tc.live, tc.expires
		t.Run(tc.name, func(t *testing.T) {
			home := fixtureHome(t, genR0817)
			execSQL(t, filepath.Join(home, "state.db"), fmt.Sprintf(
				"INSERT INTO session_turn_leases (conversation_id, holder, acquired_at, expires_at) VALUES ('%s', 'pid=7:host=a', %f, %f), ('%s', 'pid=8:host=b', %f, %f)",
				orphan1Root, fixtureNowUnix-10, expires, ghostOld1, fixtureNowUnix-10, expires))
			base := []string{"--home", home, "--now", fixtureNow, "--json"}
			_, stdout, _ := runCLI(t, append(base, "check", "--fail-on", "never")...)
			env := decodeEnvelope(t, stdout)
			advised := map[string]bool{}
			for _, f := range append(findingsOf(env, check.DBOrphanedContinuation), findingsOf(env, check.DBTUIGhost)...) {
				advised[f.Subject] = true
			}
			if advised[orphan1] == live || advised[ghostOld1] == live {
				t.Errorf("check advises a fix for %s: %v, %s: %v (lease live %v)", orphan1, advised[orphan1], ghostOld1, advised[ghostOld1], live)
			}
			for _, op := range []struct {
				args    []string
				id      check.ID
				subject string
			}{{[]string{"finalize-orphans", "--apply"}, check.OrphanLeased, orphan1}, {[]string{"prune-ghosts", "--apply"}, check.GhostLeased, ghostOld1}} {
				code, stdout, stderr := runCLI(t, append(base, op.args...)...)
				if code != ExitOK {
					t.Fatalf("%v: exit %d: %s", op.args, code, stderr)
				}
				f := findingsOf(decodeEnvelope(t, stdout), op.id)
				if (len(f) == 1 && f[0].Subject == op.subject) != live {
					t.Errorf("%v: %s findings %+v (lease live %v)", op.args, op.id, f, live)
				}
			}
			db := openDB(t, home, "ro")
			defer db.Close()
			var endReason sql.NullString
			if err := db.QueryRow("SELECT end_reason FROM sessions WHERE id = ?", orphan1).Scan(&endReason); err != nil {
				t.Fatal(err)
			}
			var ghosts int
			if err := db.QueryRow("SELECT count(*) FROM sessions WHERE id = ?", ghostOld1).Scan(&ghosts); err != nil {
				t.Fatal(err)
			}
			if endReason.Valid == live || (ghosts == 1) != live {
				t.Errorf("lease live %v: %s end_reason %v, ghost %s rows %d", live, orphan1, endReason, ghostOld1, ghosts)
			}
		})
	}
}

// nextStart returns the actions of `status --json` by entry key, in order.
func nextStart(t *testing.T, home string) map[string][]string {
	t.Helper()
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "status")
	if code != ExitOK {
		t.Fatalf("status: exit %d: %s", code, stderr)
	}
	var env struct {
		Data struct {
			NextStart []struct{ Key, Action string } `json:"next_start"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, a := range env.Data.NextStart {
		out[a.Key] = append(out[a.Key], a.Action)
	}
	return out
}

// TestPreviewLoadTimeR0817: the r0817 load-time prune as the fixture's runtime did it with its
// loader enabled (fixture README, runtime-v26.md §2.3): three entries rebuilt on the latest
// row of their key (the chain's and the race's equal the compression tips, the siblings' is
// the reaped sibling, which it reopens), the entry with no continuation dropped.
func TestPreviewLoadTimeR0817(t *testing.T) {
	got := nextStart(t, fixtureHome(t, genR0817))
	for key, want := range map[string]string{
		"agent:main:discord:thread:140119164223563701:140119164223563701": "repoint to 20260713_221054_f44293",
		"agent:main:slack:dm:D026897520":                                  "repoint to 20260713_182336_7f2d5f",
		"agent:main:telegram:group:-1007191547473:116311710":              "repoint to 20260713_005243_eb1a28",
		"agent:main:discord:group:456117026968082137:900178866045402768":  "drop",
	} {
		if len(got[key]) == 0 || got[key][0] != want {
			t.Errorf("%s: %q, want %q first", key, got[key], want)
		}
	}
}

// TestPreviewTurnMarkersR0817: an entry with an active-turn marker (r0817, 6774760b6) is
// marked resume_pending (restart_interrupted) by recover_interrupted_turns on an unclean
// start when the turn started within the hour, only cleared when it started earlier, and
// cleared by discard_active_turn_markers on a clean one.
func TestPreviewTurnMarkersR0817(t *testing.T) {
	const key = "agent:main:slack:dm:D043095675" // plain: updated 25 min ago
	for _, tt := range []struct {
		name, started string
		clean         bool
		want          []string
	}{
		{"fresh, unclean", "2026-07-16T09:00:00.000000", false, []string{"mark resume_pending (restart_interrupted)", "auto-resume"}},
		{"stale, unclean", "2026-07-16T08:00:00.000000", false, []string{"clear turn marker"}},
		{"fresh, clean", "2026-07-16T09:00:00.000000", true, []string{"clear turn marker"}},
		// max_age_seconds=3600, inclusive: a turn started exactly 1 h before now is recovered,
		// one started 1 µs earlier is not
		{"1 h old, unclean", "2026-07-16T08:30:00.250000", false, []string{"mark resume_pending (restart_interrupted)", "auto-resume"}},
		{"1 h + 1 µs old, unclean", "2026-07-16T08:30:00.249999", false, []string{"clear turn marker"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := fixtureHome(t, genR0817)
			for _, set := range []string{
				fmt.Sprintf(`UPDATE gateway_routing SET entry_json = json_set(entry_json, '$.active_turn_token', 'abc123', '$.active_turn_started_at', '%s') WHERE session_key = '%s'`, tt.started, key),
			} {
				execSQL(t, filepath.Join(home, "state.db"), set)
			}
			if tt.clean {
				if err := os.WriteFile(filepath.Join(home, ".clean_shutdown"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := nextStart(t, home)[key]; !slices.Equal(got, tt.want) {
				t.Errorf("%s: %q, want %q", key, got, tt.want)
			}
		})
	}
}

// TestOpenHealFindingsR0817: check reports what r0817's next open and start will do
// (runtime-v26.md §3.8) on a v26 home, and nothing of it on an r0715 home with the same
// state (those runtimes neither write nor heal it).
func TestOpenHealFindingsR0817(t *testing.T) {
	plant := []string{
		"INSERT INTO state_meta (key, value) VALUES ('fts_stale', '1'), ('fts_optimize_available', '1'), ('fts_rebuild_high_water', '10')",
		"ALTER TABLE session_model_usage RENAME TO smu_old",
		"CREATE TABLE session_model_usage (session_id TEXT, model TEXT, billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, task TEXT DEFAULT '', PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode))",
		"DROP TABLE smu_old",
		`UPDATE gateway_routing SET entry_json = json_set(entry_json, '$.active_turn_token', 'abc', '$.active_turn_started_at', '2026-07-16T09:00:00') WHERE session_key = 'agent:main:slack:dm:D043095675'`,
	}
	want := map[check.ID]string{
		check.DBFTSStale: "fts_stale", check.DBFTSOptimizable: "state.db", check.DBFTSRebuildInterrupted: "state.db",
		check.DBLegacyPrimaryKey: "session_model_usage", check.EntryTurnMarker: "agent:main:slack:dm:D043095675",
		check.EntryStartTarget: "agent:main:slack:dm:D026897520", check.PreviewResetPolicy: "config.yaml",
	}
	for _, gen := range []string{genR0817, "r0715-c2a3b9ce5"} {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			stmts := plant
			if gen != genR0817 {
				stmts = plant[:1] // r0715 has no task column and writes no turn markers
			}
			execSQL(t, filepath.Join(home, "state.db"), stmts...)
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("session_reset:\n  mode: idle\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, stdout, _ := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "check", "--fail-on", "never")
			env := decodeEnvelope(t, stdout)
			for id, subject := range want {
				f := findingsOf(env, id)
				if gen == genR0817 && (len(f) != 1 || f[0].Subject != subject) {
					t.Errorf("%s: %+v, want one on %s", id, f, subject)
				}
				if gen != genR0817 && len(f) != 0 {
					t.Errorf("%s on %s: %+v", id, gen, f)
				}
			}
		})
	}
}

// TestPreviewRebuiltRecentR0817: an entry the r0817 load-time prune rebuilds gets the
// recovered row's last activity as updated_at, so crash recovery marks it when that activity
// falls inside the 120 s window (and not otherwise: TestPreviewStartPerGeneration).
func TestPreviewRebuiltRecentR0817(t *testing.T) {
	home := fixtureHome(t, genR0817)
	execSQL(t, filepath.Join(home, "state.db"), fmt.Sprintf("UPDATE sessions SET last_activity_at = %f WHERE id = '20260713_182336_7f2d5f'", fixtureNowUnix-30))
	want := []string{"repoint to 20260713_182336_7f2d5f", "mark resume_pending (restart_interrupted)", "auto-resume"}
	if got := nextStart(t, home)["agent:main:slack:dm:D026897520"]; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestUpgradeCheckCJKHome: a home with r0817's optional CJK index, whose tokenizer sessionctl
// cannot load, is still predicted (the replay uses a built-in tokenizer for the schema), and
// stays as it was.
func TestUpgradeCheckCJKHome(t *testing.T) {
	home := cjkHome(t, genR0817, false)
	before := exactSnapshot(t, home)
	for _, to := range []string{"r0817", "r0715"} {
		code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "upgrade-check", "--to", to, "--fail-on", "never")
		if code != ExitOK || !strings.Contains(stdout, `"upgrade": {`) {
			t.Fatalf("--to %s: exit %d: %s", to, code, stderr)
		}
	}
	if after := exactSnapshot(t, home); !maps.Equal(before, after) {
		t.Error("upgrade-check changed the home")
	}
}

// TestResetPolicyFindingR0817: preview.reset-policy comes from a session_reset key, not from
// any mention of a reset (a comment, another key).
func TestResetPolicyFindingR0817(t *testing.T) {
	for cfg, want := range map[string]bool{
		"session_reset:\n  mode: idle\n":                   true,
		"sessions:\n  auto_prune: true  # reset nightly\n": false,
		"model:\n  auto_reset_budget: 3\n":                 false,
	} {
		home := fixtureHome(t, genR0817)
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stdout, _ := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "check", "--fail-on", "never")
		if got := len(findingsOf(decodeEnvelope(t, stdout), check.PreviewResetPolicy)) == 1; got != want {
			t.Errorf("config.yaml %q: preview.reset-policy %v, want %v", cfg, got, want)
		}
	}
}
