package statedb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// View is state.db as the runtime of another generation would see it after its open and the
// changes its first start has made so far, predicted without writing anything: rows deleted
// (with their messages, and their children's parent_session_id cleared, as prune_sessions
// does), rows reopened by the load-time recovery, rows the orphan finalize ended, and the
// sessions columns the runtime's open adds to an older file (with the value existing rows get,
// and the v18 backfill from sessions.json). Every query of the view runs the runtime's own SQL
// (the predicates of this package) against a WITH clause that shadows `sessions` and
// `messages` with the predicted tables; the file itself is only read.
type View struct {
	db      *DB
	now     float64
	columns []string // the view's sessions columns: SQL expressions "… AS name"
	has     map[string]bool
	deleted []string
	gone    map[string]bool
	// reopened and finalized are the ids whose ended_at/end_reason the start changed.
	reopened, finalized map[string]bool
	fills               []PeerFill
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
// the runtime declares it (its open adds a missing declared column, _reconcile_columns) and
// the value the rows of an older file get then.
type viewColumn struct {
	name  string
	since int
	added string
}

// viewColumns are the columns the runtime rules run on the view read (the ghost and orphan
// predicates, prune_sessions, find_latest_gateway_session_for_peer).
var viewColumns = []viewColumn{
	{"id", 1, ""}, {"source", 1, ""}, {"user_id", 1, ""}, {"title", 1, ""}, {"parent_session_id", 1, ""},
	{"started_at", 1, ""}, {"ended_at", 1, ""}, {"end_reason", 1, ""}, {"message_count", 1, ""},
	{"api_call_count", 7, "0"}, // 5fb143169 (2026-04-22): INTEGER DEFAULT 0; r0506 (3b750715a)
	// 86e64900b (2026-06-28): the gateway peer of a row; r0703 (52d0d671e). NULL, or what the
	// v18 backfill copies.
	{"session_key", 17, "NULL"}, {"chat_id", 17, "NULL"}, {"chat_type", 17, "NULL"}, {"thread_id", 17, "NULL"},
	{"last_activity_at", 24, "NULL"}, // c2088efe9 (v24): NULL until the next activity
}

// peerColumns are the columns the v18 backfill fills.
var peerColumns = map[string]bool{"session_key": true, "chat_id": true, "chat_type": true, "thread_id": true}

// NewView returns the view of db as the runtime whose open writes schema toSchema sees it
// right after that open, at now (the time its start runs): nothing changed yet.
func (db *DB) NewView(toSchema int, now float64) *View {
	v := &View{db: db, now: now, has: map[string]bool{}, gone: map[string]bool{},
		reopened: map[string]bool{}, finalized: map[string]bool{}}
	for _, c := range viewColumns {
		switch {
		case db.schema.SessionColumns[c.name]:
			v.columns = append(v.columns, columnExpr(c.name)+" AS "+c.name)
		case c.added != "" && toSchema >= c.since:
			v.columns = append(v.columns, addedExpr(c)+" AS "+c.name)
		default:
			continue
		}
		v.has[c.name] = true
	}
	return v
}

// columnExpr is the view's value of a column the file has: the start's changes applied.
func columnExpr(name string) string {
	switch {
	case name == "parent_session_id":
		return "CASE WHEN s0.parent_session_id IN (SELECT id FROM _deleted) THEN NULL ELSE s0.parent_session_id END"
	case name == "ended_at":
		return "CASE WHEN s0.id IN (SELECT id FROM _reopened) THEN NULL WHEN s0.id IN (SELECT id FROM _finalized) THEN (SELECT now FROM _clock) ELSE s0.ended_at END"
	case name == "end_reason":
		return "CASE WHEN s0.id IN (SELECT id FROM _reopened) THEN NULL WHEN s0.id IN (SELECT id FROM _finalized) THEN '" +
			EndReasonOrphanedCompression + "' ELSE s0.end_reason END"
	case peerColumns[name]:
		return "COALESCE(s0." + name + ", f." + name + ")"
	}
	return "s0." + name
}

// addedExpr is the view's value of a column the runtime's open adds.
func addedExpr(c viewColumn) string {
	if peerColumns[c.name] {
		return "f." + c.name
	}
	return c.added
}

// Has reports whether the view's sessions table has column name.
func (v *View) Has(name string) bool { return v.has[name] }

// SetFills records the v18 backfill the target's open runs (PeerBackfillVersion), one fill
// per sessions.json entry in the file's order; where several entries point at one row, the
// first value of each column wins, as the migration's COALESCE does.
func (v *View) SetFills(fills []PeerFill) {
	byID := map[string]int{}
	v.fills = nil
	for _, f := range fills {
		i, ok := byID[f.ID]
		if !ok {
			byID[f.ID] = len(v.fills)
			v.fills = append(v.fills, f)
			continue
		}
		m := &v.fills[i]
		m.SessionKey, m.ChatID = firstValue(m.SessionKey, f.SessionKey), firstValue(m.ChatID, f.ChatID)
		m.ChatType, m.ThreadID = firstValue(m.ChatType, f.ChatType), firstValue(m.ThreadID, f.ThreadID)
	}
}

func firstValue(a, b any) any {
	if a != nil {
		return a
	}
	return b
}

// Delete records sessions the start deletes (prune_sessions, the ghost prune).
func (v *View) Delete(ids ...string) {
	for _, id := range ids {
		if !v.gone[id] {
			v.gone[id] = true
			v.deleted = append(v.deleted, id)
		}
	}
}

// Deleted reports whether the start deleted session id.
func (v *View) Deleted(id string) bool { return v.gone[id] }

// Reopen records sessions the load-time recovery reopens (reopen_session: ended_at and
// end_reason cleared).
func (v *View) Reopen(ids ...string) {
	for _, id := range ids {
		v.reopened[id] = true
		delete(v.finalized, id)
	}
}

// Reopened reports whether the start reopened session id.
func (v *View) Reopened(id string) bool { return v.reopened[id] }

// Finalize records sessions the orphan finalize ends (ended_at = now, end_reason
// orphaned_compression).
func (v *View) Finalize(ids ...string) {
	for _, id := range ids {
		v.finalized[id] = true
		delete(v.reopened, id)
	}
}

// with returns the WITH clause of the view's queries and its five arguments (?1 … ?5); a
// query's own "?" marks follow them.
func (v *View) with() (string, []any, error) {
	args := make([]any, 0, 5)
	for _, x := range []any{append([]string{}, v.deleted...), setList(v.reopened), setList(v.finalized)} {
		b, err := json.Marshal(x)
		if err != nil {
			return "", nil, fmt.Errorf("view: %w", err)
		}
		args = append(args, string(b))
	}
	fills, err := json.Marshal(append([]PeerFill{}, v.fills...)) // "[]", never "null": json_each(null) has a row
	if err != nil {
		return "", nil, fmt.Errorf("view: %w", err)
	}
	args = append(args, v.now, string(fills))
	return `WITH _deleted(id) AS (SELECT value FROM json_each(?1)),
	_reopened(id) AS (SELECT value FROM json_each(?2)),
	_finalized(id) AS (SELECT value FROM json_each(?3)),
	_clock(now) AS (SELECT ?4),
	_fills AS (SELECT json_extract(value, '$.id') AS id, json_extract(value, '$.session_key') AS session_key,
		json_extract(value, '$.chat_id') AS chat_id, json_extract(value, '$.chat_type') AS chat_type,
		json_extract(value, '$.thread_id') AS thread_id FROM json_each(?5)),
	sessions AS NOT MATERIALIZED (SELECT ` + strings.Join(v.columns, ", ") + `
		FROM main.sessions s0 LEFT JOIN _fills f ON f.id = s0.id WHERE s0.id NOT IN (SELECT id FROM _deleted)),
	messages AS NOT MATERIALIZED (SELECT * FROM main.messages WHERE session_id NOT IN (SELECT id FROM _deleted))
	`, args, nil
}

func setList(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	return out
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
	with, wargs, err := v.with()
	if err != nil {
		return nil, err
	}
	out, err := queryStrings(ctx, v.db.sql, with+query, append(wargs, args...)...)
	if err != nil {
		return nil, classify(op, err, false)
	}
	return out, nil
}

// EndReasons returns, for each of ids that the view has a row for, its end_reason (nil while
// NULL): what get_session tells the load-time prune.
func (v *View) EndReasons(ctx context.Context, ids []string) (map[string]*string, error) {
	const op = "view: read sessions"
	with, wargs, err := v.with()
	if err != nil {
		return nil, err
	}
	list, err := json.Marshal(append([]string{}, ids...))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	rows, err := v.db.sql.QueryContext(ctx, with+"SELECT id, end_reason FROM sessions WHERE id IN (SELECT value FROM json_each(?))",
		append(wargs, string(list))...)
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
	with, wargs, err := v.with()
	if err != nil {
		return Recovered{}, false, err
	}
	return recoverWith(ctx, v.db.sql, rq, with, wargs, key, source, peer)
}

// pruneAge is prune_sessions' age condition by rule; its one argument is the cutoff.
var pruneAge = map[sessionsjson.PruneAge]string{
	// hermes_state.py prune_sessions, b8663813b … c2a3b9ce5.
	sessionsjson.PruneByStart: `s.started_at < ?`,
	// _prune_filter_where last_active_before at 481156139 (a228b8150): the latest message,
	// else started_at; last_activity_at is not read.
	sessionsjson.PruneByInactivity: `COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at) < ?`,
}

// PruneCandidates lists the sessions prune_sessions(older_than_days) deletes on the view:
// ended sessions older than cutoff (now - days·86400) by the age rule, oldest first.
func (v *View) PruneCandidates(ctx context.Context, cutoff float64, age sessionsjson.PruneAge) ([]string, error) {
	return v.queryIDs(ctx, "view: prune candidates", `SELECT s.id FROM sessions s WHERE s.ended_at IS NOT NULL AND `+
		pruneAge[age]+` ORDER BY s.started_at, s.id`, cutoff)
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
	with, wargs, err := v.with()
	if err != nil {
		return nil, false, err
	}
	rows, err := v.db.sql.QueryContext(ctx, with+`, _ghosts AS (SELECT sessions.id AS id, sessions.started_at AS started_at
		FROM sessions WHERE `+ghostPredicate+`)
		SELECT g.id, EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = g.id AND c.id NOT IN (SELECT id FROM _ghosts))
		FROM _ghosts g ORDER BY g.started_at, g.id`, append(wargs, cutoff)...)
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
