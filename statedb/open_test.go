package statedb

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestSchemaDetection(t *testing.T) {
	for _, g := range generations {
		t.Run(g.name, func(t *testing.T) {
			s := openRO(t, copyDB(t, g.name)).Schema()
			if s.Version != g.version || !s.Known || s.Newer {
				t.Errorf("version = %d known=%v newer=%v, want %d known", s.Version, s.Known, s.Newer, g.version)
			}
			checks := []struct {
				name      string
				got, want bool
			}{
				{"compression_locks", s.HasCompressionLocks, g.version >= 14},
				{"gateway_routing", s.HasGatewayRouting, g.version >= 19},
				{"state_meta", s.HasStateMeta, g.version >= 7},
				{"sessions.api_call_count", s.SessionColumns["api_call_count"], g.version >= 8},
				{"sessions.session_key", s.SessionColumns["session_key"], g.version >= 17},
				{"messages.observed", s.MessageColumns["observed"], g.version >= 13},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
			wantFTS := FTSInlineV11
			if g.version < 11 {
				wantFTS = FTSExternalV1
			}
			if s.FTSLayout != wantFTS || s.JournalMode != "wal" || s.SQLiteVersion == "" || s.PageCount <= 0 {
				t.Errorf("fts=%q journal=%q sqlite=%q pages=%d", s.FTSLayout, s.JournalMode, s.SQLiteVersion, s.PageCount)
			}
		})
	}
}

func TestFTSLayout(t *testing.T) {
	cases := map[string]string{
		"CREATE VIRTUAL TABLE messages_fts USING fts5(\n    content\n)":                                  FTSInlineV11,
		"CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id)":      FTSExternalV1,
		"CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id')":  FTSExternalV1,
		"CREATE VIRTUAL TABLE messages_fts USING fts5(content, tool_name, tool_calls, content=messages)": FTSExternalV23,
	}
	for ddl, want := range cases {
		if got := ftsLayout(ddl); got != want {
			t.Errorf("ftsLayout(%q) = %q, want %q", ddl, got, want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join(fixtureDir("r0715-c2a3b9ce5"), "home", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 8192)
	_, _ = rand.Read(random)
	withHeader := append([]byte(sqliteHeader), random...)
	files := map[string][]byte{
		"empty.db":     {},
		"truncated.db": fixture[:4096],
		"random.db":    random,
		"header.db":    withHeader,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.db"), 0o700); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.db")
	mustExec(t, rawDB(t, plain), "CREATE TABLE foo (x)")
	for _, name := range []string{"empty.db", "truncated.db", "random.db", "header.db", "dir.db", "plain.db"} {
		for mode, open := range openers() {
			_, err := open(context.Background(), filepath.Join(dir, name))
			t.Logf("%s %s: %v", mode, name, err)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s %s: err = %v, want ErrCorrupt", mode, name, err)
			}
		}
	}
}

func openers() map[string]func(context.Context, string) (*DB, error) {
	return map[string]func(context.Context, string) (*DB, error){"ro": OpenReadOnly, "rw": OpenWrite}
}

func TestOpenMissingNeverCreates(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope", "state.db")
	for mode, open := range openers() {
		_, err := open(context.Background(), missing)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: err = %v, want ErrNotFound", mode, err)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file exists after open: %v", err)
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	if _, err := db.FinalizeOrphans(context.Background(), fixtureNow, DefaultOrphanMinAge, Batch{}, nil); !errors.Is(err, ErrReadOnly) {
		t.Errorf("FinalizeOrphans on read-only handle: %v", err)
	}
	if _, err := db.sql.Exec("UPDATE sessions SET title = 'x'"); err == nil {
		t.Error("a write through the read-only connection succeeded")
	}
}

// TestWritesRefusedOnNewerSchema: a schema newer than the table (v27) and an intermediate
// one (v22–v25) are read, never written.
func TestWritesRefusedOnNewerSchema(t *testing.T) {
	for _, tt := range []struct {
		version             int
		newer, intermediate bool
	}{{NewestKnownVersion + 1, true, false}, {22, false, true}, {25, false, true}} {
		t.Run(fmt.Sprint(tt.version), func(t *testing.T) {
			path := copyDB(t, "r0715-c2a3b9ce5")
			mustExec(t, rawDB(t, path), fmt.Sprintf("UPDATE schema_version SET version = %d", tt.version))
			db := openWrite(t, path)
			if s := db.Schema(); s.Newer != tt.newer || s.Intermediate != tt.intermediate || s.Known {
				t.Fatalf("schema %d: newer=%v intermediate=%v known=%v", s.Version, s.Newer, s.Intermediate, s.Known)
			}
			writesRefused(t, db)
		})
	}
}

func writesRefused(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, Batch{}, nil); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("FinalizeOrphans: %v", err)
	}
	if _, err := db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, Batch{}, nil); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("PruneGhosts: %v", err)
	}
	if err := db.UpdateRoutingEntries(ctx, "s", map[string]string{"k": "{}"}, fixtureNow); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("UpdateRoutingEntries: %v", err)
	}
	if _, err := db.Totals(ctx); err != nil {
		t.Errorf("reads must still work: %v", err)
	}
}

func TestFinalizeNeedsAPICallCount(t *testing.T) {
	db := openWrite(t, copyDB(t, "r0418-cb4addaca"))
	ctx := context.Background()
	if _, err := db.FinalizeCandidates(ctx, fixtureNow, DefaultOrphanMinAge); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("FinalizeCandidates on v6: %v", err)
	}
	if _, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, Batch{}, nil); !errors.Is(err, ErrUnsupportedSchema) {
		t.Errorf("FinalizeOrphans on v6: %v", err)
	}
}
