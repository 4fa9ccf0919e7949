package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixtureDB is the in-repo fixture state.db of a generation.
func fixtureDB(g generation) string {
	return filepath.Join("..", "..", "testdata", "fixtures", g.Full, "home", "state.db")
}

// tinyHome generates a small home of generation g into a temp dir.
func tinyHome(t *testing.T, g generation, seed uint64) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "home")
	now, _ := parseEpochMicros("1784194200.25")
	cfg := config{Gen: g, Seed: seed, Entries: 30, Sessions: 300, Msgs: 2000, Now: now, Out: out, TextScale: 1}
	if err := generate(context.Background(), cfg, func(string, ...any) {}, io.Discard); err != nil {
		t.Fatalf("generate %s: %v", g.Short, err)
	}
	return out
}

// openRO opens a generated state.db read-only (WAL readers need no -wal).
func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// scalar runs a one-value query.
func scalar[T any](t *testing.T, db *sql.DB, q string) T {
	t.Helper()
	var v T
	if err := db.QueryRow(q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

func TestGenerateEveryGeneration(t *testing.T) {
	for _, g := range generations {
		t.Run(g.Short, func(t *testing.T) {
			home := tinyHome(t, g, 7)
			checkStateDB(t, g, filepath.Join(home, "state.db"))
			checkSessionsJSON(t, g, filepath.Join(home, "sessions", "sessions.json"))
			var counts map[string]int
			b, err := os.ReadFile(filepath.Join(home, ".restart_failure_counts"))
			if err != nil || json.Unmarshal(b, &counts) != nil || len(counts) == 0 {
				t.Fatalf(".restart_failure_counts: %v %q", err, b)
			}
		})
	}
}

// checkStateDB compares the generated schema with the fixture's and checks
// integrity and message_count consistency.
func checkStateDB(t *testing.T, g generation, path string) {
	fix, err := openReadOnly(fixtureDB(g))
	if err != nil {
		t.Fatal(err)
	}
	defer fix.Close()
	db := openRO(t, path)
	want := scalar[int](t, fix, "SELECT version FROM schema_version")
	if got := scalar[int](t, db, "SELECT version FROM schema_version"); got != want {
		t.Errorf("schema_version = %d, fixture has %d", got, want)
	}
	fixMaster, err := readMaster(fix)
	if err != nil {
		t.Fatal(err)
	}
	genMaster, err := readMaster(db)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(genMaster, fixMaster) {
		t.Errorf("sqlite_master differs from the fixture's:\n got %v\nwant %v", genMaster, fixMaster)
	}
	if ok := scalar[string](t, db, "PRAGMA integrity_check"); ok != "ok" {
		t.Errorf("integrity_check: %s", ok)
	}
	if mode := scalar[string](t, db, "PRAGMA journal_mode"); mode != "wal" {
		t.Errorf("journal_mode = %s, want wal", mode)
	}
	bad := scalar[int](t, db, `SELECT count(*) FROM sessions s
		WHERE message_count != (SELECT count(*) FROM messages m WHERE m.session_id = s.id)`)
	if bad != 0 {
		t.Errorf("%d sessions with message_count != messages rows", bad)
	}
	if n := scalar[int](t, db, "SELECT count(*) FROM messages_fts"); n != 2000 {
		t.Errorf("messages_fts has %d rows, want 2000 (triggers not active?)", n)
	}
}

// checkSessionsJSON checks that sessions.json is an object whose first key
// is _README exactly for the generations that write one.
func checkSessionsJSON(t *testing.T, g generation, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatalf("sessions.json: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	first, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	if hasReadme := first == "_README"; hasReadme != (g.Readme != "") {
		t.Errorf("first key %q; want _README first: %v", first, g.Readme != "")
	}
	if strings.Contains(string(b), `"memory_flushed"`) != (g.Short == "r0418") {
		t.Errorf("memory_flushed present for the wrong generation")
	}
}

func TestDeterministic(t *testing.T) {
	g, _ := lookupGeneration("r0715")
	a, b := tinyHome(t, g, 3), tinyHome(t, g, 3)
	for _, f := range []string{"sessions/sessions.json", ".restart_failure_counts"} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
	}
	q := "SELECT group_concat(id || ':' || message_count, ',') FROM (SELECT id, message_count FROM sessions ORDER BY id)"
	if x, y := scalar[string](t, openRO(t, filepath.Join(a, "state.db")), q),
		scalar[string](t, openRO(t, filepath.Join(b, "state.db")), q); x != y {
		t.Error("sessions differ between two runs with the same seed")
	}
}

func TestPythonJSON(t *testing.T) {
	obj := []field{{"a", "Zoë 🚀 <&> \"q\"\n"}, {"b", []field{{"n", nil}, {"f", pyFloat("0.0")}, {"t", true}}}}
	const compact = `{"a": "Zo\u00eb \ud83d\ude80 <&> \"q\"\n", "b": {"n": null, "f": 0.0, "t": true}}`
	if got := compactJSON(obj); got != compact {
		t.Errorf("compact:\n got %s\nwant %s", got, compact)
	}
	var b strings.Builder
	writeIndented(&b, obj, 0)
	const indented = "{\n  \"a\": \"Zo\\u00eb \\ud83d\\ude80 <&> \\\"q\\\"\\n\",\n  \"b\": {\n    \"n\": null,\n    \"f\": 0.0,\n    \"t\": true\n  }\n}"
	if b.String() != indented {
		t.Errorf("indented:\n got %s\nwant %s", b.String(), indented)
	}
}

func TestIsoNaive(t *testing.T) {
	for us, want := range map[int64]string{
		1784194200_250000: "2026-07-16T09:30:00.250000",
		1784194200_000000: "2026-07-16T09:30:00",
	} {
		if got := isoNaive(us); got != want {
			t.Errorf("isoNaive(%d) = %s, want %s", us, got, want)
		}
	}
}
