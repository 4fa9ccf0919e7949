package statedb

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// upgradeNow is B's clock in the upgrade pairs (2026-07-16T15:45:30.750000Z).
const upgradeNow = 1784216730.75

func upgradeDB(t *testing.T, pair string) *DB {
	t.Helper()
	return openRO(t, filepath.Join("..", "testdata", "upgrade", pair, "home", "state.db"))
}

func newView(t *testing.T, db *DB, toSchema int) *View {
	t.Helper()
	v, err := db.NewView(context.Background(), toSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := v.Close(); err != nil {
			t.Error(err)
		}
	})
	return v
}

// TestViewPredicates runs each query of the view on an upgrade pair's home: the view of
// the home's own generation matches the package's direct reads, and the start's changes
// show in the later queries.
func TestViewPredicates(t *testing.T) {
	ctx := context.Background()
	db := upgradeDB(t, "r0715-c2a3b9ce5--r0817-481156139")
	v := newView(t, db, 26)
	ghosts, fails, err := v.Ghosts(ctx, upgradeNow-DefaultGhostMinAge)
	if err != nil || fails {
		t.Fatalf("Ghosts: %v %v", fails, err)
	}
	direct, err := db.GhostCandidates(ctx, upgradeNow, DefaultGhostMinAge)
	if err != nil {
		t.Fatal(err)
	}
	if len(ghosts) != len(direct) || len(ghosts) != 4 {
		t.Errorf("view ghosts %v, direct %d", ghosts, len(direct))
	}
	orphans, err := v.Orphans(ctx, upgradeNow-DefaultOrphanMinAge)
	if err != nil {
		t.Fatal(err)
	}
	directO, err := db.FinalizeCandidates(ctx, upgradeNow, DefaultOrphanMinAge)
	if err != nil || len(orphans) != len(directO) {
		t.Fatalf("orphans %v vs %d (%v)", orphans, len(directO), err)
	}
	pruned, err := v.PruneCandidates(ctx, upgradeNow-90*86400, sessionsjson.PruneByInactivity)
	if err != nil || len(pruned) != 6 {
		t.Fatalf("prune candidates %v (%v)", pruned, err)
	}
	if err := v.Delete(ctx, pruned...); err != nil {
		t.Fatal(err)
	}
	after, err := v.Orphans(ctx, upgradeNow-DefaultOrphanMinAge)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 7 {
		t.Errorf("orphans after the prune %v, want 7", after)
	}
	reasons, err := v.EndReasons(ctx, append(pruned[:1:1], orphans...))
	if err != nil || len(reasons) != len(orphans) {
		t.Fatalf("EndReasons %v (%v)", reasons, err)
	}
	if err := v.Finalize(ctx, upgradeNow, orphans[0]); err != nil {
		t.Fatal(err)
	}
	reasons, _ = v.EndReasons(ctx, orphans[:1])
	if r := reasons[orphans[0]]; r == nil || *r != EndReasonOrphanedCompression {
		t.Errorf("finalized row reads %v", r)
	}
	if again, _ := v.Orphans(ctx, upgradeNow-DefaultOrphanMinAge); slices.Contains(again, orphans[0]) {
		t.Errorf("a finalized row is still an orphan")
	}
}

// TestViewAddedColumns: a v6 file seen by a v11 runtime has api_call_count 0 on every row;
// seen by its own runtime the finalize query cannot run, and a recovery lookup needs the
// v17 columns.
func TestViewAddedColumns(t *testing.T) {
	ctx := context.Background()
	db := upgradeDB(t, "r0418-cb4addaca--r0506-3b750715a")
	orphans, err := newView(t, db, 11).Orphans(ctx, upgradeNow-DefaultOrphanMinAge)
	if err != nil || len(orphans) != 6 {
		t.Fatalf("orphans under v11: %v (%v)", orphans, err)
	}
	if _, err := newView(t, db, 6).Orphans(ctx, upgradeNow-DefaultOrphanMinAge); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("orphans under v6: %v", err)
	}
	if _, _, err := newView(t, db, 11).Recover(ctx, sessionsjson.RecoveryV17, "k", "telegram", nil); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("recover under v11: %v", err)
	}
	v := newView(t, db, 21)
	if _, found, err := v.Recover(ctx, sessionsjson.RecoveryV21, "k", "telegram", nil); err != nil || found {
		t.Errorf("recover under v21: %v %v", found, err)
	}
}

