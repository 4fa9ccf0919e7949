package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// CompressionLock is one compression_locks row (v14+).
type CompressionLock struct {
	SessionID  string
	Holder     string
	AcquiredAt float64
	ExpiresAt  float64
}

// Live reports whether the lock still holds at now (expires_at >= now, as the runtime checks).
func (l CompressionLock) Live(now float64) bool {
	return l.ExpiresAt >= now
}

const lockColumns = "session_id, holder, acquired_at, expires_at"

// LiveCompressionLock returns the compression lock on id that is live at now, or nil when
// there is none or the database has no compression_locks table.
func (db *DB) LiveCompressionLock(ctx context.Context, id string, now float64) (*CompressionLock, error) {
	if !db.schema.HasCompressionLocks {
		return nil, nil
	}
	return liveLock(ctx, db.sql, id, now)
}

func liveLock(ctx context.Context, q querier, id string, now float64) (*CompressionLock, error) {
	var l CompressionLock
	err := q.QueryRowContext(ctx, "SELECT "+lockColumns+
		" FROM compression_locks WHERE session_id = ? AND expires_at >= ?", id, now).
		Scan(&l.SessionID, &l.Holder, &l.AcquiredAt, &l.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(fmt.Sprintf("read compression lock of %q", id), err, false)
	}
	return &l, nil
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
		var l CompressionLock
		if err := rows.Scan(&l.SessionID, &l.Holder, &l.AcquiredAt, &l.ExpiresAt); err != nil {
			return nil, classify("read compression locks", err, false)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read compression locks", err, false)
	}
	return out, nil
}
