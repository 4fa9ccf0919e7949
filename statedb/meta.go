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

// LatchSet reports whether state_meta[key] holds what the runtime's `if not
// session_db.get_meta(key)` takes for set: a value Python finds truthy (not NULL, an empty string or 0).
func (db *DB) LatchSet(ctx context.Context, key string) (bool, error) {
	if !db.schema.HasStateMeta {
		return false, nil
	}
	return latchSet(ctx, db.sql, key)
}

func latchSet(ctx context.Context, q querier, key string) (bool, error) {
	var v any
	err := q.QueryRowContext(ctx, "SELECT value FROM state_meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, classify(fmt.Sprintf("read state_meta %q", key), err, false)
	}
	switch x := v.(type) {
	case nil:
		return false, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case string:
		return x != "", nil
	case []byte:
		return len(x) > 0, nil
	}
	return true, nil
}

// SetLatch sets the latch key alone, in one BEGIN IMMEDIATE transaction, as the runtime's CLI
// start-up does after a one-time repair that found nothing to change (cli.py at 481156139:
// `set_meta(key, "1")` runs whatever the repair returned). A latch already set is left as it
// is: the change is then empty (no Table). beforeCommit sees the change before the commit.
func (db *DB) SetLatch(ctx context.Context, key string, beforeCommit CommitHook) (RowChange, TxStats, error) {
	const op = "set latch"
	if err := db.requireWrite(op); err != nil {
		return RowChange{}, TxStats{}, err
	}
	if err := db.requireTable(op, "state_meta"); err != nil {
		return RowChange{}, TxStats{}, err
	}
	var change RowChange
	stats, err := db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		change = RowChange{}
		set, err := latchSet(ctx, tx, key)
		if err != nil || set {
			return orNothing(err)
		}
		if change, err = setLatch(ctx, tx, key); err != nil {
			return err
		}
		return beforeCommit.run([]RowChange{change})
	})
	if err != nil && !errors.Is(err, errNothingToChange) {
		return RowChange{}, stats, fmt.Errorf("%s %s: %w", op, key, err)
	}
	return change, stats, nil
}

// orNothing is err, or errNothingToChange when there is none: nothing to write.
func orNothing(err error) error {
	if err != nil {
		return err
	}
	return errNothingToChange
}
