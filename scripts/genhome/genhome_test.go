package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	if mode := scalar[string](t, db, "PRAGMA journal_mode"); mode != g.Journal {
		t.Errorf("journal_mode = %s, want %s", mode, g.Journal)
	}
	bad := scalar[int](t, db, `SELECT count(*) FROM sessions s
		WHERE message_count != (SELECT count(*) FROM messages m WHERE m.session_id = s.id)`)
	if bad != 0 {
		t.Errorf("%d sessions with message_count != messages rows", bad)
	}
	if n := scalar[int](t, db, "SELECT count(*) FROM messages_fts"); n != 2000 {
		t.Errorf("messages_fts has %d rows, want 2000 (triggers not active?)", n)
	}
	checkFTS(t, path)
}

// checkFTS runs FTS5's integrity-check on every FTS5 table of the state.db
// at path, plain and with rank 1, which also compares the index with its
// (external) content: a message the triggers missed fails it.
func checkFTS(t *testing.T, path string) {
	t.Helper()
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=rw"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("no FTS5 table")
	}
	for _, name := range tables {
		for _, q := range []string{"INSERT INTO %[1]s(%[1]s) VALUES('integrity-check')",
			"INSERT INTO %[1]s(%[1]s, rank) VALUES('integrity-check', 1)"} {
			if _, err := db.Exec(fmt.Sprintf(q, name)); err != nil {
				t.Errorf("%s: %v", fmt.Sprintf(q, name), err)
			}
		}
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

// TestR0817 checks what an r0817 (v26) home has beyond r0715's: the file in
// rollback-journal mode, the v26 columns, system prompts (shared, own and
// unreferenced ones, each keyed by its SHA-256), last_activity_at, turn
// leases and hygiene rows, entries with r0817's four fields in to_dict
// order; and that the rest is the r0715 home of the same flags.
func TestR0817(t *testing.T) {
	g, _ := lookupGeneration("r0817")
	home := tinyHome(t, g, 11)
	path := filepath.Join(home, "state.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b[18] != 1 || b[19] != 1 {
		t.Errorf("header bytes 18/19 = %d/%d, want 1/1 (rollback journal)", b[18], b[19])
	}
	for _, f := range []string{"state.db-wal", "state.db-shm", "state.db-journal"} {
		if _, err := os.Stat(filepath.Join(home, f)); err == nil {
			t.Errorf("%s left behind", f)
		}
	}
	db := openRO(t, path)
	for _, c := range []string{"sessions.system_prompt_hash", "sessions.last_activity_at", "sessions.title_source",
		"sessions.git_metadata_generation", "sessions.hidden", "messages.api_content", "session_turn_leases.conversation_id",
		"gateway_hygiene_state.failure_streak", "system_prompts.prompt"} {
		table, col, _ := strings.Cut(c, ".")
		if n := scalar[int](t, db, fmt.Sprintf("SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", table, col)); n != 1 {
			t.Errorf("column %s missing", c)
		}
	}
	if n := scalar[int](t, db, "SELECT count(*) FROM pragma_foreign_key_check"); n != 0 {
		t.Errorf("%d foreign key violations", n)
	}
	checkPrompts(t, db)
	for q, want := range map[string]bool{
		"SELECT count(*) > 0 FROM sessions WHERE system_prompt_hash IS NULL":                                    true,
		"SELECT count(*) > 0 FROM sessions WHERE last_activity_at IS NOT NULL":                                  true,
		"SELECT count(*) FROM sessions WHERE last_activity_at > 1784194200.25 OR last_activity_at < started_at": false,
		"SELECT count(*) > 0 FROM sessions WHERE title IS NOT NULL AND title_source = 'user'":                   true,
		"SELECT count(*) FROM sessions WHERE (title IS NULL) != (title_source IS NULL)":                         false,
		"SELECT count(*) > 0 FROM session_turn_leases WHERE expires_at >= 1784194200.25":                        true,
		"SELECT count(*) > 0 FROM session_turn_leases WHERE expires_at < 1784194200.25":                         true,
		"SELECT count(*) > 0 FROM gateway_hygiene_state WHERE failure_streak BETWEEN 1 AND 3":                   true,
		"SELECT value = '1' FROM state_meta WHERE key = 'fts_storage_version'":                                  true,
	} {
		if got := scalar[bool](t, db, q); got != want {
			t.Errorf("%s = %v, want %v", q, got, want)
		}
	}
	checkEntryOrder(t, home, db)

	r0715, _ := lookupGeneration("r0715")
	old := tinyHome(t, r0715, 11)
	q := "SELECT group_concat(id || ':' || source || ':' || message_count || ':' || coalesce(ended_at, ''), ',') FROM (SELECT * FROM sessions ORDER BY id)"
	if x, y := scalar[string](t, db, q), scalar[string](t, openRO(t, filepath.Join(old, "state.db")), q); x != y {
		t.Error("the r0817 home's sessions differ from the r0715 home's of the same flags")
	}
}

// checkPrompts checks the system_prompts rows: each keyed by the SHA-256 of
// its text, some shared by several sessions, some of one session, some of
// none.
func checkPrompts(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query(`SELECT hash, prompt, (SELECT count(*) FROM sessions WHERE system_prompt_hash = hash) FROM system_prompts`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	refs := map[string]int{} // "shared", "own", "none"
	for rows.Next() {
		var h, text string
		var n int
		if err := rows.Scan(&h, &text, &n); err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256([]byte(text)); hex.EncodeToString(sum[:]) != h {
			t.Errorf("prompt %s: hash is not the SHA-256 of its text", h)
		}
		switch {
		case n > 1:
			refs["shared"]++
		case n == 1:
			refs["own"]++
		default:
			refs["none"]++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if refs["shared"] == 0 || refs["own"] == 0 || refs["none"] == 0 {
		t.Errorf("prompts by references: %v; want shared, own and unreferenced ones", refs)
	}
}

// checkEntryOrder checks that every entry of sessions.json and every
// gateway_routing entry_json has the fields of the r0817 fixture's entries in
// the same order (model_override and unknown fields aside) and the four
// r0817 fields with their fresh values.
func checkEntryOrder(t *testing.T, home string, db *sql.DB) {
	t.Helper()
	g, _ := lookupGeneration("r0817")
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", g.Full, "home", "sessions", "sessions.json"))
	if err != nil {
		t.Fatal(err)
	}
	entries := orderedEntries(t, fixture)
	if len(entries) == 0 {
		t.Fatal("the fixture's sessions.json has no entries")
	}
	want := entries[0].keys
	check := func(where string, e orderedEntry) {
		var keys []string
		for _, k := range e.keys {
			if k != "model_override" && k != "x_sessionctl_test_note" && k != "legacy_counter" {
				keys = append(keys, k)
			}
		}
		if !reflect.DeepEqual(keys, want) {
			t.Fatalf("%s: fields %v, want %v", where, keys, want)
		}
		for k, v := range map[string]string{"metadata": "{}", "active_turn_token": "null", "active_turn_started_at": "null", "prev_session_id": "null"} {
			if got := string(e.vals[k]); got != v {
				t.Fatalf("%s: %s = %s, want %s", where, k, got, v)
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join(home, "sessions", "sessions.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range orderedEntries(t, doc) {
		check("sessions.json", e)
	}
	rows, err := db.Query("SELECT entry_json FROM gateway_routing")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var j string
		if err := rows.Scan(&j); err != nil {
			t.Fatal(err)
		}
		check("gateway_routing", orderedObject(t, json.NewDecoder(strings.NewReader(j))))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// orderedEntry is one JSON object's keys in document order and its
// compacted raw values.
type orderedEntry struct {
	keys []string
	vals map[string]json.RawMessage
}

// orderedEntries returns the entries (non-"_" members) of a sessions.json
// document in document order.
func orderedEntries(t *testing.T, doc []byte) []orderedEntry {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var out []orderedEntry
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(k.(string), "_") {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
			continue
		}
		out = append(out, orderedObject(t, dec))
	}
	return out
}

// orderedObject reads the next value of dec, an object, keeping its key
// order.
func orderedObject(t *testing.T, dec *json.Decoder) orderedEntry {
	t.Helper()
	if d, err := dec.Token(); err != nil || d != json.Delim('{') {
		t.Fatalf("want an object, got %v (%v)", d, err)
	}
	e := orderedEntry{vals: map[string]json.RawMessage{}}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			t.Fatal(err)
		}
		e.keys = append(e.keys, k.(string))
		e.vals[k.(string)] = c.Bytes()
	}
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	return e
}
