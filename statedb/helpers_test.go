package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fixtureNow is the frozen clock of every fixture home (2026-07-16T09:30:00.250000Z).
const fixtureNow = 1784194200.25

type generation struct {
	name    string
	version int
}

var generations = []generation{
	{"r0418-cb4addaca", 6},
	{"r0506-3b750715a", 11},
	{"r0525-3914089d5", 13},
	{"r0703-52d0d671e", 17},
	{"r0715-c2a3b9ce5", 21},
}

func fixtureDir(gen string) string {
	return filepath.Join("..", "testdata", "fixtures", gen)
}

// copyDB copies a fixture's state.db into a temporary directory (mode 0600) and returns it.
func copyDB(t testing.TB, gen string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir(gen), "home", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func openWrite(t testing.TB, path string) *DB {
	t.Helper()
	db, err := OpenWrite(context.Background(), path)
	if err != nil {
		t.Fatalf("OpenWrite: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func openRO(t testing.TB, path string) *DB {
	t.Helper()
	db, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// rawDB opens path with the bare driver, for test set-up and independent checks.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustExec(t testing.TB, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// expectedDump is the part of a fixture's expected/<case>.json these tests compare.
type expectedDump struct {
	Sessions  map[string]map[string]any `json:"sessions"`
	StateMeta map[string]string         `json:"state_meta"`
	Routing   map[string]struct {
		SessionID string `json:"session_id"`
	} `json:"routing"`
}

func loadExpected(t testing.TB, gen, name string) expectedDump {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir(gen), "expected", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var d expectedDump
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s/%s: %v", gen, name, err)
	}
	return d
}

// dumpSessions reads the sessions the way the fixture dump does, with plain SQL.
func dumpSessions(t testing.TB, db *sql.DB, withAPICalls bool) map[string]map[string]any {
	t.Helper()
	calls := "NULL"
	if withAPICalls {
		calls = "api_call_count"
	}
	rows, err := db.Query(`SELECT id, source, parent_session_id, started_at, ended_at, end_reason, title, ` +
		calls + `, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) FROM sessions s`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]map[string]any{}
	for rows.Next() {
		var id, source string
		var parent, reason, title sql.NullString
		var started float64
		var ended sql.NullFloat64
		var apiCalls sql.NullInt64
		var msgs int64
		if err := rows.Scan(&id, &source, &parent, &started, &ended, &reason, &title, &apiCalls, &msgs); err != nil {
			t.Fatal(err)
		}
		row := map[string]any{"source": source, "parent_session_id": nullStr(parent), "started_at": started,
			"ended_at": nullFloat(ended), "end_reason": nullStr(reason), "title": nullStr(title),
			"message_count": float64(msgs)}
		if withAPICalls {
			row["api_call_count"] = float64(apiCalls.Int64)
		}
		out[id] = row
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func nullStr(n sql.NullString) any {
	if !n.Valid {
		return nil
	}
	return n.String
}

func nullFloat(n sql.NullFloat64) any {
	if !n.Valid {
		return nil
	}
	return n.Float64
}

// compareSessions reports every difference between got and the expected dump (reals compared
// to 6 decimals, as the dump rounds them).
func compareSessions(t testing.TB, got, want map[string]map[string]any) {
	t.Helper()
	for id := range want {
		if _, ok := got[id]; !ok {
			t.Errorf("session %s missing", id)
		}
	}
	for id, g := range got {
		w, ok := want[id]
		if !ok {
			t.Errorf("session %s present, expected deleted", id)
			continue
		}
		for field, wv := range w {
			if !sameValue(g[field], wv) {
				t.Errorf("session %s %s = %v, want %v", id, field, g[field], wv)
			}
		}
	}
}

func sameValue(got, want any) bool {
	gf, gok := got.(float64)
	wf, wok := want.(float64)
	if gok && wok {
		d := gf - wf
		return d < 6e-7 && d > -6e-7
	}
	return got == want
}

func readStateMeta(t testing.TB, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT key, value FROM state_meta")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// typedDump renders every row of table with the storage class and exact value of every
// column, using SQL only (reals with 17 significant digits), sorted.
func typedDump(t testing.TB, db *sql.DB, table string) string {
	t.Helper()
	cols, err := db.Query("SELECT name FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for cols.Next() {
		var c string
		if err := cols.Scan(&c); err != nil {
			t.Fatal(err)
		}
		q := `"` + c + `"`
		exprs = append(exprs, fmt.Sprintf(`typeof(%[1]s) || ':' || CASE typeof(%[1]s) WHEN 'real' THEN printf('%%!.17g', %[1]s) ELSE quote(%[1]s) END`, q))
	}
	cols.Close()
	rows, err := db.Query("SELECT " + strings.Join(exprs, " || '|' || ") + " FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, s)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// RoutingRows returns (for the tests, beside EachRoutingEntry) the gateway_routing rows of scope ordered by key; nil when the table
// does not exist (the routing index is then sessions.json).
func (db *DB) RoutingRows(ctx context.Context, scope string) ([]RoutingRow, error) {
	if !db.schema.HasGatewayRouting {
		return nil, nil
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT scope, session_key, entry_json, updated_at
		FROM gateway_routing WHERE scope = ? ORDER BY session_key`, scope)
	if err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	defer rows.Close()
	var out []RoutingRow
	for rows.Next() {
		var r RoutingRow
		if err := rows.Scan(&r.Scope, &r.Key, &r.EntryJSON, &r.UpdatedAt); err != nil {
			return nil, classify("read gateway_routing", err, false)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	return out, nil
}
