package statedb

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"
)

// opGenerations are the generations whose runtime has finalize, prune and a tip rule.
func opGenerations() []generation {
	return generations[1:]
}

func finalize(t testing.TB, db *DB, now float64) FinalizeResult {
	t.Helper()
	res, err := db.FinalizeOrphans(context.Background(), now, DefaultOrphanMinAge, Batch{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func prune(t testing.TB, db *DB, now float64) PruneResult {
	t.Helper()
	res, err := db.PruneGhosts(context.Background(), now, DefaultGhostMinAge, Batch{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func changedIDs(changes []RowChange, table string) []string {
	var out []string
	for _, c := range changes {
		if c.Table == table {
			out = append(out, c.Key["id"].Text)
		}
	}
	sort.Strings(out)
	return out
}

func TestFinalizeOrphansMatchesRuntime(t *testing.T) {
	want := map[string][]string{
		"r0506-3b750715a": {"20260621_182357_4cea33", "20260630_030359_a9da10"},
		"r0525-3914089d5": {"20260621_182357_4cea33", "20260630_030359_a9da10"},
		"r0703-52d0d671e": {"20260621_182357_4cea33", "20260622_125201_1af486", "20260630_030359_a9da10"},
		"r0715-c2a3b9ce5": {"20260621_182357_4cea33", "20260622_125201_1af486", "20260630_030359_a9da10"},
	}
	for _, g := range opGenerations() {
		t.Run(g.name, func(t *testing.T) {
			path := copyDB(t, g.name)
			res := finalize(t, openWrite(t, path), fixtureNow)
			if got := changedIDs(res.Changes, "sessions"); !reflect.DeepEqual(got, want[g.name]) {
				t.Errorf("finalized %v, want %v", got, want[g.name])
			}
			for _, c := range res.Changes {
				if r, _ := c.After.Get("end_reason"); r.Text != EndReasonOrphanedCompression {
					t.Errorf("%v after end_reason = %+v", c.Key, r)
				}
				if r, _ := c.Before.Get("ended_at"); r.Type != TypeNull {
					t.Errorf("%v before ended_at = %+v", c.Key, r)
				}
			}
			if res.Latch.Before != nil || res.Latch.After == nil {
				t.Errorf("latch images: %+v", res.Latch)
			}
			exp := loadExpected(t, g.name, "finalize-orphans")
			raw := rawDB(t, path)
			compareSessions(t, dumpSessions(t, raw, true), exp.Sessions)
			if got := readStateMeta(t, raw); !reflect.DeepEqual(got, exp.StateMeta) {
				t.Errorf("state_meta = %v, want %v", got, exp.StateMeta)
			}
		})
	}
}

func TestPruneGhostsMatchesRuntime(t *testing.T) {
	want := []string{"20260628_040921_e394e0", "20260702_210131_8d7ee4"}
	for _, g := range opGenerations() {
		t.Run(g.name, func(t *testing.T) {
			path := copyDB(t, g.name)
			res := prune(t, openWrite(t, path), fixtureNow)
			if !reflect.DeepEqual(res.Deleted, want) || !reflect.DeepEqual(changedIDs(res.Changes, "sessions"), want) {
				t.Errorf("deleted %v (changes %v), want %v", res.Deleted, changedIDs(res.Changes, "sessions"), want)
			}
			if len(res.Kept) != 0 {
				t.Errorf("kept %v", res.Kept)
			}
			exp := loadExpected(t, g.name, "prune-ghosts")
			raw := rawDB(t, path)
			compareSessions(t, dumpSessions(t, raw, true), exp.Sessions)
			if got := readStateMeta(t, raw); !reflect.DeepEqual(got, exp.StateMeta) {
				t.Errorf("state_meta = %v, want %v", got, exp.StateMeta)
			}
		})
	}
}

func candidateIDs(t *testing.T, db *DB, now float64) (orphans, ghosts map[string]bool) {
	t.Helper()
	ctx := context.Background()
	oc, err := db.FinalizeCandidates(ctx, now, DefaultOrphanMinAge)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := db.GhostCandidates(ctx, now, DefaultGhostMinAge)
	if err != nil {
		t.Fatal(err)
	}
	orphans, ghosts = map[string]bool{}, map[string]bool{}
	for _, o := range oc {
		orphans[o.ID] = true
	}
	for _, g := range gc {
		ghosts[g.ID] = true
	}
	return orphans, ghosts
}

func TestBoundariesAreStrict(t *testing.T) {
	const edge7d, edge24h = "20260709_093000_f0a38d", "20260715_093000_0c75d5"
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	orphans, ghosts := candidateIDs(t, db, fixtureNow)
	if orphans[edge7d] || ghosts[edge24h] {
		t.Errorf("rows exactly at the cutoff are candidates: orphan=%v ghost=%v", orphans[edge7d], ghosts[edge24h])
	}
	orphans, ghosts = candidateIDs(t, db, fixtureNow+1e-6)
	if !orphans[edge7d] || !ghosts[edge24h] {
		t.Errorf("rows 1 µs past the cutoff are not candidates: orphan=%v ghost=%v", orphans[edge7d], ghosts[edge24h])
	}
}

func TestFinalizeCandidatesCarryLiveLock(t *testing.T) {
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	cands, err := db.FinalizeCandidates(context.Background(), fixtureNow, DefaultOrphanMinAge)
	if err != nil {
		t.Fatal(err)
	}
	locked := map[string]bool{}
	for _, c := range cands {
		locked[c.ID] = c.LiveLock != nil
	}
	want := map[string]bool{"20260621_182357_4cea33": false, "20260622_125201_1af486": false,
		"20260622_053714_edd871": true, "20260630_030359_a9da10": false}
	if !reflect.DeepEqual(locked, want) {
		t.Errorf("candidates (id → live lock) = %v, want %v", locked, want)
	}
}

// TestFinalizeSelectsInsideTx: a scanning batch (no Among) chooses the candidates inside the
// write transaction, so a lock taken after planning is honoured (batches by id evaluate the
// predicate and the lock again: TestLaterBatchesCheckThePredicateAgain). The plan is read
// first; a compression then takes a lock on one of the planned sessions, committed before
// the batch starts, or while the batch waits for the write lock (after anything it could
// read before BEGIN IMMEDIATE). Either way the batch skips that session.
func TestFinalizeSelectsInsideTx(t *testing.T) {
	const nowLocked = "20260621_182357_4cea33"
	const holder = "pid=1:tid=1:agent=x:nonce=y"
	const insertLock = `INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)`
	for _, whileWaiting := range []bool{false, true} {
		name := "lock committed before the batch"
		if whileWaiting {
			name = "lock committed while the batch waits for the write lock"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			path := copyDB(t, "r0715-c2a3b9ce5")
			db := openWrite(t, path)
			plan, err := db.FinalizeCandidates(ctx, fixtureNow, DefaultOrphanMinAge)
			if err != nil {
				t.Fatal(err)
			}
			if i := slices.IndexFunc(plan, func(o Orphan) bool { return o.ID == nowLocked }); i < 0 || plan[i].LiveLock != nil {
				t.Fatalf("plan: %s is not an unlocked candidate", nowLocked)
			}

			conn, err := rawDB(t, path).Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			connExec := func(q string, args ...any) {
				t.Helper()
				if _, err := conn.ExecContext(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			connExec("BEGIN IMMEDIATE")
			connExec(insertLock, nowLocked, holder, fixtureNow-10, fixtureNow+600)
			if !whileWaiting {
				connExec("COMMIT")
			}
			type outcome struct {
				res FinalizeResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, Batch{}, nil)
				done <- outcome{res, err}
			}()
			if whileWaiting {
				time.Sleep(300 * time.Millisecond)
				select {
				case o := <-done:
					t.Fatalf("the batch did not wait for the write lock: %+v, %v", o.res.Changes, o.err)
				default:
				}
				connExec("COMMIT")
			}
			o := <-done
			if o.err != nil {
				t.Fatal(o.err)
			}
			locked := map[string]string{}
			for _, l := range o.res.Locked {
				locked[l.ID] = l.LiveLock.Holder
			}
			if locked[nowLocked] != holder || locked["20260622_053714_edd871"] == "" || len(locked) != 2 {
				t.Errorf("locked = %v, want %s (%s) and the fixture's live-locked candidate", locked, nowLocked, holder)
			}
			if got := changedIDs(o.res.Changes, "sessions"); !reflect.DeepEqual(got, []string{"20260622_125201_1af486", "20260630_030359_a9da10"}) {
				t.Errorf("finalized %v", got)
			}
			var ended sql.NullFloat64
			if err := rawDB(t, path).QueryRow("SELECT ended_at FROM sessions WHERE id = ?", nowLocked).Scan(&ended); err != nil || ended.Valid {
				t.Errorf("%s ended_at = %v, %v; want NULL", nowLocked, ended, err)
			}
		})
	}
}

func TestCompressionTipMatchesRepoint(t *testing.T) {
	for _, g := range opGenerations() {
		t.Run(g.name, func(t *testing.T) {
			db := openRO(t, copyDB(t, g.name))
			rule := TipRuleForSchema(db.Schema().Version)
			before, after := loadExpected(t, g.name, "before"), loadExpected(t, g.name, "repoint")
			if len(before.Routing) == 0 {
				t.Fatal("no routing entries in before.json")
			}
			for key, e := range before.Routing {
				tip, err := db.CompressionTip(context.Background(), e.SessionID, rule)
				if err != nil {
					t.Fatal(err)
				}
				if want := after.Routing[key].SessionID; tip != want {
					t.Errorf("%s: tip(%s) = %s, want %s", key, e.SessionID, tip, want)
				}
			}
		})
	}
}

func TestCompressionTipRules(t *testing.T) {
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	cases := []struct {
		id         string
		rule       TipRule
		want, role string
	}{
		{"20260712_190154_5c722086", TipV11, "20260712_190154_5c722086", "stale_race"},
		{"20260712_190154_5c722086", TipV17, "20260713_005243_eb1a28", "stale_race"},
		{"20260712_232151_8c6acb7b", TipV11, "20260713_202336_d490ef", "stale_siblings"},
		{"20260712_232151_8c6acb7b", TipV17, "20260713_122336_478460", "stale_siblings"},
		{"20260713_083008_9c35f8c3", TipV11, "20260713_221054_f44293", "stale_chain"},
		{"20260713_083008_9c35f8c3", TipV17, "20260713_221054_f44293", "stale_chain"},
		{"20260713_083008_9c35f8c3", TipNone, "20260713_083008_9c35f8c3", "no rule"},
	}
	for _, c := range cases {
		got, err := db.CompressionTip(context.Background(), c.id, c.rule)
		if err != nil || got != c.want {
			t.Errorf("%s rule %d: %s, %v; want %s", c.role, c.rule, got, err, c.want)
		}
	}
	for v, want := range map[int]TipRule{6: TipNone, 7: TipV11, 16: TipV11, 17: TipV17, 21: TipV17} {
		if got := TipRuleForSchema(v); got != want {
			t.Errorf("TipRuleForSchema(%d) = %d, want %d", v, got, want)
		}
	}
}

func TestCompressionTipCycle(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	raw := rawDB(t, path)
	mustExec(t, raw, "PRAGMA foreign_keys = OFF")
	mustExec(t, raw, `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('cyc_a', 'cli', 10, 20, 'compression', 'cyc_b'), ('cyc_b', 'cli', 30, 40, 'compression', 'cyc_a')`)
	db := openRO(t, path)
	for _, rule := range []TipRule{TipV11, TipV17} {
		got, err := db.CompressionTip(context.Background(), "cyc_a", rule)
		if err != nil || got != "cyc_b" {
			t.Errorf("rule %d: %q, %v; want cyc_b", rule, got, err)
		}
	}
}

func TestRestoreRoundTrip(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	raw := rawDB(t, path)
	// A usage row for a ghost, removed by ON DELETE CASCADE and restored with it.
	mustExec(t, raw, `INSERT INTO session_model_usage (session_id, model, api_call_count, first_seen)
		VALUES ('20260628_040921_e394e0', 'm', 0, 1.5)`)
	tables := []string{"sessions", "session_model_usage", "state_meta"}
	dump := func() map[string]string {
		out := map[string]string{}
		for _, tb := range tables {
			out[tb] = typedDump(t, raw, tb)
		}
		return out
	}
	start := dump()
	db := openWrite(t, path)
	fin := finalize(t, db, fixtureNow)
	pr := prune(t, db, fixtureNow)
	if len(pr.Changes) != 3 || pr.Changes[2].Table != "session_model_usage" || pr.Changes[2].After != nil {
		t.Fatalf("prune changes: %+v", pr.Changes)
	}
	if reflect.DeepEqual(dump(), start) {
		t.Fatal("nothing changed")
	}
	var undo []RowRestore
	for _, c := range append(append(pr.Changes, pr.Latch), append(fin.Changes, fin.Latch)...) {
		undo = append(undo, c.Undo())
	}
	if _, _, err := db.RestoreRows(context.Background(), undo); err != nil {
		t.Fatal(err)
	}
	if got := dump(); !reflect.DeepEqual(got, start) {
		for _, tb := range tables {
			if got[tb] != start[tb] {
				t.Errorf("%s differs after restore:\n%s\nwant\n%s", tb, got[tb], start[tb])
			}
		}
	}
}

func TestRestoreConflictChangesNothing(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	db := openWrite(t, path)
	fin := finalize(t, db, fixtureNow)
	pr := prune(t, db, fixtureNow)
	raw := rawDB(t, path)
	mustExec(t, raw, "UPDATE sessions SET title = 'touched' WHERE id = ?", fin.Changes[1].Key["id"].Text)
	before := typedDump(t, raw, "sessions") + typedDump(t, raw, "state_meta")
	var undo []RowRestore
	for _, c := range append(append(pr.Changes, pr.Latch), append(fin.Changes, fin.Latch)...) {
		undo = append(undo, c.Undo())
	}
	_, _, err := db.RestoreRows(context.Background(), undo)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	if after := typedDump(t, raw, "sessions") + typedDump(t, raw, "state_meta"); after != before {
		t.Error("a conflicting restore changed rows")
	}
	// A re-created row that already exists is a conflict too.
	_, _, err = db.RestoreRows(context.Background(), []RowRestore{{Table: "sessions",
		Key: fin.Changes[0].Key, Expected: nil, Desired: fin.Changes[0].Before}})
	if !errors.Is(err, ErrConflict) {
		t.Errorf("insert over an existing row: err = %v, want ErrConflict", err)
	}
}

func TestPruneKeepsGhostsWithChildren(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	const ghost, other = "20260628_040921_e394e0", "20260702_210131_8d7ee4"
	mustExec(t, rawDB(t, path), `INSERT INTO sessions (id, source, started_at, parent_session_id)
		VALUES ('child_of_ghost', 'cli', 1784000000, ?)`, ghost)
	db := openWrite(t, path)
	cands, err := db.GhostCandidates(context.Background(), fixtureNow, DefaultGhostMinAge)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		if c.ID == ghost && !reflect.DeepEqual(c.ChildIDs, []string{"child_of_ghost"}) {
			t.Errorf("ghost children = %v", c.ChildIDs)
		}
	}
	res := prune(t, db, fixtureNow)
	if !reflect.DeepEqual(res.Kept, []string{ghost}) || !reflect.DeepEqual(res.Deleted, []string{other}) {
		t.Errorf("kept %v deleted %v", res.Kept, res.Deleted)
	}
	if !reflect.DeepEqual(res.Children, map[string][]string{ghost: {"child_of_ghost"}}) {
		t.Errorf("children of kept ghosts = %v", res.Children)
	}
	if _, err := db.Session(context.Background(), ghost); err != nil {
		t.Errorf("kept ghost: %v", err)
	}
}

// TestNothingToChangeWritesNothing: a second run finds nothing, calls no hook and writes
// nothing, not even the latch.
func TestNothingToChangeWritesNothing(t *testing.T) {
	db := openWrite(t, copyDB(t, "r0715-c2a3b9ce5"))
	finalize(t, db, fixtureNow)
	prune(t, db, fixtureNow)
	ctx := context.Background()
	hook := func([]RowChange) error {
		t.Error("commit hook called with nothing to change")
		return nil
	}
	fin, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, Batch{}, hook)
	if err != nil || len(fin.Changes) != 0 || fin.Latch.After != nil {
		t.Errorf("second finalize: %d changes, latch %+v, err %v", len(fin.Changes), fin.Latch, err)
	}
	if len(fin.Locked) != 1 {
		t.Errorf("second finalize reports %d locked candidates, want 1", len(fin.Locked))
	}
	pr, err := db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, Batch{}, hook)
	if err != nil || len(pr.Deleted) != 0 || len(pr.Changes) != 0 || pr.Latch.After != nil {
		t.Errorf("second prune: %v deleted, latch %+v, err %v", pr.Deleted, pr.Latch, err)
	}
}

// TestFinalizeWithoutParentIndex: without idx_sessions_parent the candidate query falls back
// to SQLite's own plan and selects the same rows.
func TestFinalizeWithoutParentIndex(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	mustExec(t, rawDB(t, path), "DROP INDEX idx_sessions_parent")
	got := changedIDs(finalize(t, openWrite(t, path), fixtureNow).Changes, "sessions")
	want := []string{"20260621_182357_4cea33", "20260622_125201_1af486", "20260630_030359_a9da10"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("finalized %v, want %v", got, want)
	}
}

// TestPruneDeletesParentWithGhostChild: a ghost whose only child is itself a ghost goes with
// it in the same transaction, as in the runtime's single DELETE (the foreign key is checked
// when the statement ends: hermes_state.py prune_empty_ghost_sessions, 3b750715a–c2a3b9ce5).
func TestPruneDeletesParentWithGhostChild(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	const parent, child = "20260628_040921_e394e0", "20260702_210131_8d7ee4"
	mustExec(t, rawDB(t, path), `UPDATE sessions SET parent_session_id = ? WHERE id = ?`, parent, child)
	db := openWrite(t, path)
	res := prune(t, db, fixtureNow)
	if len(res.Kept) != 0 || !reflect.DeepEqual(res.Deleted, []string{parent, child}) {
		t.Errorf("kept %v deleted %v, want both deleted", res.Kept, res.Deleted)
	}
}

// TestRepairsInBoundedBatches: with MaxRows the repairs work through the candidates oldest
// first, one bounded transaction per call, and end where a single call would.
func TestRepairsInBoundedBatches(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	db := openWrite(t, path)
	ctx := context.Background()
	var finalized, pruned []string
	for batch := (Batch{MaxRows: 2}); ; {
		res, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, batch, nil)
		if err != nil || len(changedIDs(res.Changes, "sessions")) > 2 {
			t.Fatalf("batch: %d changes, %v", len(res.Changes), err)
		}
		finalized = append(finalized, changedIDs(res.Changes, "sessions")...)
		if batch.Among = res.Remaining; len(batch.Among) == 0 {
			break
		}
	}
	for batch := (Batch{MaxRows: 1}); ; {
		res, err := db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, batch, nil)
		if err != nil || len(res.Deleted) > 1 {
			t.Fatalf("batch: %v, %v", res.Deleted, err)
		}
		pruned = append(pruned, res.Deleted...)
		if batch.Among = res.Remaining; len(batch.Among) == 0 {
			break
		}
	}
	if want := []string{"20260621_182357_4cea33", "20260622_125201_1af486", "20260630_030359_a9da10"}; !reflect.DeepEqual(finalized, want) {
		t.Errorf("finalized %v, want %v", finalized, want)
	}
	if want := []string{"20260628_040921_e394e0", "20260702_210131_8d7ee4"}; !reflect.DeepEqual(pruned, want) {
		t.Errorf("pruned %v, want %v", pruned, want)
	}
	once := copyDB(t, "r0715-c2a3b9ce5")
	finalize(t, openWrite(t, once), fixtureNow)
	prune(t, openWrite(t, once), fixtureNow)
	if got, want := dumpSessions(t, rawDB(t, path), true), dumpSessions(t, rawDB(t, once), true); !reflect.DeepEqual(got, want) {
		t.Error("batched repairs end elsewhere than one unbounded call")
	}
}

// TestLaterBatchesCheckThePredicateAgain: a later batch only looks at the ids the first one
// left, and leaves any that stopped matching in between.
func TestLaterBatchesCheckThePredicateAgain(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	db, raw := openWrite(t, path), rawDB(t, path)
	ctx := context.Background()

	fin, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, Batch{MaxRows: 1}, nil)
	if err != nil || len(fin.Remaining) != 2 {
		t.Fatalf("first finalize batch: remaining %v, %v", fin.Remaining, err)
	}
	left := fin.Remaining
	mustExec(t, raw, "UPDATE sessions SET api_call_count = 1 WHERE id = ?", left[0])
	fin, err = db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, Batch{MaxRows: 1, Among: left}, nil)
	if got := changedIDs(fin.Changes, "sessions"); err != nil || len(got) != 0 || !reflect.DeepEqual(fin.Remaining, left[1:]) {
		t.Errorf("second finalize batch: changed %v, remaining %v, %v", got, fin.Remaining, err)
	}

	pr, err := db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, Batch{MaxRows: 1}, nil)
	if err != nil || len(pr.Remaining) != 1 {
		t.Fatalf("first prune batch: remaining %v, %v", pr.Remaining, err)
	}
	ghost := pr.Remaining[0]
	pr, err = db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, Batch{MaxRows: 5, Among: []string{"not_a_ghost"}}, nil)
	if err != nil || len(pr.Deleted) != 0 || len(pr.Remaining) != 0 {
		t.Errorf("batch among other ids: deleted %v, remaining %v, %v", pr.Deleted, pr.Remaining, err)
	}
	mustExec(t, raw, "UPDATE sessions SET title = 'named meanwhile' WHERE id = ?", ghost)
	pr, err = db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, Batch{MaxRows: 5, Among: []string{ghost}}, nil)
	if err != nil || len(pr.Deleted) != 0 || len(pr.Remaining) != 0 {
		t.Errorf("second prune batch: deleted %v, remaining %v, %v", pr.Deleted, pr.Remaining, err)
	}
}

