package statedb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// Object kinds of ObjectSpace.Kind.
const (
	KindTable     = "table"      // an ordinary table
	KindIndex     = "index"      // an index (an automatic one included)
	KindFTSShadow = "fts-shadow" // a shadow table of an FTS5 virtual table (Table names it)
	KindSchema    = "schema"     // sqlite_schema itself
)

// ObjectSpace is the space one b-tree of the file takes, as the dbstat virtual table counts
// it: every page of the b-tree (interior, leaf, overflow) and their bytes.
type ObjectSpace struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Table string `json:"table"` // the table an index belongs to; the FTS table of a shadow table
	Pages int64  `json:"pages"`
	Bytes int64  `json:"bytes"`
}

// Pager is the file's page geometry and its connection's checkpoint threshold.
type Pager struct {
	PageSize      int64 // PRAGMA page_size
	PageCount     int64 // PRAGMA page_count (the database as this connection's snapshot sees it)
	FreelistCount int64 // PRAGMA freelist_count
	// AutoCheckpoint is PRAGMA wal_autocheckpoint in pages: SQLite's default (1000), which the
	// runtime's connections keep unless r0817's config sets database.wal_autocheckpoint.
	AutoCheckpoint int64
}

// Pager reads the page geometry.
func (db *DB) Pager(ctx context.Context) (Pager, error) {
	var p Pager
	for _, st := range []struct {
		q    string
		dest *int64
	}{{"PRAGMA page_size", &p.PageSize}, {"PRAGMA page_count", &p.PageCount}, {"PRAGMA freelist_count", &p.FreelistCount},
		{"PRAGMA wal_autocheckpoint", &p.AutoCheckpoint}} {
		if err := db.sql.QueryRowContext(ctx, st.q).Scan(st.dest); err != nil {
			return p, classify(st.q, err, false)
		}
	}
	return p, nil
}

// HasDBStat reports whether the linked SQLite has the dbstat virtual table
// (SQLITE_ENABLE_DBSTAT_VTAB, which modernc.org/sqlite is built with).
func (db *DB) HasDBStat(ctx context.Context) (bool, error) {
	var used bool
	err := db.sql.QueryRowContext(ctx, "SELECT sqlite_compileoption_used('ENABLE_DBSTAT_VTAB')").Scan(&used)
	if err != nil {
		return false, classify("read compile options", err, false)
	}
	return used, nil
}

