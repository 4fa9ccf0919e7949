package statedb

import (
	"context"
	"fmt"
)

// QuickCheck runs PRAGMA quick_check (deep: PRAGMA integrity_check) and returns the problems
// SQLite reports; none means the file is sound. Both read every page, which takes time on a
// large database.
func (db *DB) QuickCheck(ctx context.Context, deep bool) ([]string, error) {
	pragma := "PRAGMA quick_check"
	if deep {
		pragma = "PRAGMA integrity_check"
	}
	lines, err := queryStrings(ctx, db.sql, pragma)
	if err != nil {
		if isCorrupt(err) {
			return []string{err.Error()}, nil
		}
		return nil, fmt.Errorf("%s: %w", pragma, err)
	}
	if len(lines) == 1 && lines[0] == "ok" {
		return nil, nil
	}
	return lines, nil
}

// OpenWithExpiredLock returns the ids of open sessions whose compression lock expired before
// now (a compression that died mid-way; the runtime reclaims such locks), ordered by id; nil
// when the database has no compression_locks table.
func (db *DB) OpenWithExpiredLock(ctx context.Context, now float64) ([]string, error) {
	if !db.schema.HasCompressionLocks {
		return nil, nil
	}
	ids, err := queryStrings(ctx, db.sql, `SELECT s.id FROM compression_locks l
		JOIN sessions s ON s.id = l.session_id
		WHERE l.expires_at < ? AND s.ended_at IS NULL ORDER BY s.id`, now)
	if err != nil {
		return nil, classify("read expired compression locks", err, false)
	}
	return ids, nil
}
