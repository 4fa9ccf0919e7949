package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// DefaultRetention is prune_sessions' default window: older_than_days=90, in seconds.
const DefaultRetention = 90 * 86400.0

// NeverActiveAge is `hermes sessions prune --never-active`'s default age,
// _NEVER_ACTIVE_DEFAULT_DAYS = 30, in seconds (hermes_cli/sessions_cmd.py, 174ce8770).
const NeverActiveAge = 30 * 86400.0

// Retention is what prune_sessions(older_than_days, source) selects: ended sessions older
// than Cutoff (now - older_than_days·86400, compared strictly) by the generation's age rule,
// of Source when it is not "" (the runtime's `if source:` skips an empty one).
type Retention struct {
	Cutoff float64
	Age    sessionsjson.PruneAge
	Source string
	// NeverActive selects what r0817's prune_never_active_keyed_sessions(older_than_days)
	// deletes instead (neverActiveWhere; Age and Source are not read), and with the sessions
	// every gateway_routing row, of any scope, whose entry names one of them.
	NeverActive bool
	// Filters are _prune_filter_where's keyword filters given (resolved to instants), ANDed
	// with the rest as the generation's filter set FilterSet builds them; one that
	// ReplacesAge drops the Cutoff bound, as the runtime drops older_than_days.
	Filters   []FilterArg
	FilterSet sessionsjson.PruneFilterSet
}

// AgeReplaced reports whether a filter given replaces the Cutoff bound.
func (r Retention) AgeReplaced() bool {
	for _, a := range r.Filters {
		if a.Filter.ReplacesAge {
			return true
		}
	}
	return false
}

// columns lists the sessions columns the filters read.
func (r Retention) columns() []string {
	var out []string
	for _, a := range r.Filters {
		out = append(out, a.Filter.Columns...)
	}
	return out
}

// neverActiveWhere is list_never_active_keyed_sessions' selection: open keyed rows with no
// title, no last_activity_at, no messages, tool calls, API calls or tokens, neither pinned nor
// archived, started before the cutoff (hermes_state.py at 481156139; 174ce8770).
const neverActiveWhere = `s.session_key IS NOT NULL AND s.ended_at IS NULL AND s.title IS NULL
	AND s.last_activity_at IS NULL AND COALESCE(s.message_count, 0) = 0 AND COALESCE(s.tool_call_count, 0) = 0
	AND COALESCE(s.api_call_count, 0) = 0 AND COALESCE(s.input_tokens, 0) = 0 AND COALESCE(s.output_tokens, 0) = 0
	AND COALESCE(s.pinned, 0) = 0 AND COALESCE(s.archived, 0) = 0 AND s.started_at IS NOT NULL AND s.started_at < ?
	AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)`

// routingNaming matches the gateway_routing rows (alias o) whose entry_json is an object whose
// session_id is one of the ids of the JSON array ?1: _delete_routing_entries_for_sessions
// (174ce8770), which skips an entry it cannot parse.
const routingNaming = `(CASE WHEN json_valid(o.entry_json) THEN json_extract(o.entry_json, '$.session_id') END)
	IN (SELECT value FROM json_each(?1))`

// predicate is _prune_filter_where's clause for the session alias s and its arguments:
// `s.ended_at IS NOT NULL`, the age (ageExpr: started_at up to c2a3b9ce5, the latest
// message else started_at at 481156139, a228b8150) unless a filter replaces it, then
// `s.source = ?`, then the keyword filters (hermes_state.py prune_sessions at cb4addaca,
// 3b750715a, 3914089d5, 52d0d671e; _prune_filter_where at c2a3b9ce5 and 481156139).
func (r Retention) predicate() (string, []any) {
	if r.NeverActive {
		return neverActiveWhere, []any{r.Cutoff}
	}
	where, args := "s.ended_at IS NOT NULL", []any(nil)
	if !r.AgeReplaced() {
		where += " AND " + ageExpr[r.Age] + " < ?"
		args = append(args, r.Cutoff)
	}
	if r.Source != "" {
		where += " AND s.source = ?"
		args = append(args, r.Source)
	}
	for _, a := range r.Filters {
		if clause, more := filterClause(a, r.FilterSet); clause != "" {
			where += " AND " + clause
			args = append(args, more...)
		}
	}
	return where, args
}

// RetentionCandidate is a session prune_sessions would delete, with what the plan shows.
type RetentionCandidate struct {
	ID        string
	Source    string
	StartedAt float64
	// Age is the time the rule measures: started_at, or the latest message else started_at.
	Age      float64
	Messages int64
	// Bytes is the size of its messages' values (what the rows hold, not the pages).
	Bytes int64
	// LiveLock is a live compression lock on it; LiveLease a live turn lease on its lineage
	// (r0817). Either skips it (the runtime does not skip them).
	LiveLock  *CompressionLock
	LiveLease *TurnLease
}

