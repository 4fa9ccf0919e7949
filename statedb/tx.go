package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The runtime's write patience at r0817 (hermes_state.py SessionDB._execute_write; runtime-v26.md
// §4.2): a busy or locked write is retried for _WRITE_PATIENCE_S = 20 s in all, after a
// uniform(0.020, 0.150) s sleep during the first _WRITE_RETRY_SLOW_AFTER_S = 2 s and a
// uniform(0.250, 1.000) s sleep after that; each attempt itself waits up to the 1 s busy
// timeout. The writable open waits the same 20 s (8da8a7887, PR #74480).
const (
	writeSlowAfter  = 2 * time.Second
	retryMinSleep   = 20 * time.Millisecond
	retryMaxSleep   = 150 * time.Millisecond
	retrySlowMin    = 250 * time.Millisecond
	retrySlowMax    = 1000 * time.Millisecond
	defaultPatience = 20 * time.Second
)

// writePatience is how long a busy write keeps being retried (defaultPatience; a test may
// shorten it).
var writePatience = defaultPatience

// TxStats describes how a write transaction went, for reporting.
type TxStats struct {
	Attempts int           // BEGIN IMMEDIATE attempts (1 when the first one committed)
	Waited   time.Duration // time spent before the committed attempt took the lock (busy waits and sleeps)
	Held     time.Duration // time the committed attempt held the write lock (BEGIN IMMEDIATE to COMMIT)
}

// WithImmediateTx runs fn in one BEGIN IMMEDIATE transaction, the way the runtime's
// _execute_write does: fn's error rolls back and is returned; SQLITE_BUSY/SQLITE_LOCKED (from
// BEGIN, fn or COMMIT) rolls back, sleeps (20–150 ms during the first 2 s, 250–1000 ms after)
// and reruns the whole batch until 20 s have passed since the first attempt, after which the
// error wraps ErrBusy. fn may therefore run more than once and must only act through tx or be
// idempotent; it may write another file (such as sessions.json) before returning, so that a
// failure there rolls the database back.
func (db *DB) WithImmediateTx(ctx context.Context, fn func(tx *sql.Tx) error) (TxStats, error) {
	var stats TxStats
	if !db.writable {
		return stats, fmt.Errorf("write transaction: %w", ErrReadOnly)
	}
	err := patiently(ctx, func() error {
		stats.Attempts++
		attemptStart := time.Now()
		locked := attemptStart // when BEGIN IMMEDIATE returned: the busy wait ends there
		if err := db.attempt(ctx, fn, &locked); err != nil {
			stats.Waited += time.Since(attemptStart)
			return err
		}
		stats.Waited += locked.Sub(attemptStart)
		stats.Held = time.Since(locked)
		return nil
	}, &stats.Waited)
	if errors.Is(err, ErrBusy) {
		return stats, fmt.Errorf("write transaction after %d attempts in %v: %w", stats.Attempts, stats.Waited.Round(time.Millisecond), err)
	}
	return stats, err
}

// patiently runs try until it succeeds, fails with an error the runtime does not retry, the
// context ends, or writePatience has passed since the first try (then the last busy error is
// returned wrapping ErrBusy). The sleeps between tries are added to *slept.
func patiently(ctx context.Context, try func() error, slept *time.Duration) error {
	start := time.Now()
	for {
		err := try()
		if err == nil || !isBusy(err) || ctx.Err() != nil {
			return err
		}
		elapsed := time.Since(start)
		if elapsed >= writePatience {
			return fmt.Errorf("%v: %w", err, ErrBusy)
		}
		d := min(retrySleep(elapsed), writePatience-elapsed)
		if err := Sleep(ctx, d); err != nil {
			return err
		}
		*slept += d
	}
}

// retrySleep draws the sleep before the next try, elapsed after the first one: the runtime's
// two-stage jitter.
func retrySleep(elapsed time.Duration) time.Duration {
	if elapsed < writeSlowAfter {
		return retryMinSleep + rand.N(retryMaxSleep-retryMinSleep+1)
	}
	return retrySlowMin + rand.N(retrySlowMax-retrySlowMin+1)
}

// attempt runs one BEGIN IMMEDIATE … COMMIT, with the fault points FaultBeforeCommit and
// FaultAfterCommit on either side of the COMMIT; *locked is set when BEGIN took the lock.
func (db *DB) attempt(ctx context.Context, fn func(tx *sql.Tx) error, locked *time.Time) error {
	tx, err := db.sql.BeginTx(ctx, nil) // BEGIN IMMEDIATE through _txlock=immediate
	if err != nil {
		return fmt.Errorf("begin immediate: %w", err)
	}
	*locked = time.Now()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	faultPoint(FaultBeforeCommit)
	if err := tx.Commit(); err != nil {
		// A failed COMMIT can leave SQLite inside the transaction while database/sql
		// considers it finished; end it explicitly so the connection is clean.
		_, _ = db.sql.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		if serr := settle(ctx, db.sql, db.path); serr != nil {
			return fmt.Errorf("commit: %w: %w", err, serr)
		}
		return fmt.Errorf("commit: %w", err)
	}
	faultPoint(FaultAfterCommit)
	return nil
}

// Sleep waits for d, or returns the context's error when it is cancelled first.
func Sleep(ctx context.Context, d time.Duration) error {
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
