package statedb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// View is state.db as the runtime of another generation would see it after its open and the
// changes its first start has made so far, predicted without writing to the file: the
// sessions columns the runtime's rules read are copied into a TEMP table of the connection
// (the columns its open adds to an older file get the value existing rows get, and the v18
// backfill from sessions.json is applied), and the start's changes are made there with the
// runtime's own statements: rows deleted (their children's parent_session_id cleared first,
// as prune_sessions does), reopened by the load-time recovery, ended by the orphan finalize.
// Every query of the view runs the runtime's own SQL (the predicates of this package) with
// `sessions` bound to that table by a WITH clause; `messages` is the file's (a deleted row's
// messages are never looked up again: the predicates only look up those of remaining rows).
// Close drops the table.
//
// The copy is made only when a change needs it (Delete, or the v18 backfill): until then the
// view reads the file's sessions rows in place, with the rows reopened or ended so far (a
// TEMP table of their ended_at and end_reason) laid over them, so that a start that deletes
// nothing does not copy 100,000 rows and build five indexes to read a few hundred of them
// (issue 30: two thirds of status' time on such a home), and the queries use the file's own
// indexes, as the runtime's do.
type View struct {
	db       *DB
	table    string // the TEMP table holding the view's sessions rows, once copied
	has      map[string]bool
	reopened map[string]bool
	// copied: the rows are in table; until then names and values select them from the file
	// (values: each column's expression over main.sessions s0) and overlaid counts the rows
	// of the overlay (table + "_ended": id, ended_at, end_reason).
	copied   bool
	decl     []string
	names    []string
	values   []string
	overlaid int
}

// PeerFill is what the v18 migration copies from one sessions.json entry into the sessions
// row it points at (hermes_state.py _backfill_gateway_metadata_from_sessions_json, 747386ecf;
// c2a3b9ce5): each column only where the row holds NULL. Values are as the JSON holds them
// (string, number, bool or nil), bound as Python binds them.
type PeerFill struct {
	ID         string `json:"id"`
	SessionKey any    `json:"session_key"`
	ChatID     any    `json:"chat_id"`
	ChatType   any    `json:"chat_type"`
	ThreadID   any    `json:"thread_id"`
}

// PeerBackfillVersion is the schema version whose migration runs the sessions.json backfill:
// a runtime writing it or later runs it once on a file older than it.
const PeerBackfillVersion = 18

// viewColumn is a sessions column the view's queries read: the schema version from which
// the runtime declares it (its open adds a missing declared column, _reconcile_columns), its
// declared type and the value the rows of an older file get then.
type viewColumn struct {
	name  string
	since int
	typ   string
	added string
}

// viewColumns are the columns the runtime rules run on the view read (the ghost and orphan
// predicates, prune_sessions, find_latest_gateway_session_for_peer).
var viewColumns = []viewColumn{
	{"id", 1, "TEXT", ""}, {"source", 1, "TEXT", ""}, {"user_id", 1, "TEXT", ""}, {"title", 1, "TEXT", ""},
	{"parent_session_id", 1, "TEXT", ""}, {"started_at", 1, "REAL", ""}, {"ended_at", 1, "REAL", ""},
	{"end_reason", 1, "TEXT", ""}, {"message_count", 1, "INTEGER", ""},
	{"api_call_count", 7, "INTEGER", "0"}, // 5fb143169 (2026-04-22): INTEGER DEFAULT 0; r0506 (3b750715a)
	// 86e64900b (2026-06-28): the gateway peer of a row; r0703 (52d0d671e): NULL, or what the
	// v18 backfill copies.
	{"session_key", 17, "TEXT", "NULL"}, {"chat_id", 17, "TEXT", "NULL"}, {"chat_type", 17, "TEXT", "NULL"},
	{"thread_id", 17, "TEXT", "NULL"},
	{"last_activity_at", 24, "REAL", "NULL"}, // c2088efe9 (v24): NULL until the next activity
}