// Skipped reports whether the CLI leaves the candidate alone.
func (c RetentionCandidate) Skipped() bool { return c.LiveLock != nil || c.LiveLease != nil }

// RetentionCandidates lists the sessions prune_sessions(r) deletes at now, oldest first
// (started_at, id), each with its messages and whether a live lock or lease skips it.
func (db *DB) RetentionCandidates(ctx context.Context, now float64, r Retention) ([]RetentionCandidate, error) {
	const op = "prune candidates"
	if err := db.requireTable(op, "messages"); err != nil {
		return nil, err
	}
	if err := db.requireSessionColumns(op, r.columns()...); err != nil {
		return nil, err
	}
	sizes, err := messageSizeExpr(ctx, db.sql)
	if err != nil {
		return nil, classify(op, err, false)
	}
	where, args := r.predicate()
	rows, err := db.sql.QueryContext(ctx, `SELECT s.id, s.source, +s.started_at,
		COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at),
		(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id),
		(SELECT COALESCE(SUM(`+sizes+`), 0) FROM messages m WHERE m.session_id = s.id)
		FROM sessions s WHERE `+where+` ORDER BY s.started_at, s.id`, args...)
	if err != nil {
		return nil, classify(op, err, false)
	}
	out, err := scanCandidates(rows, r.Age)
	if err != nil {
		return nil, classify(op, err, false)
	}
	if err := db.markSkipped(ctx, db.sql, now, out); err != nil {
		return nil, classify(op, err, false)
	}
	return out, nil
}

