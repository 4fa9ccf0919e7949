package statedb

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRowStoreSynchronousFull: a row store's commits are durable: its connection runs with
// synchronous=FULL (2), so SQLite fsyncs the store (and its rollback journal) at every commit
// before CaptureRows returns, which the fsync trace of sessionctl cannot see (issue 33).
func TestRowStoreSynchronousFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.rows.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sqldb, conn, err := openStore(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	defer conn.Close()
	var mode int
	if err := conn.QueryRowContext(context.Background(), "PRAGMA synchronous").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != 2 {
		t.Errorf("row store synchronous = %d, want 2 (FULL)", mode)
	}
}