// viewIndexes are the indexes of the view's table, like the runtime's own on the file: the
// key lookup's, idx_sessions_parent, idx_sessions_source, idx_sessions_started and
// idx_sessions_gateway_peer (which the peer fallback's equal tests use, peerTerms).
var viewIndexes = []string{
	"(session_key, source, started_at)", "(parent_session_id)", "(source)", "(started_at)",
	"(source, user_id, chat_id, chat_type, thread_id)",
}

// viewSeq numbers the views' tables.
var viewSeq atomic.Int64

// NewView returns the view of db as the runtime whose open writes schema toSchema sees it
// right after that open (fills: the v18 backfill when that open runs it, else nil).
// Close it when done; db must not be used by another goroutine meanwhile.
func (db *DB) NewView(ctx context.Context, toSchema int, fills []PeerFill) (*View, error) {
	v := &View{db: db, table: fmt.Sprintf("temp.sessionctl_view_%d", viewSeq.Add(1)), has: map[string]bool{},
		reopened: map[string]bool{}}
	types, err := columnTypes(ctx, db.sql, "sessions")
	if err != nil {
		return nil, classify("view: read sessions columns", err, false)
	}
	var decl, names, values []string
	for _, c := range viewColumns {
		typ, ok := types[c.name]
		value := "s0." + c.name
		switch {
		case ok:
		case c.added != "" && toSchema >= c.since:
			typ, value = c.typ, c.added
		default:
			continue
		}
		if c.name == "id" {
			typ += " PRIMARY KEY"
		}
		decl, names, values = append(decl, c.name+" "+typ), append(names, c.name), append(values, value)
		v.has[c.name] = true
	}
	v.decl, v.names, v.values = decl, names, values
	err = v.exec(ctx, "view: build", nil, "CREATE TEMP TABLE "+v.overlay()[len("temp."):]+" (id TEXT PRIMARY KEY, ended_at REAL, end_reason TEXT)")
	if err == nil && len(fills) > 0 {
		err = v.copy(ctx, fills)
	}
	if err != nil {
		return nil, errors.Join(err, v.Close())
	}
	return v, nil
}

// overlay is the TEMP table of the rows reopened or ended before the copy.
func (v *View) overlay() string { return v.table + "_ended" }

// source is the SELECT of the view's rows from the file, with the overlay laid over them.
func (v *View) source() string {
	cols := make([]string, len(v.names))
	for i, name := range v.names {
		value := v.values[i]
		if v.overlaid > 0 && (name == "ended_at" || name == "end_reason") {
			value = "CASE WHEN o.id IS NULL THEN " + value + " ELSE o." + name + " END"
		}
		cols[i] = value + " AS " + name
	}
	from := " FROM main.sessions s0"
	if v.overlaid > 0 {
		from += " LEFT JOIN " + v.overlay() + " o ON o.id = s0.id"
	}
	return "SELECT " + strings.Join(cols, ", ") + from
}

// copy copies the view's rows into its table (the file's, the overlay laid over them),
// applies the backfill and builds the indexes; the overlay is emptied.
func (v *View) copy(ctx context.Context, fills []PeerFill) error {
	if v.copied {
		return nil
	}
	if err := v.fill(ctx, v.decl, v.names, fills); err != nil {
		return err
	}
	v.copied, v.overlaid = true, 0
	return v.exec(ctx, "view: build", nil, "DELETE FROM "+v.overlay())
}

// fill creates the view's table from the file's sessions rows, applies the backfill and
// builds the indexes.
func (v *View) fill(ctx context.Context, decl, names []string, fills []PeerFill) error {
	stmts := []string{
		"CREATE TEMP TABLE " + v.table[len("temp."):] + " (" + strings.Join(decl, ", ") + ")",
		"INSERT INTO " + v.table + " (" + strings.Join(names, ", ") + ") " + v.source(),
	}
	for i, cols := range viewIndexes {
		if v.indexable(cols) {
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX %s_%d ON %s %s", v.table, i, v.table[len("temp."):], cols))
		}
	}
	if err := v.exec(ctx, "view: build", nil, stmts...); err != nil {
		return err
	}
	return v.backfill(ctx, fills)
}