// scanCandidates reads RetentionCandidates' rows.
func scanCandidates(rows *sql.Rows, age sessionsjson.PruneAge) ([]RetentionCandidate, error) {
	defer rows.Close()
	var out []RetentionCandidate
	for rows.Next() {
		var c RetentionCandidate
		var source sql.NullString
		var started, last any
		if err := rows.Scan(&c.ID, &source, &started, &last, &c.Messages, &c.Bytes); err != nil {
			return nil, err
		}
		c.Source = source.String
		c.StartedAt = number(started)
		c.Age = c.StartedAt
		if age == sessionsjson.PruneByInactivity {
			c.Age = number(last)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// number returns a scanned value as a float (0 when it is not a number).
func number(v any) float64 {
	val, err := valueFromDriver(v)
	if err != nil {
		return 0
	}
	f, _ := val.Number()
	return f
}

// messageSizeExpr sums the sizes of every column of a messages row aliased m.
func messageSizeExpr(ctx context.Context, q querier) (string, error) {
	ti, err := loadTableInfo(ctx, q, "messages")
	if err != nil {
		return "", err
	}
	parts := make([]string, len(ti.cols))
	for i, c := range ti.cols {
		parts[i] = "COALESCE(LENGTH(CAST(m." + quoteIdent(c) + " AS BLOB)), 0)"
	}
	return strings.Join(parts, " + "), nil
}

// markSkipped sets LiveLock and LiveLease on the candidates that hold one at now.
func (db *DB) markSkipped(ctx context.Context, q querier, now float64, cands []RetentionCandidate) error {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	locks, err := db.liveLocksAmong(ctx, q, now, ids)
	if err != nil {
		return err
	}
	leases, err := db.leasedAmong(ctx, q, now, ids)
	if err != nil {
		return err
	}
	for i := range cands {
		if l, ok := locks[cands[i].ID]; ok {
			cands[i].LiveLock = &l
		}
		if l, ok := leases[cands[i].ID]; ok {
			cands[i].LiveLease = &l
		}
	}
	return nil
}

// liveLocksAmong returns the compression locks live at now on any of ids (none without the
// table).
func (db *DB) liveLocksAmong(ctx context.Context, q querier, now float64, ids []string) (map[string]CompressionLock, error) {
	if !db.schema.HasCompressionLocks || len(ids) == 0 {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT "+lockColumns+" FROM compression_locks WHERE "+liveLockAt("")+" ORDER BY session_id", now)
	if err != nil {
		return nil, fmt.Errorf("read compression locks: %w", err)
	}
	defer rows.Close()
	wanted := toSet(ids)
	out := map[string]CompressionLock{}
	for rows.Next() {
		var id, holder string
		var acquired, expires any
		if err := rows.Scan(&id, &holder, &acquired, &expires); err != nil {
			return nil, fmt.Errorf("read compression locks: %w", err)
		}
		if !wanted[id] {
			continue
		}
		if out[id], err = newLock(id, holder, acquired, expires); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// RetentionResult reports one PruneSessions transaction.
type RetentionResult struct {
	Deleted  []string          // the sessions deleted, oldest first
	Orphaned map[string]string // child id -> the parent it had, for the children that stay
	Messages int64             // messages rows deleted
	Prompts  int64             // system_prompts rows deleted (r0817)
	// Routing are the gateway_routing rows deleted (NeverActive): scope and key only.
	Routing []RoutingRow
	Skipped []RetentionCandidate
	// Remaining are the candidate ids left for the next batch (Batch.Among), oldest first.
	Remaining []string
	Stats     TxStats
}

// RetentionPlan is what one PruneSessions transaction is about to delete, handed to its
// RetentionHook under the write lock before anything is written.
type RetentionPlan struct {
	Deleted  []string          // sessions deleted, with their messages and the rows ON DELETE actions reach
	Orphaned map[string]string // children that stay, with the parent they lose
	PromptGC bool              // every system_prompts row no remaining session references goes too
	Routing  bool              // every gateway_routing row naming a deleted session goes too (NeverActive)
	deps     []dependent
}

// RetentionHook is called inside the write transaction, under the write lock, once the
// sessions a batch deletes are known and before any of it is written: it must record the rows
// durably (CaptureRows); its error rolls the transaction back. A busy transaction is retried,
// so it may run more than once.
type RetentionHook func(RetentionPlan) error

// PruneSessions deletes, in one BEGIN IMMEDIATE transaction, what prune_sessions(r) deletes
// among batch's candidates (looked up again by id under the lock; at most MaxRows sessions):
// children that stay get parent_session_id = NULL, then the messages (the FTS triggers drop
// them from the index), then the sessions rows (ON DELETE actions remove their
// session_model_usage rows), and, where the generation's runtime does (PromptGC, r0817), every
// system_prompts row no session references any more, as prune_sessions does in its one
// transaction (7d066c3c5). Sessions holding a live compression lock or whose lineage holds a
// live turn lease are left alone (Skipped). hook sees the plan before any write. Transcript
// files are not touched. When nothing matches, nothing is written.
func (db *DB) PruneSessions(ctx context.Context, now float64, r Retention, batch Batch, hook RetentionHook) (RetentionResult, error) {
	const op = "prune sessions"
	if err := db.requireWrite(op); err != nil {
		return RetentionResult{}, err
	}
	if err := db.requireTable(op, "messages"); err != nil {
		return RetentionResult{}, err
	}
	var res RetentionResult
	stats, err := db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = db.retentionTx(ctx, tx, now, r, batch, hook)
		return err
	})
	res.Stats = stats
	if err != nil && !errors.Is(err, errNothingToChange) {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// retentionTx is one PruneSessions transaction.
func (db *DB) retentionTx(ctx context.Context, tx *sql.Tx, now float64, r Retention, batch Batch, hook RetentionHook) (RetentionResult, error) {
	var res RetentionResult
	among, notEvaluated := batch.take()
	res.Remaining = notEvaluated
	cands, err := db.matching(ctx, tx, now, r, among)
	if err != nil {
		return res, err
	}
	for _, c := range cands {
		if c.Skipped() {
			res.Skipped = append(res.Skipped, c)
		} else {
			res.Deleted = append(res.Deleted, c.ID)
		}
	}
	if len(res.Deleted) == 0 {
		return res, errNothingToChange
	}
	plan := RetentionPlan{Deleted: res.Deleted, PromptGC: db.promptGC(), Routing: r.NeverActive && db.schema.HasGatewayRouting}
	if plan.Orphaned, err = orphanedChildren(ctx, tx, res.Deleted); err != nil {
		return res, err
	}
	if plan.deps, err = dependents(ctx, tx); err != nil {
		return res, fmt.Errorf("read foreign keys: %w", err)
	}
	if err := hook(plan); err != nil {
		return res, err
	}
	res.Orphaned = plan.Orphaned
	if res.Routing, err = deleteRouting(ctx, tx, plan); err != nil {
		return res, err
	}
	res.Messages, res.Prompts, err = deleteRetained(ctx, tx, plan)
	return res, err
}

// matching evaluates the predicate again, under the lock, for the ids among (looked up by
// primary key), oldest first, with their locks and leases.
func (db *DB) matching(ctx context.Context, tx *sql.Tx, now float64, r Retention, among []string) ([]RetentionCandidate, error) {
	ids, _ := json.Marshal(among) // a []string always encodes
	where, args := r.predicate()
	rows, err := tx.QueryContext(ctx, `SELECT s.id, s.source, +s.started_at,
		COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at), 0, 0
		FROM json_each(?) AS among CROSS JOIN sessions s ON s.id = among.value
		WHERE `+where+` ORDER BY s.started_at, s.id`, append([]any{string(ids)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read candidates: %w", err)
	}
	cands, err := scanCandidates(rows, r.Age)
	if err != nil {
		return nil, fmt.Errorf("read candidates: %w", err)
	}
	if err := db.markSkipped(ctx, tx, now, cands); err != nil {
		return nil, err
	}
	return cands, nil
}

// ChildrenLeft maps each child of ids that is not among them to its parent: the children a
// prune of ids orphans.
func (db *DB) ChildrenLeft(ctx context.Context, ids []string) (map[string]string, error) {
	out, err := orphanedChildren(ctx, db.sql, ids)
	if err != nil {
		return nil, classify("read children", err, false)
	}
	return out, nil
}

// orphanedChildren maps each child of deleted that is not deleted itself to its parent.
func orphanedChildren(ctx context.Context, q querier, deleted []string) (map[string]string, error) {
	ids, _ := json.Marshal(deleted)
	rows, err := q.QueryContext(ctx, `SELECT c.id, c.parent_session_id FROM sessions c
		WHERE c.parent_session_id IN (SELECT value FROM json_each(?1))
		AND c.id NOT IN (SELECT value FROM json_each(?1))`, string(ids))
	if err != nil {
		return nil, fmt.Errorf("read children: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, parent string
		if err := rows.Scan(&id, &parent); err != nil {
			return nil, fmt.Errorf("read children: %w", err)
		}
		out[id] = parent
	}
	return out, rows.Err()
}

// deleteRouting deletes, first as the runtime does, the gateway_routing rows naming the
// sessions plan deletes (plan.Routing) and returns them.
func deleteRouting(ctx context.Context, tx *sql.Tx, plan RetentionPlan) ([]RoutingRow, error) {
	if !plan.Routing {
		return nil, nil
	}
	ids, _ := json.Marshal(plan.Deleted)
	rows, err := tx.QueryContext(ctx, `DELETE FROM gateway_routing AS o WHERE `+routingNaming+` RETURNING scope, session_key`, string(ids))
	if err != nil {
		return nil, fmt.Errorf("delete gateway_routing rows: %w", err)
	}
	out, err := scanRoutingKeys(rows)
	if err != nil {
		return nil, fmt.Errorf("delete gateway_routing rows: %w", err)
	}
	return out, nil
}

// scanRoutingKeys reads rows of (scope, session_key) and closes them.
func scanRoutingKeys(rows *sql.Rows) ([]RoutingRow, error) {
	defer rows.Close()
	var out []RoutingRow
	for rows.Next() {
		var r RoutingRow
		if err := rows.Scan(&r.Scope, &r.Key); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RoutingNaming returns the gateway_routing rows, of any scope, whose entry names one of ids
// (what a never-active prune of ids deletes with them), by scope and key; none without the
// table.
func (db *DB) RoutingNaming(ctx context.Context, ids []string) ([]RoutingRow, error) {
	if !db.schema.HasGatewayRouting || len(ids) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(ids)
	rows, err := db.sql.QueryContext(ctx, `SELECT scope, session_key FROM gateway_routing AS o WHERE `+routingNaming+`
		ORDER BY scope, session_key`, string(list))
	if err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	out, err := scanRoutingKeys(rows)
	if err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	return out, nil
}

// deleteRetained writes the plan as the runtime's prune_sessions does: the children's
// parent_session_id set NULL, the messages, then the sessions rows deleted, then (PromptGC)
// the unreferenced system prompts. It returns the messages and prompts deleted.
func deleteRetained(ctx context.Context, tx *sql.Tx, plan RetentionPlan) (messages, prompts int64, err error) {
	if _, err := tx.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil { // ends with the transaction
		return 0, 0, fmt.Errorf("defer foreign keys: %w", err)
	}
	ids, _ := json.Marshal(plan.Deleted)
	list := string(ids)
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET parent_session_id = NULL
		WHERE parent_session_id IN (SELECT value FROM json_each(?))`, list); err != nil {
		return 0, 0, fmt.Errorf("orphan children: %w", err)
	}
	if messages, err = execCount(ctx, tx, `DELETE FROM messages WHERE session_id IN (SELECT value FROM json_each(?))`, list); err != nil {
		return 0, 0, fmt.Errorf("delete messages: %w", err)
	}
	n, err := execCount(ctx, tx, `DELETE FROM sessions WHERE id IN (SELECT value FROM json_each(?))`, list)
	if err != nil || n != int64(len(plan.Deleted)) {
		return 0, 0, fmt.Errorf("delete sessions: %d rows deleted, %d expected (%v)", n, len(plan.Deleted), err)
	}
	if plan.PromptGC {
		if prompts, err = execCount(ctx, tx, `DELETE FROM system_prompts WHERE `+unreferencedPrompts); err != nil {
			return 0, 0, fmt.Errorf("delete unreferenced system prompts: %w", err)
		}
	}
	return messages, prompts, nil
}

// execCount runs a statement and returns the rows it changed.
func execCount(ctx context.Context, tx *sql.Tx, query string, args ...any) (int64, error) {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
