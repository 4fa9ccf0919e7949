package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestTotalsAndSession(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	db := openRO(t, path)
	ctx := context.Background()
	tot, err := db.Totals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exp := loadExpected(t, "r0715-c2a3b9ce5", "before")
	var msgs int64
	for _, s := range exp.Sessions {
		msgs += int64(s["message_count"].(float64))
	}
	if tot.Sessions != int64(len(exp.Sessions)) || tot.Open+tot.Ended != tot.Sessions || tot.Messages != msgs {
		t.Errorf("totals %+v, want %d sessions, %d messages", tot, len(exp.Sessions), msgs)
	}
	s, err := db.Session(ctx, "20260621_182357_4cea33")
	if err != nil {
		t.Fatal(err)
	}
	if s.MessageCount != 4 || s.ParentID == nil || *s.ParentID != "20260616_194830_db33bd" ||
		s.APICallCount == nil || *s.APICallCount != 0 || !s.Open() {
		t.Errorf("session = %+v", s)
	}
	if _, err := db.Session(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing session: %v", err)
	}
	old := openRO(t, copyDB(t, "r0418-cb4addaca"))
	s, err = old.Session(ctx, "20260621_182357_4cea33")
	if err != nil || s.APICallCount != nil || s.SessionKey != nil {
		t.Errorf("v6 session = %+v, %v (api_call_count and session_key must be nil)", s, err)
	}
}

func TestResolveID(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	mustExec(t, rawDB(t, path), `INSERT INTO sessions (id, source, started_at) VALUES
		('a%b_1', 'cli', 1), ('a%b_2', 'cli', 2), ('axb_3', 'cli', 3)`)
	db := openRO(t, path)
	ctx := context.Background()
	cases := []struct {
		prefix, want string
		err          error
	}{
		{"20260621_182357_4cea33", "20260621_182357_4cea33", nil},
		{"20260621_1823", "20260621_182357_4cea33", nil},
		{"202606", "", ErrAmbiguous},
		{"zzz", "", ErrNotFound},
		{"a%b_", "", ErrAmbiguous},
		{"a%b_1", "a%b_1", nil},
		{"a_b", "", ErrNotFound}, // "_" is literal: does not match "a%b…" or "axb…"
		{"ax", "axb_3", nil},
	}
	for _, c := range cases {
		got, err := db.ResolveID(ctx, c.prefix)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("ResolveID(%q) = %q, %v; want %q, %v", c.prefix, got, err, c.want, c.err)
		}
	}
}

func TestLineage(t *testing.T) {
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	ctx := context.Background()
	anc, err := db.Ancestors(ctx, "20260713_221054_f44293")
	if err != nil {
		t.Fatal(err)
	}
	if ids := sessionIDs(anc); !reflect.DeepEqual(ids, []string{"20260713_181054_d082a9", "20260713_083008_9c35f8c3"}) {
		t.Errorf("ancestors = %v", ids)
	}
	kids, err := db.Children(ctx, "20260712_232151_8c6acb7b")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"20260713_121336_9d5001", "20260713_122336_478460", "20260713_182336_7f2d5f", "20260713_202336_d490ef"}
	if ids := sessionIDs(kids); !reflect.DeepEqual(ids, want) {
		t.Errorf("children = %v, want %v", ids, want)
	}
}

