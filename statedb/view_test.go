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

// TestViewPredicates runs each query of the view on an upgrade pair's home: the view of
// the home's own generation matches the package's direct reads, and the start's changes
// show in the later queries.
func TestViewPredicates(t *testing.T) {
	ctx := context.Background()
	db := upgradeDB(t, "r0715-c2a3b9ce5--r0817-481156139")
	v := db.NewView(26, upgradeNow)
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
	v.Delete(pruned...)
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
	v.Finalize(orphans[0])
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
	orphans, err := db.NewView(11, upgradeNow).Orphans(ctx, upgradeNow-DefaultOrphanMinAge)
	if err != nil || len(orphans) != 6 {
		t.Fatalf("orphans under v11: %v (%v)", orphans, err)
	}
	if _, err := db.NewView(6, upgradeNow).Orphans(ctx, upgradeNow-DefaultOrphanMinAge); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("orphans under v6: %v", err)
	}
	if _, _, err := db.NewView(11, upgradeNow).Recover(ctx, sessionsjson.RecoveryV17, "k", "telegram", nil); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("recover under v11: %v", err)
	}
	v := db.NewView(21, upgradeNow)
	if _, found, err := v.Recover(ctx, sessionsjson.RecoveryV21, "k", "telegram", nil); err != nil || found {
		t.Errorf("recover under v21: %v %v", found, err)
	}
}