// TestBatchTake: Among is evaluated at most MaxRows at a time, in order; a batch without
// Among evaluates no list (it scans).
func TestBatchTake(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		name      string
		batch     Batch
		now, rest []string
	}{
		{"first batch scans", Batch{MaxRows: 3}, nil, nil},
		{"bounded", Batch{MaxRows: 3, Among: ids}, ids[:3], ids[3:]},
		{"fits", Batch{MaxRows: 10, Among: ids}, ids, nil},
		{"unbounded", Batch{Among: ids}, ids, nil},
	}
	for _, tc := range tests {
		now, rest := tc.batch.take()
		if !reflect.DeepEqual(now, tc.now) || !reflect.DeepEqual(rest, tc.rest) {
			t.Errorf("%s: take gave %v then %v, want %v then %v", tc.name, now, rest, tc.now, tc.rest)
		}
	}
}

// TestBatchAmongOddIDs: ids are passed to SQLite as a JSON array; one that JSON cannot carry
// unchanged (invalid UTF-8) matches nothing and is left alone, and quotes or backslashes are
// carried exactly.
func TestBatchAmongOddIDs(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	raw := rawDB(t, path)
	ghosts := []string{"bad\xffid", `quo"te\back`}
	for _, id := range ghosts {
		mustExec(t, raw, `INSERT INTO sessions (id, source, started_at, ended_at, end_reason)
			VALUES (?, 'tui', ?, ?, 'tui_shutdown')`, id, fixtureNow-200000, fixtureNow-199000)
	}
	res, err := openWrite(t, path).PruneGhosts(context.Background(), fixtureNow, DefaultGhostMinAge, Batch{Among: ghosts}, nil)
	if err != nil || !reflect.DeepEqual(res.Deleted, ghosts[1:]) {
		t.Errorf("deleted %q, %v; want only %q", res.Deleted, err, ghosts[1])
	}
}

