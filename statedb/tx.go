package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The runtime's write retry policy (upstream hermes_state.py SessionDB._execute_write, seed era): 15 attempts, 20–150 ms jitter.
const (
	writeMaxAttempts = 15
	retryMinSleep    = 20 * time.Millisecond
	retryMaxSleep    = 150 * time.Millisecond
)

// TxStats describes how a write transaction went, for reporting.
type TxStats struct {
	Attempts int           // BEGIN IMMEDIATE attempts (1 when the first one committed)
	Waited   time.Duration // time spent before the committed attempt (busy waits and sleeps)
	Held     time.Duration // time the committed attempt held the write lock
}

// WithImmediateTx runs fn in one BEGIN IMMEDIATE transaction, the way the runtime's
// _execute_write does: fn's error rolls back and is returned; SQLITE_BUSY/SQLITE_LOCKED (from
// BEGIN, fn or COMMIT) rolls back, sleeps 20–150 ms and reruns the whole batch, up to 15
// attempts, after which the error wraps ErrBusy. fn may therefore run more than once and must
// only act through tx or be idempotent; it may write another file (such as sessions.json)
// before returning, so that a failure there rolls the database back.
func (db *DB) WithImmediateTx(ctx context.Context, fn func(tx *sql.Tx) error) (TxStats, error) {
	var stats TxStats
	if !db.writable {
		return stats, fmt.Errorf("write transaction: %w", ErrReadOnly)
	}
	start := time.Now()
	var lastErr error
	for stats.Attempts < writeMaxAttempts {
		stats.Attempts++
		attemptStart := time.Now()
		err := db.attempt(ctx, fn)
		if err == nil {
			stats.Held = time.Since(attemptStart)
			stats.Waited = attemptStart.Sub(start)
			return stats, nil
		}
		if !isBusy(err) || ctx.Err() != nil {
			return stats, err
		}
		lastErr = err
		if err := sleepJitter(ctx); err != nil {
			return stats, err
		}
	}
	stats.Waited = time.Since(start)
	return stats, fmt.Errorf("write transaction after %d attempts: %v: %w", stats.Attempts, lastErr, ErrBusy)
}

// attempt runs one BEGIN IMMEDIATE … COMMIT, with the fault points FaultBeforeCommit and
// FaultAfterCommit on either side of the COMMIT.
func (db *DB) attempt(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, nil) // BEGIN IMMEDIATE through _txlock=immediate
	if err != nil {
		return fmt.Errorf("begin immediate: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	faultPoint(FaultBeforeCommit)
	if err := tx.Commit(); err != nil {
		// A failed COMMIT can leave SQLite inside the transaction while database/sql
		// considers it finished; end it explicitly so the connection is clean.
		_, _ = db.sql.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return fmt.Errorf("commit: %w", err)
	}
	faultPoint(FaultAfterCommit)
	return nil
}

func sleepJitter(ctx context.Context) error {
	d := retryMinSleep + rand.N(retryMaxSleep-retryMinSleep+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// errNothingToChange ends a write transaction that found nothing to do: it rolls back, and
// the operation reports an empty result without error.
var errNothingToChange = errors.New("nothing to change")

// CommitHook is called inside a write transaction, after its changes are made and before it
// commits, with every row change; an error rolls the transaction back. Because a busy
// transaction is retried, a hook may run more than once and must be idempotent (the CLI
// writes its journal there, so that the journal exists before the change does).
type CommitHook func(changes []RowChange) error

func (h CommitHook) run(changes []RowChange) error {
	if h == nil {
		return nil
	}
	return h(changes)
}
