package statedb

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"
)

// Ids of the stale_race family, in every fixture generation: the parent ended by compression,
// its one child started before the parent ended (so the v11 rule does not follow it; the v17
// rule does).
const (
	raceParent = "20260712_190154_5c722086"
	raceChild  = "20260713_005243_eb1a28"
	chainStart = "20260713_083008_9c35f8c3" // stale_chain: two hops, every rule agrees
	chainTip   = "20260713_221054_f44293"
)

// tipCase is one lineage planted in a fixture database and the id each rule resolves its
// start to.
type tipCase struct {
	name  string
	setup string // INSERTs, foreign keys off
	start string
	want  map[TipRule]string
}

// tipCases: the expected ids are the upstream walks' results.
//   - TipNone (r0418, cb4addaca): hermes_state.py has no get_compression_tip; the id stays.
//   - TipV11 (r0506 3b750715a, r0525 3914089d5, hermes_state.py get_compression_tip): 100
//     steps, no record of the ids seen, no stop at the empty id; the caller's `tip or id`
//     (hermes_cli/main.py) turns an empty result into the starting id.
//   - TipV17 (r0703 52d0d671e, r0715 c2a3b9ce5, hermes_state.py get_compression_tip): stops
//     at a falsy child id or one already in `seen`, returning where it stands.
var tipCases = []tipCase{
	{"self-parent", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('self', 'cli', 50, 50, 'compression', 'self')`, "self",
		map[TipRule]string{TipNone: "self", TipV11: "self", TipV17: "self"}},
	// two sessions continuing each other: 100 steps bring the v11 walk back to the start
	{"two-cycle", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('cy_a', 'cli', 50, 50, 'compression', 'cy_b'), ('cy_b', 'cli', 50, 50, 'compression', 'cy_a')`, "cy_a",
		map[TipRule]string{TipNone: "cy_a", TipV11: "cy_a", TipV17: "cy_b"}},
	// three: 100 = 33*3 + 1 steps leave the v11 walk one along
	{"three-cycle", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('tr_a', 'cli', 50, 50, 'compression', 'tr_c'), ('tr_b', 'cli', 50, 50, 'compression', 'tr_a'),
		       ('tr_c', 'cli', 50, 50, 'compression', 'tr_b')`, "tr_a",
		map[TipRule]string{TipNone: "tr_a", TipV11: "tr_b", TipV17: "tr_c"}},
	// a chain ending in a child with id '': v11 reaches '' and its caller falls back to the
	// start; v17 stops before it
	{"empty-id-tip", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('em_a', 'cli', 10, 20, 'compression', NULL), ('em_b', 'cli', 30, 40, 'compression', 'em_a'),
		       ('', 'cli', 50, NULL, NULL, 'em_b')`, "em_a",
		map[TipRule]string{TipNone: "em_a", TipV11: "em_a", TipV17: "em_b"}},
	// '' in the middle of a chain: v11 walks through it, v17 stops before it
	{"empty-id-link", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('md_a', 'cli', 10, 20, 'compression', NULL), ('', 'cli', 30, 40, 'compression', 'md_a'),
		       ('md_c', 'cli', 50, NULL, NULL, '')`, "md_a",
		map[TipRule]string{TipNone: "md_a", TipV11: "md_c", TipV17: "md_a"}},
}

// TestTipRulePerGeneration: each generation's database resolves cycles and empty ids with
// its own runtime's rule (TipRuleForSchema of its schema_version).
func TestTipRulePerGeneration(t *testing.T) {
	wantRule := map[string]TipRule{"r0418-cb4addaca": TipNone, "r0506-3b750715a": TipV11,
		"r0525-3914089d5": TipV11, "r0703-52d0d671e": TipV17, "r0715-c2a3b9ce5": TipV17}
	for _, g := range generations {
		for _, c := range tipCases {
			t.Run(g.name+"/"+c.name, func(t *testing.T) {
				path := copyDB(t, g.name)
				raw := rawDB(t, path)
				mustExec(t, raw, "PRAGMA foreign_keys = OFF")
				mustExec(t, raw, c.setup)
				db := openRO(t, path)
				rule := TipRuleForSchema(db.Schema().Version)
				if rule != wantRule[g.name] {
					t.Fatalf("rule %d, want %d", rule, wantRule[g.name])
				}
				got, err := db.CompressionTip(context.Background(), c.start, rule)
				if err != nil || got != c.want[rule] {
					t.Errorf("tip(%q) = %q, %v; want %q", c.start, got, err, c.want[rule])
				}
				// the fixture's own chain resolves as before
				if got, err := db.CompressionTip(context.Background(), chainStart, rule); err != nil || (rule != TipNone && got != chainTip) {
					t.Errorf("stale_chain tip = %q, %v; want %q", got, err, chainTip)
				}
			})
		}
	}
}

// TestMalformedModelConfigPerGeneration: a model_config json_extract cannot read, on the
// child of a compression-ended row, is one row's problem. Under the v17 rule the lookup
// through its parent raises (hermes_state.py get_compression_tip's json_extract, 52d0d671e,
// c2a3b9ce5) and the gateway keeps the starting id (gateway/session.py
// _compression_tip_for_session_id catches every exception); the v11 rule never reads the
// column (3b750715a, 3914089d5). Every other lookup goes on, and the database is not called
// corrupt.
func TestMalformedModelConfigPerGeneration(t *testing.T) {
	for _, g := range generations {
		for _, value := range []string{"'{bad'", "''", "'[1,'"} {
			t.Run(g.name+"/"+value, func(t *testing.T) {
				path := copyDB(t, g.name)
				mustExec(t, rawDB(t, path), "UPDATE sessions SET model_config = "+value+" WHERE id = ?", raceChild)
				db := openRO(t, path)
				ctx := context.Background()
				rule := TipRuleForSchema(db.Schema().Version)
				got, err := db.CompressionTip(ctx, raceParent, rule)
				switch rule {
				case TipV17:
					if !errors.Is(err, ErrTipLookupRaises) || errors.Is(err, ErrCorrupt) || got != raceParent {
						t.Errorf("tip(stale_race) = %q, %v; want %q and ErrTipLookupRaises", got, err, raceParent)
					}
				default: // TipNone keeps the id; v11 does not follow a child started before its parent ended
					if err != nil || got != raceParent {
						t.Errorf("tip(stale_race) = %q, %v; want %q", got, err, raceParent)
					}
				}
				if got, err := db.CompressionTip(ctx, chainStart, rule); err != nil || (rule != TipNone && got != chainTip) {
					t.Errorf("stale_chain tip = %q, %v; want %q", got, err, chainTip)
				}
				bad, err := db.BadModelConfigs(ctx)
				if err != nil || len(bad) != 1 || bad[0].ID != raceChild || !bad[0].ParentCompression ||
					bad[0].ParentID == nil || *bad[0].ParentID != raceParent {
					t.Errorf("BadModelConfigs = %+v, %v; want %s under a compression-ended parent", bad, err, raceChild)
				}
			})
		}
	}
}

// TestBadModelConfigsOnlyUnreadable: values json_extract reads (JSON5, numbers, NULL, a blob
// it takes as JSONB) are not listed; the list is exactly what the lookup raises on.
func TestBadModelConfigsOnlyUnreadable(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	raw := rawDB(t, path)
	for _, v := range []string{"'{a:1}'", "5", "NULL", "x'00'", "' {\"_branched_from\": 1} '"} {
		mustExec(t, raw, "UPDATE sessions SET model_config = "+v+" WHERE id = ?", raceChild)
		db := openRO(t, path)
		bad, err := db.BadModelConfigs(context.Background())
		if err != nil || len(bad) != 0 {
			t.Errorf("%s: BadModelConfigs = %+v, %v; want none", v, bad, err)
		}
		if _, err := db.CompressionTip(context.Background(), raceParent, TipV17); err != nil {
			t.Errorf("%s: tip: %v", v, err)
		}
		_ = db.Close()
	}
}

// TestMissingVersionRowPerGeneration (issue 17 item 13): with schema_version emptied, each
// generation is recognised from its tables and columns and given the version its runtime
// inserts on open (SessionDB._init_schema: `if row is None: INSERT … SCHEMA_VERSION`, at
// cb4addaca 6, 3b750715a 11, 3914089d5 13, 52d0d671e 17, c2a3b9ce5 21); the repairs run as
// on the untouched fixture, and the row stays absent (sessionctl never writes it).
func TestMissingVersionRowPerGeneration(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			path := copyDB(t, g.name)
			raw := rawDB(t, path)
			mustExec(t, raw, "DELETE FROM schema_version")
			db := openWrite(t, path)
			s := db.Schema()
			if s.Version != g.version || !s.VersionMissing || !s.Known || s.Newer {
				t.Fatalf("schema %d missing=%v known=%v newer=%v; want %d read from the layout", s.Version, s.VersionMissing, s.Known, s.Newer, g.version)
			}
			if TipRuleForSchema(s.Version) != TipRuleForSchema(g.version) {
				t.Errorf("tip rule differs from the fixture's")
			}
			if g.version >= 7 { // r0418 has neither repair
				if fin := finalize(t, db, fixtureNow); len(fin.Changes) == 0 {
					t.Error("finalize changed nothing")
				}
				if pr := prune(t, db, fixtureNow); len(pr.Deleted) != 2 {
					t.Errorf("prune deleted %v, want the fixture's two ghosts", pr.Deleted)
				}
			}
			var n int
			if err := raw.QueryRow("SELECT count(*) FROM schema_version").Scan(&n); err != nil || n != 0 {
				t.Errorf("schema_version rows = %d, %v; want none", n, err)
			}
		})
	}
	// a NULL version is no version: the runtime's `current_version < 10` raises on it
	path := copyDB(t, "r0525-3914089d5")
	raw := rawDB(t, path)
	mustExec(t, raw, "DROP TABLE schema_version")
	mustExec(t, raw, "CREATE TABLE schema_version (version INTEGER)")
	mustExec(t, raw, "INSERT INTO schema_version VALUES (NULL)")
	if _, err := OpenReadOnly(context.Background(), path); !errors.Is(err, ErrCorrupt) {
		t.Errorf("NULL schema_version: %v, want ErrCorrupt", err)
	}
}

// TestLayoutVersionMarkers: each generation's first-version marker decides, newest first.
func TestLayoutVersionMarkers(t *testing.T) {
	cols := func(names ...string) map[string]bool { return toSet(names) }
	cases := []struct {
		s    Schema
		want int
	}{
		{Schema{Tables: cols("sessions", "messages"), SessionColumns: cols("id"), MessageColumns: cols("id")}, 6},
		{Schema{Tables: cols("sessions"), MessageColumns: cols("reasoning_content")}, 11},
		{Schema{Tables: cols("sessions"), SessionColumns: cols("api_call_count"), MessageColumns: cols("reasoning_content", "platform_message_id")}, 13},
		{Schema{Tables: cols("sessions", "compression_locks"), SessionColumns: cols("session_key")}, 17},
		{Schema{Tables: cols("sessions", "gateway_routing")}, 21},
	}
	for _, c := range cases {
		if got := LayoutVersion(c.s); got != c.want {
			t.Errorf("LayoutVersion(%v / %v / %v) = %d, want %d", c.s.Tables, c.s.SessionColumns, c.s.MessageColumns, got, c.want)
		}
	}
}

// The fixture's two prunable ghosts (ghost_old2, ghost_old1), in every generation from r0506.
var fixtureGhosts = []string{"20260628_040921_e394e0", "20260702_210131_8d7ee4"}

// TestGhostCyclesPerGeneration (issue 17 item 9): ghosts in a parent cycle are deleted as the
// runtime's single `DELETE FROM sessions WHERE id IN (…)` deletes them, its foreign key on
// parent_session_id checked when the statement ends (hermes_state.py
// prune_empty_ghost_sessions, identical at 3b750715a, 3914089d5, 52d0d671e and c2a3b9ce5;
// `PRAGMA foreign_keys=ON` in SessionDB.__init__): a ghost that is its own parent, two ghosts
// parenting each other, a ghost parenting a ghost. A cycle with a child that stays is kept
// whole. In one transaction or in one-row batches, and restored exactly from the changes.
func TestGhostCyclesPerGeneration(t *testing.T) {
	const ghost = `INSERT INTO sessions (id, source, started_at, ended_at, parent_session_id) VALUES `
	cases := []struct {
		name         string
		setup        string
		deleted      []string // besides the fixture's two ghosts, oldest first
		kept         []string
		familyOfRows int // the most rows one family holds (a batch of 1 takes it whole)
	}{
		{"self-parent", ghost + `('g_self', 'tui', 1782000000, 1782000100, 'g_self')`,
			[]string{"g_self"}, nil, 1},
		{"two-cycle", ghost + `('g_a', 'tui', 1782000000, 1782000100, 'g_b'), ('g_b', 'tui', 1782000001, 1782000100, 'g_a')`,
			[]string{"g_a", "g_b"}, nil, 2},
		{"three-cycle", ghost + `('t_a', 'tui', 1782000000, 1782000100, 't_c'), ('t_b', 'tui', 1782000001, 1782000100, 't_a'),
			('t_c', 'tui', 1782000002, 1782000100, 't_b')`, []string{"t_a", "t_b", "t_c"}, nil, 3},
		{"chain", ghost + `('p_a', 'tui', 1782000000, 1782000100, NULL), ('p_b', 'tui', 1782000001, 1782000100, 'p_a')`,
			[]string{"p_a", "p_b"}, nil, 2},
		// the runtime's DELETE would fail on k_cli: the cycle stays (ghost.has-children)
		{"cycle-with-kept-child", ghost + `('k_a', 'tui', 1782000000, 1782000100, 'k_b'), ('k_b', 'tui', 1782000001, 1782000100, 'k_a'),
			('k_cli', 'cli', 1782000002, NULL, 'k_a')`, nil, []string{"k_a", "k_b"}, 1},
	}
	for _, g := range opGenerations() {
		for _, c := range cases {
			for _, maxRows := range []int{0, 1} {
				t.Run(fmt.Sprintf("%s/%s/batch%d", g.name, c.name, maxRows), func(t *testing.T) {
					path := copyDB(t, g.name)
					raw := rawDB(t, path)
					mustExec(t, raw, "PRAGMA foreign_keys = OFF")
					mustExec(t, raw, c.setup)
					before := typedDump(t, raw, "sessions") + typedDump(t, raw, "state_meta")
					db := openWrite(t, path)
					ctx := context.Background()
					cands, err := db.GhostCandidates(ctx, fixtureNow, DefaultGhostMinAge)
					if err != nil {
						t.Fatal(err)
					}
					var among, kept []string
					for _, gh := range cands {
						if gh.Kept {
							kept = append(kept, gh.ID)
						} else {
							among = append(among, gh.ID)
						}
					}
					if !reflect.DeepEqual(kept, c.kept) {
						t.Errorf("plan keeps %v, want %v", kept, c.kept)
					}
					var deleted, keptRun []string
					var changes []RowChange
					for b := (Batch{MaxRows: maxRows, Among: among}); len(b.Among) > 0; {
						res, err := db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, b, nil)
						if err != nil {
							t.Fatal(err)
						}
						if maxRows > 0 && len(res.Deleted) > max(maxRows, c.familyOfRows) {
							t.Errorf("a batch of %d deleted %v", maxRows, res.Deleted)
						}
						deleted, keptRun = append(deleted, res.Deleted...), append(keptRun, res.Kept...)
						changes = append(changes, res.Changes...)
						if len(res.Deleted) > 0 {
							changes = append(changes, res.Latch)
						}
						b.Among = res.Remaining
					}
					want := append(append([]string{}, c.deleted...), fixtureGhosts...)
					sort.Strings(deleted)
					sort.Strings(want)
					if !reflect.DeepEqual(deleted, want) || len(keptRun) != 0 {
						t.Errorf("deleted %v (kept %v), want %v", deleted, keptRun, want)
					}
					for _, id := range c.kept {
						if _, err := db.Session(ctx, id); err != nil {
							t.Errorf("kept ghost %s: %v", id, err)
						}
					}
					var restore []RowRestore
					for i := len(changes) - 1; i >= 0; i-- { // newest first, as undo does batches
						restore = append(restore, changes[i].Undo())
					}
					if _, _, err := db.RestoreRows(ctx, restore); err != nil {
						t.Fatalf("restore: %v", err)
					}
					if after := typedDump(t, raw, "sessions") + typedDump(t, raw, "state_meta"); after != before {
						t.Error("restore did not bring every row back exactly")
					}
				})
			}
		}
	}
}

// finalizedByRuntime lists the sessions the runtime's finalize ended in a generation's
// fixture (expected/finalize-orphans.json against before.json), sorted.
func finalizedByRuntime(t testing.TB, gen string) []string {
	before, after := loadExpected(t, gen, "before"), loadExpected(t, gen, "finalize-orphans")
	var out []string
	for id, row := range after.Sessions {
		if row["end_reason"] == EndReasonOrphanedCompression && before.Sessions[id]["end_reason"] == nil {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// TestTextWhereNumberPerGeneration (issue 17 item 10): TEXT in started_at, ended_at,
// api_call_count and compression_locks.expires_at is read as stored and compared as SQLite
// compares it (TEXT after every number), so the repairs take exactly what the runtime's SQL
// takes (hermes_state.py prune_empty_ghost_sessions and finalize_orphaned_compression_sessions
// at 3b750715a, 3914089d5, 52d0d671e, c2a3b9ce5; r0418 cb4addaca has neither):
//   - a ghost ended 'yesterday' is ended (ended_at IS NOT NULL): pruned;
//   - a ghost started 'long ago' is never older than the cutoff: kept;
//   - an orphan with api_call_count 'n/a' never has 0 calls: not finalized;
//   - a lock expiring 'never' is live (expires_at >= now): finalize-orphans skips its session.
//
// Every value comes back exactly on restore.
func TestTextWhereNumberPerGeneration(t *testing.T) {
	const (
		orphanNA     = "20260621_182357_4cea33" // orphan1's continuation
		orphanLocked = "20260622_125201_1af486" // orphan_expired_lock's continuation
	)
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			path := copyDB(t, g.name)
			raw := rawDB(t, path)
			mustExec(t, raw, `INSERT INTO sessions (id, source, started_at, ended_at) VALUES
				('g_text', 'tui', 1782000000, 'yesterday'), ('g_textstart', 'tui', 'long ago', 1782000100),
				('s_blob', 'cli', x'0102', NULL)`)
			db0 := openRO(t, path)
			hasCalls, hasLocks := db0.Schema().SessionColumns["api_call_count"], db0.Schema().HasCompressionLocks
			_ = db0.Close()
			if hasCalls {
				mustExec(t, raw, "UPDATE sessions SET api_call_count = 'n/a' WHERE id = ?", orphanNA)
			}
			if hasLocks {
				mustExec(t, raw, "UPDATE compression_locks SET expires_at = 'never' WHERE session_id = ?", orphanLocked)
			}
			dump := func() string {
				var out string
				for _, table := range []string{"sessions", "state_meta", "compression_locks"} {
					var n int
					if err := raw.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = ?", table).Scan(&n); err != nil {
						t.Fatal(err)
					}
					if n > 0 {
						out += typedDump(t, raw, table)
					}
				}
				return out
			}
			before := dump()
			db := openWrite(t, path)
			ctx := context.Background()

			// every read goes on; the TEXT and BLOB times sort after every number
			var order []string
			if err := db.EachSession(ctx, SessionFilter{}, func(s Session) error {
				order = append(order, s.ID)
				return nil
			}); err != nil {
				t.Fatalf("EachSession: %v", err)
			}
			if len(order) < 2 || order[0] != "s_blob" || order[1] != "g_textstart" {
				t.Errorf("newest first: %v…, want s_blob (a BLOB) then g_textstart (TEXT)", order[:min(3, len(order))])
			}
			var byID []string
			if err := db.EachSession(ctx, SessionFilter{IDs: []string{"g_text", "g_textstart", "s_blob", orphanNA}}, func(s Session) error {
				byID = append(byID, s.ID)
				return nil
			}); err != nil || !reflect.DeepEqual(byID, []string{"s_blob", "g_textstart", orphanNA, "g_text"}) {
				t.Errorf("by id: %v, %v", byID, err)
			}
			gt, err := db.Session(ctx, "g_text")
			if err != nil || gt.Open() || !gt.Ended.Equal(TextValue("yesterday")) || gt.EndedAt != nil {
				t.Errorf("g_text: %+v, %v; want ended 'yesterday'", gt, err)
			}
			odd, err := db.OddRows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wantOdd := map[string]bool{"sessions/g_text/ended_at": true, "sessions/g_textstart/started_at": true, "sessions/s_blob/started_at": true}
			if hasCalls {
				wantOdd["sessions/"+orphanNA+"/api_call_count"] = true
			}
			if hasLocks {
				wantOdd["compression_locks/"+orphanLocked+"/expires_at"] = true
			}
			gotOdd := map[string]bool{}
			for _, o := range odd {
				gotOdd[o.Table+"/"+o.ID+"/"+o.Column] = true
			}
			if !reflect.DeepEqual(gotOdd, wantOdd) {
				t.Errorf("OddRows %v, want %v", gotOdd, wantOdd)
			}
			if g.version < 7 {
				return // r0418: no repairs
			}
			var changes []RowChange
			pr := prune(t, db, fixtureNow)
			want := append([]string{"g_text"}, fixtureGhosts...)
			sort.Strings(want)
			deleted := append([]string{}, pr.Deleted...)
			sort.Strings(deleted)
			if !reflect.DeepEqual(deleted, want) {
				t.Errorf("pruned %v, want %v", deleted, want)
			}
			changes = append(changes, pr.Changes...)
			changes = append(changes, pr.Latch)
			fin := finalize(t, db, fixtureNow)
			var wantFin []string
			for _, id := range finalizedByRuntime(t, g.name) {
				if id != orphanNA && !(hasLocks && id == orphanLocked) {
					wantFin = append(wantFin, id)
				}
			}
			gotFin := changedIDs(fin.Changes, "sessions")
			sort.Strings(gotFin)
			if !reflect.DeepEqual(gotFin, wantFin) {
				t.Errorf("finalized %v, want %v", gotFin, wantFin)
			}
			if hasLocks && !slices.ContainsFunc(fin.Locked, func(o Orphan) bool { return o.ID == orphanLocked && o.LiveLock.Expires.Equal(TextValue("never")) }) {
				t.Errorf("locked %+v, want %s with its 'never' lock", fin.Locked, orphanLocked)
			}
			changes = append(changes, fin.Changes...)
			changes = append(changes, fin.Latch)
			var restore []RowRestore
			for i := len(changes) - 1; i >= 0; i-- {
				restore = append(restore, changes[i].Undo())
			}
			if _, _, err := db.RestoreRows(ctx, restore); err != nil {
				t.Fatalf("restore: %v", err)
			}
			if after := dump(); after != before {
				t.Error("restore did not bring every value back exactly")
			}
		})
	}
}

// TestCompareOrdersAsSQLite: Compare agrees with SQLite's own ordering of mixed classes.
func TestCompareOrdersAsSQLite(t *testing.T) {
	vals := []Value{NullValue(), IntValue(-3), RealValue(-2.5), IntValue(2), RealValue(2.0), RealValue(2.5),
		IntValue(9007199254740993), RealValue(9007199254740992), TextValue(""), TextValue("a"), TextValue("b"),
		BlobValue(nil), BlobValue([]byte{0}), BlobValue([]byte{1})}
	db := rawDB(t, filepath.Join(t.TempDir(), "c.db"))
	for _, a := range vals {
		for _, b := range vals {
			var want int
			if err := db.QueryRow("SELECT CASE WHEN ?1 IS ?2 THEN 0 WHEN ?1 IS NULL THEN -1 WHEN ?2 IS NULL THEN 1 WHEN ?1 < ?2 THEN -1 ELSE 1 END",
				a.arg(), b.arg()).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if got := Compare(a, b); got != want {
				t.Errorf("Compare(%s, %s) = %d, SQLite says %d", a.Literal(), b.Literal(), got, want)
			}
		}
	}
}
