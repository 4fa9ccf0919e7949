package statedb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// benchDB returns a copy of the r0715 fixture grown by n sessions with two messages each
// (every tenth an empty TUI ghost, every tenth an open compression continuation).
func benchDB(b *testing.B, n int) *DB {
	b.Helper()
	path := copyDB(b, "r0715-c2a3b9ce5")
	raw := rawDB(b, path)
	tx, err := raw.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := benchRows(tx, i); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return openRO(b, path)
}

func benchRows(tx *sql.Tx, i int) error {
	id := fmt.Sprintf("bench_%07d", i)
	started := 1.7e9 + float64(i)
	switch i % 10 {
	case 0:
		_, err := tx.Exec(`INSERT INTO sessions (id, source, started_at, ended_at, end_reason)
			VALUES (?, 'tui', ?, ?, 'tui_close')`, id, started, started+1)
		return err
	case 1:
		if _, err := tx.Exec(`INSERT INTO sessions (id, source, started_at, ended_at, end_reason)
			VALUES (?, 'cli', ?, ?, 'compression')`, id+"p", started, started+1); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO sessions (id, source, started_at, parent_session_id)
			VALUES (?, 'cli', ?, ?)`, id, started+2, id+"p"); err != nil {
			return err
		}
	default:
		if _, err := tx.Exec(`INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?)`, id, started); err != nil {
			return err
		}
	}
	for m := range 2 {
		if _, err := tx.Exec(`INSERT INTO messages (session_id, role, content, timestamp)
			VALUES (?, 'user', 'x', ?)`, id, started+float64(m)); err != nil {
			return err
		}
	}
	return nil
}

func BenchmarkFinalizeCandidates(b *testing.B) {
	db := benchDB(b, 20000)
	for b.Loop() {
		if _, err := db.FinalizeCandidates(context.Background(), fixtureNow, DefaultOrphanMinAge); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGhostCandidates(b *testing.B) {
	db := benchDB(b, 20000)
	for b.Loop() {
		if _, err := db.GhostCandidates(context.Background(), fixtureNow, DefaultGhostMinAge); err != nil {
			b.Fatal(err)
		}
	}
}

// queryPlan returns EXPLAIN QUERY PLAN details, one per line.
func queryPlan(t *testing.T, db *DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.sql.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	return strings.Join(lines, "\n")
}

// TestCandidateQueryPlans checks that the per-session message probes use the messages index
// (no scan of the whole messages table) and logs the plans.
func TestCandidateQueryPlans(t *testing.T) {
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	from, err := orphanSource(context.Background(), db.sql)
	if err != nil {
		t.Fatal(err)
	}
	cols := db.sessionColumns("sessions")
	fq, fargs := db.finalizeCandidatesQuery(cols, from, fixtureNow, DefaultOrphanMinAge, nil)
	among := []string{"a", "b"}
	aq, aargs := db.finalizeCandidatesQuery(cols, "sessions", fixtureNow, DefaultOrphanMinAge, among)
	restrict, rargs := amongClause(among)
	gq := "SELECT " + cols + " FROM sessions WHERE " + ghostPredicate + restrict
	plans := map[string]string{
		"finalize":       queryPlan(t, db, fq, fargs...),
		"finalize among": queryPlan(t, db, aq, aargs...),
		"ghosts":         queryPlan(t, db, db.ghostCandidatesQuery(), fixtureNow-DefaultGhostMinAge),
		"ghosts among":   queryPlan(t, db, gq, append([]any{fixtureNow - DefaultGhostMinAge}, rargs...)...),
	}
	for name, plan := range plans {
		t.Logf("%s candidates plan:\n%s", name, plan)
		if strings.Contains(plan, "SCAN messages") || strings.Contains(plan, "SCAN m ") || !strings.Contains(plan, "idx_messages_session") {
			t.Errorf("%s plan scans messages or misses idx_messages_session:\n%s", name, plan)
		}
	}
	if !strings.Contains(plans["finalize"], "USING INDEX idx_sessions_parent") {
		t.Errorf("finalize plan does not read sessions through idx_sessions_parent:\n%s", plans["finalize"])
	}
	for _, name := range []string{"finalize among", "ghosts among"} { // later batches look sessions up by id
		if !strings.Contains(plans[name], "(id=?)") && !strings.Contains(plans[name], "AND id=?)") {
			t.Errorf("%s plan does not look sessions up by id:\n%s", name, plans[name])
		}
	}
}