// ObjectSpaces returns the space of every b-tree of the file (dbstat's aggregate rows, one
// per b-tree: it walks every page once, streaming), largest first, then by name. The kind
// and owning table come from sqlite_schema; a table whose name starts with an FTS5 table's
// name and "_" and that its module creates (data, idx, content, docsize, config) is that FTS
// table's shadow table.
func (db *DB) ObjectSpaces(ctx context.Context) ([]ObjectSpace, error) {
	const q = `SELECT d.name, COALESCE(m.type, 'table'), COALESCE(m.tbl_name, d.name),
		COALESCE(v.name, ''), d.pageno, d.pgsize
		FROM dbstat AS d
		LEFT JOIN sqlite_schema AS m ON m.name = d.name
		LEFT JOIN sqlite_schema AS v ON v.type = 'table' AND v.sql LIKE 'CREATE VIRTUAL TABLE%fts5%'
			AND d.name IN (v.name || '_data', v.name || '_idx', v.name || '_content', v.name || '_docsize', v.name || '_config')
		WHERE d.aggregate = TRUE
		ORDER BY d.pgsize DESC, d.name`
	rows, err := db.sql.QueryContext(ctx, q)
	if err != nil {
		return nil, classify("read dbstat", err, false)
	}
	defer rows.Close()
	var out []ObjectSpace
	for rows.Next() {
		var o ObjectSpace
		var typ, fts string
		if err := rows.Scan(&o.Name, &typ, &o.Table, &fts, &o.Pages, &o.Bytes); err != nil {
			return nil, classify("read dbstat", err, false)
		}
		o.Kind = objectKind(o.Name, typ, fts)
		if fts != "" {
			o.Table = fts
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read dbstat", err, false)
	}
	return out, nil
}

// objectKind names a b-tree's kind.
func objectKind(name, typ, fts string) string {
	switch {
	case name == "sqlite_schema" || name == "sqlite_master":
		return KindSchema
	case fts != "":
		return KindFTSShadow
	case typ == "index":
		return KindIndex
	}
	return KindTable
}

// SourceCount is the sessions of one source.
type SourceCount struct {
	Source   string `json:"source"`
	Sessions int64  `json:"sessions"`
	Ended    int64  `json:"ended"`
	Messages int64  `json:"messages"`
}

// SessionsBySource counts the sessions and their messages by source (NULL as ""), by source.
func (db *DB) SessionsBySource(ctx context.Context) ([]SourceCount, error) {
	const q = `SELECT COALESCE(s.source, ''), COUNT(*), COALESCE(SUM(s.ended_at IS NOT NULL), 0),
		COALESCE(SUM((SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)), 0)
		FROM sessions s GROUP BY 1 ORDER BY 1`
	rows, err := db.sql.QueryContext(ctx, q)
	if err != nil {
		return nil, classify("count sessions by source", err, false)
	}
	defer rows.Close()
	var out []SourceCount
	for rows.Next() {
		var c SourceCount
		if err := rows.Scan(&c.Source, &c.Sessions, &c.Ended, &c.Messages); err != nil {
			return nil, classify("count sessions by source", err, false)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// AgeBucket is the sessions whose age (by the generation's prune age rule) falls in
// [MinDays, MaxDays) days; MaxDays 0 is unbounded. Unknown counts the ages that are not a
// number (SQLite orders TEXT after every number: the runtime's prune never takes them).
type AgeBucket struct {
	Label    string  `json:"label"`
	MinDays  float64 `json:"min_days"`
	MaxDays  float64 `json:"max_days,omitempty"`
	Sessions int64   `json:"sessions"`
	Ended    int64   `json:"ended"`
}

// ageBuckets are the buckets of SessionsByAge, in order.
var ageBuckets = []AgeBucket{{Label: "<1d", MaxDays: 1}, {Label: "1-7d", MinDays: 1, MaxDays: 7},
	{Label: "7-30d", MinDays: 7, MaxDays: 30}, {Label: "30-90d", MinDays: 30, MaxDays: 90},
	{Label: "90-365d", MinDays: 90, MaxDays: 365}, {Label: ">=365d", MinDays: 365}, {Label: "unknown"}}

// ageExpr is the time a session's age is measured from under each prune age rule
// (prune_sessions compares it with now - days·86400).
var ageExpr = map[sessionsjson.PruneAge]string{
	// hermes_state.py prune_sessions, b8663813b … c2a3b9ce5.
	sessionsjson.PruneByStart: `s.started_at`,
	// _prune_filter_where last_active_before at 481156139 (a228b8150): the latest message,
	// else started_at; last_activity_at is not read.
	sessionsjson.PruneByInactivity: `COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)`,
}

// SessionsByAge counts the sessions by the age the generation's prune rule measures at now,
// in the buckets of ageBuckets (every bucket listed, empty ones too).
func (db *DB) SessionsByAge(ctx context.Context, now float64, age sessionsjson.PruneAge) ([]AgeBucket, error) {
	q := `SELECT CASE WHEN typeof(t) NOT IN ('integer', 'real') THEN 6
			WHEN ?1 - t < 86400 THEN 0 WHEN ?1 - t < 7*86400 THEN 1 WHEN ?1 - t < 30*86400 THEN 2
			WHEN ?1 - t < 90*86400 THEN 3 WHEN ?1 - t < 365*86400 THEN 4 ELSE 5 END AS b,
		COUNT(*), COALESCE(SUM(ended), 0)
		FROM (SELECT ` + ageExpr[age] + ` AS t, s.ended_at IS NOT NULL AS ended FROM sessions s) GROUP BY b`
	rows, err := db.sql.QueryContext(ctx, q, now)
	if err != nil {
		return nil, classify("count sessions by age", err, false)
	}
	defer rows.Close()
	out := append([]AgeBucket(nil), ageBuckets...)
	for rows.Next() {
		var b int
		var n, ended int64
		if err := rows.Scan(&b, &n, &ended); err != nil {
			return nil, classify("count sessions by age", err, false)
		}
		out[b].Sessions, out[b].Ended = n, ended
	}
	return out, rows.Err()
}

// MessageCount counts the messages of the sessions ids (chunked like the runtime's IN lists).
func (db *DB) MessageCount(ctx context.Context, ids []string) (int64, error) {
	var total int64
	for _, chunk := range chunks(ids) {
		var n int64
		err := db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM messages WHERE session_id IN ("+placeholders(len(chunk))+")",
			stringArgs(chunk)...).Scan(&n)
		if err != nil {
			return 0, classify("count messages", err, false)
		}
		total += n
	}
	return total, nil
}

// EachSessionID calls fn with every session id, whether the session has a message, and its
// source, in id order, streaming: fn runs while the query is open and must not use db.
func (db *DB) EachSessionID(ctx context.Context, fn func(id string, hasMessages bool, source string) error) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT s.id, EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id),
		COALESCE(s.source, '') FROM sessions s ORDER BY s.id`)
	if err != nil {
		return classify("read session ids", err, false)
	}
	defer rows.Close()
	for rows.Next() {
		var id sql.NullString
		var has bool
		var source string
		if err := rows.Scan(&id, &has, &source); err != nil {
			return classify("read session ids", err, false)
		}
		if err := fn(id.String, has, source); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read session ids: %w", err)
	}
	return nil
}
