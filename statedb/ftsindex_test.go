package statedb

import (
	"context"
	"database/sql"
	"testing"
)

// TestFTSIndexesRebuild: on every generation's fixture the indexes are in step with their
// source; a message written while the insert triggers are gone leaves them one document
// short; RebuildFTS by the layout's own rebuild brings them back in step, finds the message,
// and changes no messages row.
func TestFTSIndexesRebuild(t *testing.T) {
	ctx := context.Background()
	for _, gen := range []string{"r0418-cb4addaca", "r0506-3b750715a", "r0525-3914089d5", "r0703-52d0d671e",
		"r0715-c2a3b9ce5", "r0817-481156139"} {
		t.Run(gen, func(t *testing.T) {
			path := copyDB(t, gen)
			raw := rawDB(t, path)
			before := openRO(t, path)
			idx, err := before.FTSIndexes(ctx)
			if err != nil || len(idx) == 0 {
				t.Fatalf("FTSIndexes: %v, %v", idx, err)
			}
			for _, x := range idx {
				if x.OutOfStep() {
					t.Errorf("fixture %s out of step: %+v", x.Table, x)
				}
			}
			mustExec(t, raw, "DROP TRIGGER IF EXISTS messages_fts_insert")
			mustExec(t, raw, "DROP TRIGGER IF EXISTS messages_fts_trigram_insert")
			mustExec(t, raw, `INSERT INTO messages (session_id, role, content, timestamp)
				SELECT session_id, 'user', 'zanzibar quokka', timestamp FROM messages ORDER BY id LIMIT 1`)
			db := openWrite(t, path)
			stale, err := db.FTSIndexes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range stale {
				if x.Missing != 1 || x.Extra != 0 {
					t.Errorf("after a write without triggers, %s: %+v, want 1 missing", x.Table, x)
				}
			}
			var messages int64
			mustScan(t, raw, "SELECT COUNT(*) FROM messages", &messages)
			called := false
			after, _, err := db.RebuildFTS(ctx, stale, func([]RowChange) error { called = true; return nil })
			if err != nil || !called {
				t.Fatalf("RebuildFTS: %v (hook called %v)", err, called)
			}
			for _, x := range after {
				if x.OutOfStep() || x.Docs != messages && x.Source == "messages" {
					t.Errorf("after the rebuild, %s: %+v (messages %d)", x.Table, x, messages)
				}
			}
			var hits int64
			mustScan(t, raw, "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'quokka'", &hits)
			if hits != 1 {
				t.Errorf("search after the rebuild: %d hits, want 1", hits)
			}
		})
	}
}

func mustScan(t *testing.T, db *sql.DB, q string, dst any) {
	t.Helper()
	if err := db.QueryRow(q).Scan(dst); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