// indexable reports whether the view has every column an index names.
func (v *View) indexable(cols string) bool {
	for _, f := range strings.FieldsFunc(cols, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z') }) {
		if f != "coalesce" && !v.has[f] {
			return false
		}
	}
	return true
}

// backfill applies the v18 backfill's peer columns: each fill's values where the row holds
// NULL; where several entries point at one row, the first value of each column wins, as the
// migration's COALESCE does (mergeFills).
func (v *View) backfill(ctx context.Context, fills []PeerFill) error {
	if len(fills) == 0 {
		return nil
	}
	if err := v.require("view: backfill", "session_key", "chat_id", "chat_type", "thread_id"); err != nil {
		return err
	}
	data, err := json.Marshal(mergeFills(fills))
	if err != nil {
		return fmt.Errorf("view: backfill: %w", err)
	}
	fillsTable := v.table + "_fills"
	err = v.exec(ctx, "view: backfill", []any{string(data)},
		"CREATE TEMP TABLE "+strings.TrimPrefix(fillsTable, "temp.")+" (id PRIMARY KEY, session_key, chat_id, chat_type, thread_id)",
		"INSERT INTO "+fillsTable+" SELECT json_extract(value, '$.id'), json_extract(value, '$.session_key'), json_extract(value, '$.chat_id'),"+
			" json_extract(value, '$.chat_type'), json_extract(value, '$.thread_id') FROM json_each(?1)",
		"UPDATE "+v.table+" SET session_key = COALESCE(session_key, (SELECT f.session_key FROM "+fillsTable+" f WHERE f.id = "+v.table+".id)),"+
			" chat_id = COALESCE(chat_id, (SELECT f.chat_id FROM "+fillsTable+" f WHERE f.id = "+v.table+".id)),"+
			" chat_type = COALESCE(chat_type, (SELECT f.chat_type FROM "+fillsTable+" f WHERE f.id = "+v.table+".id)),"+
			" thread_id = COALESCE(thread_id, (SELECT f.thread_id FROM "+fillsTable+" f WHERE f.id = "+v.table+".id))"+
			" WHERE id IN (SELECT id FROM "+fillsTable+")",
		"DROP TABLE "+fillsTable)
	return errors.Join(err, v.exec(ctx, "view: backfill", nil, "DROP TABLE IF EXISTS "+fillsTable))
}

// mergeFills merges the fills of one row into the first one, each column keeping its first
// non-nil value.
func mergeFills(fills []PeerFill) []PeerFill {
	byID := map[string]int{}
	var out []PeerFill
	for _, f := range fills {
		i, ok := byID[f.ID]
		if !ok {
			byID[f.ID] = len(out)
			out = append(out, f)
			continue
		}
		m := &out[i]
		m.SessionKey, m.ChatID = firstValue(m.SessionKey, f.SessionKey), firstValue(m.ChatID, f.ChatID)
		m.ChatType, m.ThreadID = firstValue(m.ChatType, f.ChatType), firstValue(m.ThreadID, f.ThreadID)
	}
	return out
}

func firstValue(a, b any) any {
	if a != nil {
		return a
	}
	return b
}

// exec runs statements on the connection with args.
func (v *View) exec(ctx context.Context, op string, args []any, stmts ...string) error {
	for _, st := range stmts {
		if _, err := v.db.sql.ExecContext(ctx, st, args...); err != nil {
			return classify(op, err, false)
		}
	}
	return nil
}

// columnTypes maps the columns of table to their declared types.
func columnTypes(ctx context.Context, q querier, table string) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		out[name] = typ
	}
	return out, rows.Err()
}

// Close drops the view's tables.
func (v *View) Close() error {
	for _, t := range []string{v.table, v.overlay()} {
		if _, err := v.db.sql.Exec("DROP TABLE IF EXISTS " + t); err != nil {
			return fmt.Errorf("view: drop: %w", err)
		}
	}
	return nil
}

