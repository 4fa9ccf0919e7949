package statedb

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// listFixture is a database with 2501 "gen" sessions over three keyset pages: pairs share a
// started_at, every third has ended, every fifth has a title, the first 300 have i%4
// messages; all holds them as read back with their message counts.
func listFixture(t *testing.T) (*DB, []Session) {
	t.Helper()
	path := copyDB(t, "r0715-c2a3b9ce5")
	raw := rawDB(t, path)
	addSessions(t, raw, 2501, "gen")
	stmts := []string{
		`UPDATE sessions SET ended_at = started_at + (CAST(substr(id, 5) AS INTEGER) % 7) * 10 WHERE source = 'gen' AND CAST(substr(id, 5) AS INTEGER) % 3 = 0`,
		`UPDATE sessions SET title = 'Plan ' || substr(id, 5) WHERE source = 'gen' AND CAST(substr(id, 5) AS INTEGER) % 5 = 0`,
		`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299), m(j) AS (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)
		 INSERT INTO messages (session_id, role, content, timestamp) SELECT printf('gen_%06d', i), 'user', 'x', 1.7e9 FROM n, m WHERE j <= i % 4`,
	}
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db := openRO(t, path)
	var all []Session
	if err := db.EachSession(context.Background(), SessionFilter{Source: "gen"}, func(s Session) error {
		all = append(all, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db, all
}

// TestEachSessionFiltersAndOrders: every filter and order, pushed into SQL, selects and
// orders exactly what the same rule applied to all the rows in Go does, across keyset pages
// and limits; CountSessions counts it without the limit.
func TestEachSessionFiltersAndOrders(t *testing.T) {
	db, all := listFixture(t)
	ctx := context.Background()
	since, until := 1.7e9+200, 1.7e9+1000.5
	tests := []struct {
		name string
		f    SessionFilter
		keep func(Session) bool
	}{
		{"all by started", SessionFilter{}, nil},
		{"reverse", SessionFilter{Reverse: true}, nil},
		{"by id", SessionFilter{Order: OrderID}, nil},
		{"by id reversed, limit", SessionFilter{Order: OrderID, Reverse: true, Limit: 1200}, nil},
		{"by ended", SessionFilter{Order: OrderEnded}, nil},
		{"by ended reversed", SessionFilter{Order: OrderEnded, Reverse: true, Limit: 40}, nil},
		{"by messages", SessionFilter{Order: OrderMessages, Limit: 1001}, nil},
		{"since until", SessionFilter{Since: &since, Until: &until}, func(s Session) bool { return s.StartedAt >= since && s.StartedAt < until }},
		{"title", SessionFilter{Title: "pLAN 0012", Reverse: true}, func(s Session) bool {
			return s.Title != nil && strings.Contains(strings.ToLower(*s.Title), "plan 0012")
		}},
		{"title with LIKE characters", SessionFilter{Title: "%"}, func(Session) bool { return false }},
		{"min messages, ended", SessionFilter{MinMessages: 2, Ended: true, Order: OrderMessages}, func(s Session) bool { return s.MessageCount >= 2 && !s.Open() }},
		{"ids by started", SessionFilter{IDs: []string{"gen_000007", "gen_002000", "gen_000008", "nope"}}, func(s Session) bool {
			return s.ID == "gen_000007" || s.ID == "gen_002000" || s.ID == "gen_000008"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.Source = "gen"
			var got []string
			if err := db.EachSession(ctx, f, func(s Session) error {
				got = append(got, s.ID)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			want := expectedOrder(all, f, tt.keep)
			n, err := db.CountSessions(ctx, f)
			if err != nil || n != len(want) {
				t.Errorf("CountSessions = %d, %v; want %d", n, err, len(want))
			}
			if f.Limit > 0 && len(want) > f.Limit {
				want = want[:f.Limit]
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %d sessions %v…, want %d %v…", len(got), got[:min(5, len(got))], len(want), want[:min(5, len(want))])
			}
		})
	}
}

// expectedOrder applies keep and f's order to all in Go, as SQLite orders (NULL first).
func expectedOrder(all []Session, f SessionFilter, keep func(Session) bool) []string {
	var list []Session
	for _, s := range all {
		if keep == nil || keep(s) {
			list = append(list, s)
		}
	}
	key := func(s Session) float64 {
		switch f.Order {
		case OrderEnded:
			if s.EndedAt == nil {
				return -1
			}
			return *s.EndedAt
		case OrderMessages:
			return float64(s.MessageCount)
		case OrderID:
			return 0
		}
		return s.StartedAt
	}
	slices.SortStableFunc(list, func(a, b Session) int {
		c := cmp.Or(cmp.Compare(key(a), key(b)), strings.Compare(a.ID, b.ID))
		if !f.Reverse {
			c = -c
		}
		return c
	})
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

// TestSessionPageSeeksIndex: a keyset page after the first seeks the started_at index
// rather than scanning it from the top (the plan names the range).
func TestSessionPageSeeksIndex(t *testing.T) {
	db, all := listFixture(t)
	query, args := db.pageQuery(SessionFilter{}, nil, nil, &all[1000], 10)
	rows, err := db.sql.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if text := fmt.Sprint(plan); !strings.Contains(text, "SEARCH s USING INDEX idx_sessions_started (started_at<?)") {
		t.Errorf("plan %s: want a SEARCH of idx_sessions_started", text)
	}
}
