package statedb

import (
	"context"
	"fmt"
)

// CoreTables are the tables QuickCheck verifies one by one (each only when present): the
// ones sessionctl reads and repairs. FTS5 shadow tables are deliberately left out: verifying
// every FTS index is what makes the whole-database check slow (about 15x on a 1 GB home).
var CoreTables = []string{"schema_version", "sessions", "messages", "state_meta", "gateway_routing", "compression_locks"}

// QuickCheck verifies the database structure and returns the problems SQLite reports; none
// means sound. The default runs `PRAGMA quick_check(<table>)` for each core table present
// (the table's b-tree and its indexes, without the FTS5 integrity checks the whole-database
// quick_check adds). deep runs `PRAGMA integrity_check` over the whole file, FTS indexes
// included, which reads every page and takes long on a large database.
func (db *DB) QuickCheck(ctx context.Context, deep bool) ([]string, error) {
	if deep {
		return db.runCheck(ctx, "PRAGMA integrity_check", "")
	}
	var out []string
	for _, table := range CoreTables {
		if !db.schema.Tables[table] {
			continue
		}
		pragma := "PRAGMA quick_check(" + quoteIdent(table) + ")"
		problems, err := db.runCheck(ctx, pragma, table)
		if err != nil {
			return nil, err
		}
		out = append(out, problems...)
	}
	return out, nil
}

// runCheck runs one check pragma; problems are prefixed with the table when one is given.
func (db *DB) runCheck(ctx context.Context, pragma, table string) ([]string, error) {
	prefix := ""
	if table != "" {
		prefix = table + ": "
	}
	lines, err := queryStrings(ctx, db.sql, pragma)
	if err != nil {
		if isCorrupt(err) {
			return []string{prefix + err.Error()}, nil
		}
		return nil, fmt.Errorf("%s: %w", pragma, err)
	}
	if len(lines) == 1 && lines[0] == "ok" {
		return nil, nil
	}
	for i, l := range lines {
		lines[i] = prefix + l
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
		WHERE NOT (`+liveLockAt("l.")+`) AND s.ended_at IS NULL ORDER BY s.id`, now)
	if err != nil {
		return nil, classify("read expired compression locks", err, false)
	}
	return ids, nil
}
