package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// State_meta latch keys the runtime sets after its one-time repairs (upstream hermes_state.py, state_meta).
const (
	LatchFinalizeOrphans = "orphaned_compression_finalize_v1"
	LatchPruneGhosts     = "ghost_session_prune_v1"
)

// Meta returns state_meta[key]. ok is false when the table or the key is absent; a NULL
// value is returned as "" with ok true.
func (db *DB) Meta(ctx context.Context, key string) (value string, ok bool, err error) {
	if !db.schema.HasStateMeta {
		return "", false, nil
	}
	var v sql.NullString
	err = db.sql.QueryRowContext(ctx, "SELECT value FROM state_meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, classify(fmt.Sprintf("read state_meta %q", key), err, false)
	}
	return v.String, true, nil
}

// setLatch sets state_meta[key] = '1' the way the runtime's set_meta does and returns the
// row's before and after images.
func setLatch(ctx context.Context, tx querier, key string) (RowChange, error) {
	keyVal := map[string]Value{"key": TextValue(key)}
	before, err := readImage(ctx, tx, "state_meta", keyVal)
	if err != nil {
		return RowChange{}, fmt.Errorf("read latch %s: %w", key, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO state_meta (key, value) VALUES (?, '1')
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key); err != nil {
		return RowChange{}, fmt.Errorf("set latch %s: %w", key, err)
	}
	after, err := readImage(ctx, tx, "state_meta", keyVal)
	if err != nil {
		return RowChange{}, fmt.Errorf("read latch %s: %w", key, err)
	}
	return RowChange{Table: "state_meta", Key: keyVal, Before: before, After: after}, nil
}
