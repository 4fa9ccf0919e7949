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
// (no scan of the whole messages table), that the later batches of a repair look sessions up
// by id on every generation that has the repairs (with a 500-id batch, as the CLI runs them),
// and logs the plans.
func TestCandidateQueryPlans(t *testing.T) {
	among := make([]string, 500)
	for i := range among {
		among[i] = fmt.Sprintf("20260601_000000_%06x", i)
	}
	for _, gen := range []string{"r0506-3b750715a", "r0715-c2a3b9ce5"} {
		t.Run(gen, func(t *testing.T) {
			plans := candidatePlans(t, openRO(t, copyDB(t, gen)), among)
			for name, plan := range plans {
				t.Logf("%s plan:\n%s", name, plan)
				if strings.Contains(plan, "SCAN messages") || strings.Contains(plan, "SCAN m ") || !strings.Contains(plan, "idx_messages_session") {
					t.Errorf("%s plan scans messages or misses idx_messages_session:\n%s", name, plan)
				}
			}
			if !strings.Contains(plans["finalize candidates"], "USING INDEX idx_sessions_parent") {
				t.Errorf("finalize plan does not read sessions through idx_sessions_parent:\n%s", plans["finalize candidates"])
			}
			for _, name := range []string{"finalize by id", "ghosts by id"} {
				if !looksUpSessionsByID(plans[name]) {
					t.Errorf("%s plan does not look sessions up by id:\n%s", name, plans[name])
				}
			}
		})
	}
}

// candidatePlans returns the plans of the repairs' candidate queries: the plan-time ones and
// the ones a batch runs for given ids under the write lock.
func candidatePlans(t *testing.T, db *DB, among []string) map[string]string {
	ctx := context.Background()
	from, err := orphanSource(ctx, db.sql)
	if err != nil {
		t.Fatal(err)
	}
	ti, err := loadTableInfo(ctx, db.sql, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	fq, fargs := db.finalizeCandidatesQuery(db.sessionColumns("sessions"), from, nil, fixtureNow, DefaultOrphanMinAge)
	bq, bargs, err := db.orphanImagesQuery(ctx, db.sql, ti, fixtureNow, DefaultOrphanMinAge, among)
	if err != nil {
		t.Fatal(err)
	}
	gfrom, gargs := amongSource(among)
	gq := "SELECT " + ti.selectList() + " FROM " + gfrom + " WHERE " + ghostPredicate + oldestFirst
	return map[string]string{
		"finalize candidates": queryPlan(t, db, fq, fargs...),
		"finalize by id":      queryPlan(t, db, bq, bargs...),
		"ghost candidates":    queryPlan(t, db, db.ghostCandidatesQuery(), fixtureNow-DefaultGhostMinAge),
		"ghosts by id":        queryPlan(t, db, gq, append(gargs, fixtureNow-DefaultGhostMinAge)...),
	}
}

// looksUpSessionsByID reports whether the first step of plan that reads the sessions table
// itself (not an alias of it) searches it by id.
func looksUpSessionsByID(plan string) bool {
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(line, "SEARCH sessions USING") {
			return strings.Contains(line, "id=?)")
		}
		if strings.HasPrefix(line, "SCAN sessions") {
			return false
		}
	}
	return false
}