// TestRestoreFinishesFromAnyState: rows already at their desired image are left alone, so a
// restore of a change that never landed, or one run a second time, succeeds and writes
// nothing; a restore that finds some rows done and others pending writes only the pending.
func TestRestoreFinishesFromAnyState(t *testing.T) {
	path := copyDB(t, "r0715-c2a3b9ce5")
	db := openWrite(t, path)
	fin := finalize(t, db, fixtureNow)
	var undo []RowRestore
	for _, c := range append(fin.Changes, fin.Latch) {
		undo = append(undo, c.Undo())
	}
	if len(undo) < 3 {
		t.Fatalf("want several rows to restore, have %d", len(undo))
	}
	// Restore one row alone, as an undo stopped part-way would have.
	if n, _, err := db.RestoreRows(context.Background(), undo[:1]); err != nil || n != 1 {
		t.Fatalf("first row: restored %d, err %v", n, err)
	}
	n, _, err := db.RestoreRows(context.Background(), undo)
	if err != nil || n != len(undo)-1 {
		t.Fatalf("the rest: restored %d of %d, err %v", n, len(undo)-1, err)
	}
	before := typedDump(t, rawDB(t, path), "sessions") + typedDump(t, rawDB(t, path), "state_meta")
	if n, _, err := db.RestoreRows(context.Background(), undo); err != nil || n != 0 {
		t.Fatalf("again: restored %d, err %v", n, err)
	}
	if after := typedDump(t, rawDB(t, path), "sessions") + typedDump(t, rawDB(t, path), "state_meta"); after != before {
		t.Error("a restore with nothing left to do changed rows")
	}
}
