package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// CompressionLock is one compression_locks row (v14+). AcquiredAt and ExpiresAt hold the
// times when they are numbers; Acquired and Expires hold them as stored, and OddValues names
// those of a class the runtime never writes there (TEXT, a BLOB).
type CompressionLock struct {
	SessionID         string
	Holder            string
	AcquiredAt        float64
	ExpiresAt         float64
	Acquired, Expires Value            `json:"-"`
	OddValues         map[string]Value `json:",omitempty"`
}

// liveLockAt is the one definition of a live compression lock, for the compression_locks
// row named by alias ("" or "l."): the SQL condition that it still holds at the query
// argument now, expires_at >= now, compared as the runtime's SQL compares it (a TEXT expiry
// is later than any time, so it never expires; a NULL one is never live). Every reader of
// the rule builds its query with it; NOT (…) is an expired lock.
func liveLockAt(alias string) string { return alias + "expires_at >= ?" }

// newLock builds a lock from the scanned columns.
func newLock(id, holder string, acquired, expires any) (CompressionLock, error) {
	l := CompressionLock{SessionID: id, Holder: holder}
	var err error
	if l.Acquired, err = valueFromDriver(acquired); err != nil {
		return l, fmt.Errorf("compression lock of %q: %w", id, err)
	}
	if l.Expires, err = valueFromDriver(expires); err != nil {
		return l, fmt.Errorf("compression lock of %q: %w", id, err)
	}
	l.AcquiredAt, _ = l.Acquired.Number()
	l.ExpiresAt, _ = l.Expires.Number()
	for col, v := range map[string]Value{"acquired_at": l.Acquired, "expires_at": l.Expires} {
		if !v.IsNumber() {
			if l.OddValues == nil {
				l.OddValues = map[string]Value{}
			}
			l.OddValues[col] = v
		}
	}
	return l, nil
}

const lockColumns = "session_id, holder, +acquired_at, +expires_at"

// LiveCompressionLock returns the compression lock on id that is live at now, or nil when
// there is none or the database has no compression_locks table.
func (db *DB) LiveCompressionLock(ctx context.Context, id string, now float64) (*CompressionLock, error) {
	if !db.schema.HasCompressionLocks {
		return nil, nil
	}
	return liveLock(ctx, db.sql, id, now)
}

func liveLock(ctx context.Context, q querier, id string, now float64) (*CompressionLock, error) {
	var lid, holder string
	var acquired, expires any
	err := q.QueryRowContext(ctx, "SELECT "+lockColumns+
		" FROM compression_locks WHERE session_id = ? AND "+liveLockAt(""), id, now).
		Scan(&lid, &holder, &acquired, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(fmt.Sprintf("read compression lock of %q", id), err, false)
	}
	l, err := newLock(lid, holder, acquired, expires)
	return &l, err
}

// CompressionLocks returns every compression_locks row (a small table), ordered by session
// id; nil when the table does not exist.
func (db *DB) CompressionLocks(ctx context.Context) ([]CompressionLock, error) {
	if !db.schema.HasCompressionLocks {
		return nil, nil
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT "+lockColumns+" FROM compression_locks ORDER BY session_id")
	if err != nil {
		return nil, classify("read compression locks", err, false)
	}
	defer rows.Close()
	var out []CompressionLock
	for rows.Next() {
		var id, holder string
		var acquired, expires any
		if err := rows.Scan(&id, &holder, &acquired, &expires); err != nil {
			return nil, classify("read compression locks", err, false)
		}
		l, err := newLock(id, holder, acquired, expires)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read compression locks", err, false)
	}
	return out, nil
}