// TestViewBackfill: the v18 backfill fills NULL peer columns only, the first fill of a row
// winning per column; a recovery lookup by key then finds the filled row.
func TestViewBackfill(t *testing.T) {
	ctx := context.Background()
	db := upgradeDB(t, "r0418-cb4addaca--r0715-c2a3b9ce5")
	const id = "20260711_155440_f19fdcf6" // the ended_agent_close entry's row, with messages
	fills := []PeerFill{
		{ID: id, SessionKey: "agent:main:telegram:group:-1005871012566:665837121", ChatID: nil, ChatType: "group"},
		{ID: id, SessionKey: "other", ChatID: "-1005871012566", ChatType: "dm"},
	}
	v, err := db.NewView(ctx, 21, fills)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	r, found, err := v.Recover(ctx, sessionsjson.RecoveryV21, "agent:main:telegram:group:-1005871012566:665837121", "telegram", nil)
	if err != nil || !found || r.ID != id || r.EndReason != EndReasonAgentClose {
		t.Fatalf("recover by the filled key: %+v %v %v", r, found, err)
	}
	user, chat, dm, group := "665837121", "-1005871012566", "dm", "group"
	if _, found, _ := v.Recover(ctx, sessionsjson.RecoveryV21, "none", "telegram", &Peer{UserID: &user, ChatID: &chat, ChatType: &dm}); found {
		t.Errorf("chat_type was filled by the second entry")
	}
	if r, found, _ := v.Recover(ctx, sessionsjson.RecoveryV21, "none", "telegram", &Peer{UserID: &user, ChatID: &chat, ChatType: &group}); !found || r.ID != id {
		t.Errorf("peer fallback: %+v %v", r, found)
	}
	if _, _, err := v.Recover(ctx, sessionsjson.RecoveryV21, "other", "telegram", nil); err != nil {
		t.Fatal(err)
	}
	if err := v.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := v.Recover(ctx, sessionsjson.RecoveryV21, "agent:main:telegram:group:-1005871012566:665837121", "telegram", nil); found {
		t.Errorf("a deleted row is recovered")
	}
}

// TestViewOverlayBeforeCopy: the view reads the file in place until a delete needs the copy:
// rows finalized and reopened before it read as changed (in the queries and in EndReasons),
// the copy keeps those changes, and the rows deleted then are gone while the others stay.
func TestViewOverlayBeforeCopy(t *testing.T) {
	ctx := context.Background()
	db := upgradeDB(t, "r0715-c2a3b9ce5--r0817-481156139")
	v := newView(t, db, 26)
	orphans, err := v.Orphans(ctx, upgradeNow-DefaultOrphanMinAge)
	if err != nil || len(orphans) < 2 {
		t.Fatalf("orphans %v (%v)", orphans, err)
	}
	pruned, err := v.PruneCandidates(ctx, upgradeNow-90*86400, sessionsjson.PruneByInactivity)
	if err != nil || len(pruned) == 0 {
		t.Fatalf("prune candidates %v (%v)", pruned, err)
	}
	if err := v.Finalize(ctx, upgradeNow, orphans[0]); err != nil {
		t.Fatal(err)
	}
	if err := v.Reopen(ctx, pruned[0]); err != nil {
		t.Fatal(err)
	}
	if v.copied {
		t.Fatal("the view copied the rows before a delete")
	}
	check := func(when string, deleted bool) {
		t.Helper()
		reasons, err := v.EndReasons(ctx, []string{orphans[0], pruned[0]})
		if err != nil {
			t.Fatal(err)
		}
		if r := reasons[orphans[0]]; r == nil || *r != EndReasonOrphanedCompression {
			t.Errorf("%s: the finalized row reads %v", when, r)
		}
		if r, ok := reasons[pruned[0]]; !ok || r != nil {
			t.Errorf("%s: the reopened row reads %v (present %v)", when, r, ok)
		}
		again, err := v.Orphans(ctx, upgradeNow-DefaultOrphanMinAge)
		if err != nil || slices.Contains(again, orphans[0]) || slices.Contains(again, orphans[1]) != !deleted {
			t.Errorf("%s: orphans %v (%v)", when, again, err)
		}
		left, err := v.PruneCandidates(ctx, upgradeNow-90*86400, sessionsjson.PruneByInactivity)
		if err != nil || slices.Contains(left, pruned[0]) {
			t.Errorf("%s: a reopened row is a prune candidate: %v (%v)", when, left, err)
		}
	}
	check("before the copy", false)
	if err := v.Delete(ctx, orphans[1]); err != nil {
		t.Fatal(err)
	}
	if !v.copied {
		t.Fatal("a delete without the copy")
	}
	check("after the copy", true)
	if reasons, _ := v.EndReasons(ctx, orphans[1:2]); len(reasons) != 0 {
		t.Errorf("a deleted row reads %v", reasons)
	}
}