// Has reports whether the view's sessions table has column name.
// Delete deletes sessions as prune_sessions does (the start's auto-prune, the ghost prune):
// the rows naming them as parent are orphaned first.
func (v *View) Delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := v.copy(ctx, nil); err != nil {
		return err
	}
	return v.change(ctx, "view: delete", ids, nil,
		"UPDATE "+v.table+" SET parent_session_id = NULL WHERE parent_session_id IN (SELECT value FROM json_each(?1))",
		"DELETE FROM "+v.table+" WHERE id IN (SELECT value FROM json_each(?1))")
}

// Reopen reopens sessions as reopen_session does (the load-time recovery): ended_at and
// end_reason cleared.
func (v *View) Reopen(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		v.reopened[id] = true
	}
	if !v.copied {
		return v.lay(ctx, "view: reopen", ids, nil, "NULL", "NULL")
	}
	return v.change(ctx, "view: reopen", ids, nil,
		"UPDATE "+v.table+" SET ended_at = NULL, end_reason = NULL WHERE id IN (SELECT value FROM json_each(?1))")
}

// Reopened reports whether the start reopened session id.
func (v *View) Reopened(id string) bool { return v.reopened[id] }

// Finalize ends sessions as the orphan finalize does: ended_at = now, end_reason
// orphaned_compression.
func (v *View) Finalize(ctx context.Context, now float64, ids ...string) error {
	if !v.copied {
		return v.lay(ctx, "view: finalize", ids, []any{now}, "?2", "'"+EndReasonOrphanedCompression+"'")
	}
	return v.change(ctx, "view: finalize", ids, []any{now},
		"UPDATE "+v.table+" SET ended_at = ?2, end_reason = '"+EndReasonOrphanedCompression+"' WHERE id IN (SELECT value FROM json_each(?1))")
}

// lay records in the overlay that the rows ids (those the file has) now hold endedAt and
// endReason (SQL expressions; ?1 is the ids, args follow), as the copy's UPDATE would.
func (v *View) lay(ctx context.Context, op string, ids []string, args []any, endedAt, endReason string) error {
	if len(ids) == 0 {
		return nil
	}
	err := v.change(ctx, op, ids, args, "INSERT OR REPLACE INTO "+v.overlay()+" (id, ended_at, end_reason) SELECT s0.id, "+endedAt+", "+endReason+
		" FROM main.sessions s0 WHERE s0.id IN (SELECT value FROM json_each(?1))")
	if err != nil {
		return err
	}
	if err := v.db.sql.QueryRowContext(ctx, "SELECT count(*) FROM "+v.overlay()).Scan(&v.overlaid); err != nil {
		return classify(op, err, false)
	}
	return nil
}

// change runs stmts on the view's table with the ids as ?1 (a JSON array) and args after it.
func (v *View) change(ctx context.Context, op string, ids []string, args []any, stmts ...string) error {
	if len(ids) == 0 {
		return nil
	}
	list, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return v.exec(ctx, op, append([]any{string(list)}, args...), stmts...)
}

// with returns the WITH clause binding `sessions` to the view's table in a query.
func (v *View) with() string {
	if !v.copied {
		return "WITH sessions AS NOT MATERIALIZED (" + v.source() + ") "
	}
	return "WITH sessions AS NOT MATERIALIZED (SELECT * FROM " + v.table + ") "
}

// require refuses a query that reads a column the view lacks: the runtime's own query would
// raise (sqlite3.OperationalError) on that file. The error wraps ErrUnsupportedSchema.
func (v *View) require(op string, cols ...string) error {
	for _, c := range cols {
		if !v.has[c] {
			return fmt.Errorf("%s: sessions.%s missing after the open: %w", op, c, ErrUnsupportedSchema)
		}
	}
	return nil
}

// queryIDs runs a one-column query on the view.
func (v *View) queryIDs(ctx context.Context, op, query string, args ...any) ([]string, error) {
	out, err := queryStrings(ctx, v.db.sql, v.with()+query, args...)
	if err != nil {
		return nil, classify(op, err, false)
	}
	return out, nil
}

