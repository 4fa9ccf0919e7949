package commands

// Issue 29 item 4: a value of the wrong class in one column of one row of r0817's state.db is
// a finding about that row (db.odd-value), never the end of a read.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/statedb"
)

// badValueSeed gives the r0817 fixture a row in each table it leaves empty that sessionctl
// reads: a system prompt a session uses and a live turn lease on a lineage root.
var badValueSeed = []string{
	"INSERT INTO system_prompts (hash, prompt) VALUES ('h1', 'p1')",
	"UPDATE sessions SET system_prompt_hash = 'h1' WHERE id = '20260628_040921_e394e0'",
	fmt.Sprintf("INSERT INTO session_turn_leases VALUES ('20260616_194830_db33bd', 'pid=1:host=a', %f, %f)", fixtureNowUnix-10, fixtureNowUnix+60),
}

// badValueTables are the tables of r0817's state.db sessionctl reads and checks column by
// column (statedb typedTables).
var badValueTables = []string{"sessions", "compression_locks", "session_turn_leases", "system_prompts", "session_model_usage",
	"messages", "state_meta", "gateway_routing"}

// badValueShort are the columns -short plants: those the issue names, the turn-lease walk's,
// and one of each declared type in each table.
var badValueShort = map[string]bool{
	"sessions.last_activity_at": true, "sessions.system_prompt_hash": true, "sessions.parent_session_id": true,
	"sessions.source": true, "sessions.end_reason": true, "sessions.model_config": true, "sessions.pinned": true,
	"sessions.id": true, "compression_locks.holder": true, "compression_locks.expires_at": true,
	"session_turn_leases.conversation_id": true, "session_turn_leases.holder": true,
	"session_turn_leases.acquired_at": true, "session_turn_leases.expires_at": true,
	"system_prompts.hash": true, "system_prompts.prompt": true,
	"session_model_usage.session_id": true, "session_model_usage.input_tokens": true, "session_model_usage.last_seen": true,
	"messages.timestamp": true, "state_meta.value": true, "gateway_routing.updated_at": true,
}

type declaredCol struct{ table, name, typ string }

// declaredCols lists the columns of tables in home's state.db with their declared types.
func declaredCols(t *testing.T, home string, tables []string) []declaredCol {
	t.Helper()
	db := openDB(t, home, "ro")
	defer db.Close()
	var out []declaredCol
	for _, table := range tables {
		rows, err := db.Query("SELECT name, upper(type) FROM pragma_table_info(?) ORDER BY cid", table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			c := declaredCol{table: table}
			if err := rows.Scan(&c.name, &c.typ); err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// wrongValue is an SQL expression of the wrong storage class for c in every row: TEXT where
// the declared type is a number, a BLOB (the text's bytes, one per row) where it is TEXT.
func wrongValue(c declaredCol) string {
	if c.typ == "TEXT" {
		return fmt.Sprintf("CAST(COALESCE(%s, 'x' || rowid) AS BLOB)", c.name)
	}
	return "'never'"
}

// TestBadValueReadsR0817: for every column of every r0817 table sessionctl reads, a copy of
// the r0817 fixture home with a value of the wrong class in that column of every row: status,
// check, entries list, sessions list (plain, --ghosts, --orphans) and maintain's plan exit 0
// or 1, and check names the column and a row holding it (db.odd-value).
//
// Under -short, and in the race-built run, only the columns of badValueShort run: the whole
// sweep (some 800 command runs, minutes under -race) is scripts/test -slow's plain run.
func TestBadValueReadsR0817(t *testing.T) {
	for _, c := range declaredCols(t, fixtureHome(t, genR0817), badValueTables) {
		if c.table == "messages" && !slices.Contains(statedb.MessageColumnsRead, c.name) {
			continue // measured only (length), never compared
		}
		if (testing.Short() || raceEnabled()) && !badValueShort[c.table+"."+c.name] {
			continue
		}
		t.Run(c.table+"."+c.name, func(t *testing.T) {
			t.Parallel()
			home := fixtureHome(t, genR0817)
			execSQL(t, filepath.Join(home, "state.db"), append(append([]string{}, badValueSeed...),
				"UPDATE "+c.table+" SET "+c.name+" = "+wrongValue(c))...)
			base := []string{"--home", home, "--now", fixtureNow, "--json"}
			for _, args := range [][]string{{"status"}, {"entries", "list"}, {"sessions", "list", "--limit", "0"},
				{"sessions", "list", "--ghosts"}, {"sessions", "list", "--orphans"}, {"maintain"}} {
				if code, _, stderr := runCLI(t, append(base, args...)...); code != ExitOK && code != ExitFindings {
					t.Errorf("%v: exit %d: %s", args, code, stderr)
				}
			}
			code, stdout, stderr := runCLI(t, append(base, "check", "--fail-on", "never")...)
			if code != ExitOK {
				t.Fatalf("check: exit %d: %s", code, stderr)
			}
			named := false
			for _, f := range findingsOf(decodeEnvelope(t, stdout), check.DBOddValue) {
				if strings.HasPrefix(f.Message, c.table+"."+c.name+" holds ") && f.Subject != "" && strings.Contains(f.Message, " in the row ") {
					named = true
				}
			}
			if !named {
				t.Errorf("check names no row of %s.%s (db.odd-value):\n%s", c.table, c.name, stdout)
			}
		})
	}
}