func sessionIDs(ss []Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

// addSessions inserts n extra sessions (two with equal started_at per pair, to exercise the
// id tie-break) in one transaction.
func addSessions(t testing.TB, raw *sql.DB, n int, source string) {
	t.Helper()
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := tx.Exec("INSERT INTO sessions (id, source, started_at, ended_at) VALUES (?, ?, ?, ?)",
			fmt.Sprintf("gen_%06d", i), source, 1.7e9+float64(i/2), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestEachSessionPaging(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	addSessions(t, rawDB(t, path), 2501, "gen")
	db := openRO(t, path)
	ctx := context.Background()
	collect := func(f SessionFilter) []Session {
		var out []Session
		if err := db.EachSession(ctx, f, func(s Session) error {
			// Querying from inside the callback must not deadlock on the one connection.
			if _, err := db.Session(ctx, s.ID); err != nil {
				return err
			}
			out = append(out, s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := collect(SessionFilter{Source: "gen"})
	if len(all) != 2501 {
		t.Fatalf("got %d sessions, want 2501", len(all))
	}
	sorted := sort.SliceIsSorted(all, func(i, j int) bool {
		a, b := all[i], all[j]
		return a.StartedAt > b.StartedAt || (a.StartedAt == b.StartedAt && a.ID > b.ID)
	})
	if !sorted || all[0].ID != "gen_002500" || all[2500].ID != "gen_000000" {
		t.Errorf("order wrong: sorted=%v first=%s last=%s", sorted, all[0].ID, all[2500].ID)
	}
	if got := collect(SessionFilter{Source: "gen", Limit: 1500}); len(got) != 1500 || got[1499].ID != all[1499].ID {
		t.Errorf("limit 1500: %d sessions", len(got))
	}
	if got := collect(SessionFilter{IDs: []string{"gen_000007", "20260621_182357_4cea33", "nope"}, Open: true}); len(got) != 2 {
		t.Errorf("ids+open: %v", sessionIDs(got))
	}
	if got := collect(SessionFilter{Ended: true, Source: "tui"}); len(got) == 0 || got[0].EndedAt == nil {
		t.Errorf("ended tui: %v", sessionIDs(got))
	}
	stop := errors.New("stop")
	n := 0
	err := db.EachSession(ctx, SessionFilter{}, func(Session) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("callback error: %v after %d calls", err, n)
	}
}

func TestLocksMetaRouting(t *testing.T) {
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	ctx := context.Background()
	locks, err := db.CompressionLocks(ctx)
	if err != nil || len(locks) != 2 {
		t.Fatalf("locks = %v, %v", locks, err)
	}
	live, err := db.LiveCompressionLock(ctx, "20260622_053714_edd871", fixtureNow)
	if err != nil || live == nil || live.ExpiresAt < fixtureNow {
		t.Errorf("live lock = %+v, %v", live, err)
	}
	if l, err := db.LiveCompressionLock(ctx, "20260622_125201_1af486", fixtureNow); err != nil || l != nil {
		t.Errorf("expired lock reported live: %+v, %v", l, err)
	}
	if v, ok, err := db.Meta(ctx, "last_auto_prune"); err != nil || !ok || v != "1784086200.25" {
		t.Errorf("meta = %q %v %v", v, ok, err)
	}
	if _, ok, err := db.Meta(ctx, LatchPruneGhosts); err != nil || ok {
		t.Errorf("absent latch: ok=%v err=%v", ok, err)
	}
	const scope = "/home/hermes/fixtures/r0715-c2a3b9ce5/home/sessions"
	scopes, err := db.RoutingScopes(ctx)
	if err != nil || scopes[scope] == 0 {
		t.Fatalf("scopes = %v, %v", scopes, err)
	}
	rows, err := db.RoutingRows(ctx, scope)
	if err != nil || len(rows) != scopes[scope] || !json.Valid([]byte(rows[0].EntryJSON)) {
		t.Errorf("routing rows: %d, %v", len(rows), err)
	}
	old := openRO(t, copyDB(t, "r0418-cb4addaca"))
	if l, err := old.CompressionLocks(ctx); l != nil || err != nil {
		t.Errorf("v6 locks: %v %v", l, err)
	}
	if _, ok, err := old.Meta(ctx, "x"); ok || err != nil {
		t.Errorf("v6 meta: %v %v", ok, err)
	}
}

func TestUpdateRouting(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	db := openWrite(t, path)
	ctx := context.Background()
	const scope = "/home/hermes/fixtures/r0715-c2a3b9ce5/home/sessions"
	rows, err := db.RoutingRows(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	key := rows[0].Key
	if err := db.UpdateRoutingEntries(ctx, scope, map[string]string{key: `{"a": 1}`, "new:key": `{"b": 2}`}, fixtureNow); err != nil {
		t.Fatalf("update: %v", err)
	}
	after, _ := db.RoutingRows(ctx, scope)
	got := map[string]RoutingRow{}
	for _, r := range after {
		got[r.Key] = r
	}
	if len(after) != len(rows)+1 || got[key].EntryJSON != `{"a": 1}` || got[key].UpdatedAt != fixtureNow ||
		got["new:key"].EntryJSON != `{"b": 2}` || got[rows[1].Key] != rows[1] {
		t.Errorf("rows after update: %+v", got)
	}
	// A failure between the DB write and the commit (e.g. writing sessions.json) rolls back.
	boom := errors.New("mirror write failed")
	_, err = db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		if err := UpdateRoutingTx(ctx, tx, scope, map[string]string{key: `{"c": 3}`}, nil, fixtureNow+1); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if again, _ := db.RoutingRows(ctx, scope); !reflect.DeepEqual(again, after) {
		t.Error("failed transaction was not rolled back")
	}
	old := openWrite(t, copyDB(t, "r0703-52d0d671e"))
	if err := old.UpdateRoutingEntries(ctx, scope, map[string]string{"k": "{}"}, fixtureNow); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("v17 routing write: %v", err)
	}
}

func TestTranscriptFiles(t *testing.T) {
	dir := t.TempDir()
	id := "20260628_040921_e394e0"
	names := []string{id + ".json", id + ".jsonl", "request_dump_" + id + "_1.json", "request_dump_" + id + "_2.json",
		"session_" + id + ".json", "request_dump_" + id + "x_1.json", "weird[1]*.json", "request_dump_weird[1]*_1.json"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := TranscriptFiles(dir, []string{id, "weird[1]*", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{id + ".json", id + ".jsonl", "request_dump_" + id + "_1.json", "request_dump_" + id + "_2.json"}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if !reflect.DeepEqual(got[id], want) {
		t.Errorf("files = %v, want %v", got[id], want)
	}
	if len(got["weird[1]*"]) != 2 {
		t.Errorf("glob metacharacters: %v", got["weird[1]*"])
	}
	if len(got["absent"]) != 0 {
		t.Errorf("files for an absent id: %v", got["absent"])
	}
	if err := os.WriteFile(filepath.Join(dir, "sessions.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if files, err := TranscriptFiles(dir, []string{"sessions"}); err != nil || len(files["sessions"]) != 0 {
		t.Errorf("a session named \"sessions\" owns the routing index: %v, %v", files, err)
	}
	if files, err := TranscriptFiles(dir, []string{"../x"}); err != nil || len(files) != 0 {
		t.Errorf("path-like id: %v, %v", files, err)
	}
	if files, err := TranscriptFiles(filepath.Join(dir, "missing"), []string{id}); err != nil || len(files) != 0 {
		t.Errorf("missing dir: %v, %v", files, err)
	}
}

// TestTranscriptFilesUnsafeIDs: an id that is not a safe file name owns no file, even where
// the runtime's pattern would name one, and never keeps the other ids from their files.
func TestTranscriptFilesUnsafeIDs(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", MaxFileIDBytes+1)
	for _, n := range []string{".json", ".jsonl", "request_dump__1.json", "...json", "s1.jsonl", "request_dump_.._1.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "a"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	unsafe := []string{"", ".", "..", "a/b", "/x", "nul\x00id", long, "../s1"}
	for _, id := range unsafe {
		if UnsafeFileID(id) == "" {
			t.Errorf("UnsafeFileID(%q) = \"\"", id)
		}
	}
	for _, id := range []string{"s1", "weird[1]*", "a\\b", "-", "...", strings.Repeat("x", MaxFileIDBytes)} {
		if why := UnsafeFileID(id); why != "" {
			t.Errorf("UnsafeFileID(%q) = %q", id, why)
		}
	}
	got, err := TranscriptFiles(dir, append(unsafe, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string][]string{"s1": {filepath.Join(dir, "s1.jsonl")}}; !reflect.DeepEqual(got, want) {
		t.Errorf("files = %v, want %v", got, want)
	}
}

func TestValueJSONRoundTrip(t *testing.T) {
	vals := []Value{NullValue(), IntValue(math.MinInt64), IntValue(math.MaxInt64), RealValue(1784194200.25),
		RealValue(0.1 + 0.2), RealValue(math.Inf(-1)), RealValue(math.Copysign(0, -1)), TextValue("héllo"),
		TextValue("bad\xffutf8"), TextValue(""), BlobValue([]byte{0, 1, 255}), BlobValue([]byte{})}
	for _, v := range vals {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Value
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !back.Equal(v) {
			t.Errorf("%s decoded to %+v, want %+v", data, back, v)
		}
	}
	if IntValue(1).Equal(RealValue(1)) || TextValue("1").Equal(BlobValue([]byte("1"))) {
		t.Error("values of different storage classes compare equal")
	}
}

func TestQuickCheckAndExpiredLocks(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	db := openRO(t, path)
	ctx := context.Background()
	for _, deep := range []bool{false, true} {
		if problems, err := db.QuickCheck(ctx, deep); err != nil || len(problems) != 0 {
			t.Errorf("deep=%v: %v, %v", deep, problems, err)
		}
	}
	ids, err := db.OpenWithExpiredLock(ctx, fixtureNow)
	if err != nil || !reflect.DeepEqual(ids, []string{"20260622_125201_1af486"}) {
		t.Errorf("expired locks = %v, %v", ids, err)
	}
	if ids, err := openRO(t, copyDB(t, "r0525-3914089d5")).OpenWithExpiredLock(ctx, fixtureNow); ids != nil || err != nil {
		t.Errorf("v13: %v, %v", ids, err)
	}
}

// TestRoutingPage: pages of any size give EachRoutingEntry's rows in its order, also with a
// BLOB key (it sorts after every text key; the cursor keeps its type); RoutingKeysUnique tells
// a scope that holds a key twice.
func TestRoutingPage(t *testing.T) {
	ctx := context.Background()
	const scope = "/home/hermes/fixtures/r0715-c2a3b9ce5/home/sessions"
	path := copyDB(t, "r0715-c2a3b9ce5")
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	mustExec(t, raw, `UPDATE gateway_routing SET session_key = CAST(session_key AS BLOB) WHERE session_key = (SELECT min(session_key) FROM gateway_routing)`)
	db := openRO(t, path)
	var want []string
	if err := db.EachRoutingEntry(ctx, scope, func(key string, entry []byte) error {
		want = append(want, key+"="+string(entry))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 5, 17, 100} {
		var got []string
		var after *RoutingCursor
		for {
			next, err := db.RoutingPage(ctx, scope, after, limit, func(key string, entry []byte) error {
				got = append(got, key+"="+string(entry))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if next == nil {
				break
			}
			after = next
		}
		if len(want) < 10 || !slices.Equal(got, want) {
			t.Errorf("pages of %d: %d rows, EachRoutingEntry %d", limit, len(got), len(want))
		}
	}
	if unique, err := db.RoutingKeysUnique(ctx, scope); err != nil || !unique {
		t.Errorf("RoutingKeysUnique = %v, %v; want true", unique, err)
	}
	mustExec(t, raw, `CREATE TABLE g2 AS SELECT * FROM gateway_routing`)
	mustExec(t, raw, `DROP TABLE gateway_routing`)
	mustExec(t, raw, `ALTER TABLE g2 RENAME TO gateway_routing`)
	mustExec(t, raw, `INSERT INTO gateway_routing SELECT * FROM gateway_routing LIMIT 1`)
	if unique, err := openRO(t, path).RoutingKeysUnique(ctx, scope); err != nil || unique {
		t.Errorf("RoutingKeysUnique with a key twice = %v, %v; want false", unique, err)
	}
}

// TestRoutingTimes: the updated_at of the keys asked, by lookups or by one scan of the scope
// (past routingLookups keys), the same either way; a key without a row is left out.
func TestRoutingTimes(t *testing.T) {
	ctx := context.Background()
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	const scope = "/home/hermes/fixtures/r0715-c2a3b9ce5/home/sessions"
	rows, err := db.RoutingRows(ctx, scope)
	if err != nil || len(rows) == 0 {
		t.Fatalf("RoutingRows = %d rows, %v", len(rows), err)
	}
	keys, want := []string{"no such key"}, map[string]float64{}
	for _, r := range rows {
		keys, want[r.Key] = append(keys, r.Key), r.UpdatedAt
	}
	many := append([]string(nil), keys...)
	for len(many) <= routingLookups {
		many = append(many, fmt.Sprint("absent ", len(many)))
	}
	for _, ks := range [][]string{keys, many} {
		got, err := db.RoutingTimes(ctx, scope, ks)
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("RoutingTimes(%d keys) = %v, %v; want %v", len(ks), got, err, want)
		}
	}
}