// EndReasons returns, for each of ids that the view has a row for, its end_reason (nil while
// NULL): what get_session tells the load-time prune.
func (v *View) EndReasons(ctx context.Context, ids []string) (map[string]*string, error) {
	const op = "view: read sessions"
	list, err := json.Marshal(append([]string{}, ids...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	rows, err := v.db.sql.QueryContext(ctx, v.with()+"SELECT id, end_reason FROM sessions WHERE id IN (SELECT value FROM json_each(?))",
		string(list))
	if err != nil {
		return nil, classify(op, err, false)
	}
	defer rows.Close()
	out := make(map[string]*string, len(ids))
	for rows.Next() {
		var id string
		var reason *string
		if err := rows.Scan(&id, &reason); err != nil {
			return nil, classify(op, err, false)
		}
		out[id] = reason
	}
	if err := rows.Err(); err != nil {
		return nil, classify(op, err, false)
	}
	return out, nil
}

// Recover runs find_latest_gateway_session_for_peer of rule on the view (see
// RecoverGatewaySession). A lookup the runtime's query cannot run on the view (a column its
// open does not add) returns an error wrapping ErrUnsupportedSchema: the runtime's raises.
func (v *View) Recover(ctx context.Context, rule sessionsjson.RecoveryRule, key, source string, peer *Peer) (Recovered, bool, error) {
	rq, ok := recoveries[rule]
	if !ok {
		return Recovered{}, false, fmt.Errorf("view: no recovery lookup for rule %d: %w", rule, ErrUnsupportedSchema)
	}
	if err := v.require("recover gateway session", rq.columns...); err != nil {
		return Recovered{}, false, err
	}
	return recoverWith(ctx, v.db, rq, v.with(), key, source, peer)
}

// PruneCandidates lists the sessions prune_sessions(older_than_days) deletes on the view:
// ended sessions older than cutoff (now - days·86400) by the age rule, oldest first.
func (v *View) PruneCandidates(ctx context.Context, cutoff float64, age sessionsjson.PruneAge) ([]string, error) {
	return v.queryIDs(ctx, "view: prune candidates", `SELECT s.id FROM sessions s WHERE s.ended_at IS NOT NULL AND `+
		ageExpr[age]+` < ? ORDER BY s.started_at, s.id`, cutoff)
}

// Ghosts lists the sessions prune_empty_ghost_sessions matches on the view at cutoff (now -
// 24 h, strictly), oldest first, and whether its one DELETE fails: a row that is not a ghost
// names one of them as its parent, and the foreign key check at the end of the statement
// fails, so nothing is deleted (see keptGhosts).
func (v *View) Ghosts(ctx context.Context, cutoff float64) (ids []string, fails bool, err error) {
	const op = "view: ghost candidates"
	if err := v.require(op, "title"); err != nil {
		return nil, false, err
	}
	rows, err := v.db.sql.QueryContext(ctx, v.with()+`, _ghosts AS MATERIALIZED (SELECT sessions.id AS id, sessions.started_at AS started_at
		FROM sessions WHERE `+ghostPredicate+`)
		SELECT g.id, EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = g.id AND c.id NOT IN (SELECT id FROM _ghosts))
		FROM _ghosts g ORDER BY g.started_at, g.id`, cutoff)
	if err != nil {
		return nil, false, classify(op, err, false)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var blocked bool
		if err := rows.Scan(&id, &blocked); err != nil {
			return nil, false, classify(op, err, false)
		}
		ids, fails = append(ids, id), fails || blocked
	}
	if err := rows.Err(); err != nil {
		return nil, false, classify(op, err, false)
	}
	return ids, fails, nil
}

// Orphans lists the sessions finalize_orphaned_compression_sessions ends on the view at
// cutoff (now - 7 days, strictly), oldest first. Like the runtime, it does not skip a
// session holding a live compression lock or turn lease.
func (v *View) Orphans(ctx context.Context, cutoff float64) ([]string, error) {
	const op = "view: finalize candidates"
	if err := v.require(op, "api_call_count"); err != nil {
		return nil, err
	}
	return v.queryIDs(ctx, op, `SELECT sessions.id FROM sessions WHERE `+orphanPredicate+oldestFirst, cutoff)
}
