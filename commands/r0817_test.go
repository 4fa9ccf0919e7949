package commands

// What changed at r0817 (schema v26, upstream 481156139) beyond the fixture cases, on copies
// of the r0817 fixture home: the ghost prune's system_prompts GC.

import (
	"database/sql"
	"fmt"
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

// TestTurnLeaseSkipR0817: finalize-orphans and prune-ghosts skip a session whose lineage
// root (reached through compression-ended parents) holds a live turn lease
// (session_turn_leases, 6e929a969; live = expires_at >= now, as for compression locks), say
// so, and check does not advise a fix for it; an expired lease changes nothing.
func TestTurnLeaseSkipR0817(t *testing.T) {
	const (
		orphan1     = "20260621_182357_4cea33" // its parent 20260616_194830_db33bd ended by compression
		orphan1Root = "20260616_194830_db33bd"
		ghostOld1   = "20260702_210131_8d7ee4"
	)
	for _, live := range []bool{true, false} {
		t.Run(fmt.Sprint("live=", live), func(t *testing.T) {
			home := fixtureHome(t, genR0817)
			expires := fixtureNowUnix + 60
			if !live {
				expires = fixtureNowUnix - 0.000001
			}
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
