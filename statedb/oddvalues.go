package statedb

import (
	"context"
	"fmt"
)

// OddRow is one value of a class the runtime never writes in its column (OddValue), and the
// row holding it: a sessions row by id, or a compression_locks row by session_id.
type OddRow struct {
	Table string // "sessions" or "compression_locks"
	ID    string // sessions.id, or compression_locks.session_id
	OddValue
}

// OddRows lists every odd value of sessions (started_at, ended_at, api_call_count: see
// Session.OddValues) and of compression_locks (acquired_at, expires_at not a number), by
// table, id and column. The runtime's SQL compares such values as SQLite does (Compare):
// TEXT after every number.
func (db *DB) OddRows(ctx context.Context) ([]OddRow, error) {
	col := func(name string) string {
		if db.schema.SessionColumns[name] {
			return "+" + name
		}
		return "NULL"
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT id, +started_at, `+col("ended_at")+`, `+col("api_call_count")+`
		FROM sessions WHERE typeof(started_at) NOT IN ('integer', 'real')
		OR typeof(`+col("ended_at")+`) NOT IN ('integer', 'real', 'null')
		OR typeof(`+col("api_call_count")+`) NOT IN ('integer', 'null') ORDER BY id`)
	if err != nil {
		return nil, classify("read odd values", err, false)
	}
	defer rows.Close()
	var out []OddRow
	for rows.Next() {
		var s Session
		var started, ended, calls any
		if err := rows.Scan(&s.ID, &started, &ended, &calls); err != nil {
			return nil, classify("read odd values", err, false)
		}
		for _, v := range []struct {
			raw any
			dst *Value
		}{{started, &s.Started}, {ended, &s.Ended}, {calls, &s.APICalls}} {
			if *v.dst, err = valueFromDriver(v.raw); err != nil {
				return nil, fmt.Errorf("session %q: %w", s.ID, err)
			}
		}
		for _, odd := range s.OddValues() {
			out = append(out, OddRow{"sessions", s.ID, odd})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read odd values", err, false)
	}
	locks, err := db.CompressionLocks(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range locks {
		for _, c := range []string{"acquired_at", "expires_at"} {
			if v, ok := l.OddValues[c]; ok {
				out = append(out, OddRow{"compression_locks", l.SessionID, OddValue{c, v}})
			}
		}
	}
	return out, nil
}
