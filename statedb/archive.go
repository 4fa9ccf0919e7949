package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Archiving is what an archive run selects and the value it gives sessions.archived on the
// whole compression lineage of each selected session (set_session_archived).
type Archiving struct {
	// Value is what archived becomes: true (1) to archive, false (0) to unarchive.
	Value bool
	where string // the selection over sessions aliased s
	args  []any
	cols  []string // the sessions columns the selection reads
}

// ArchiveOlder is SessionDB.archive_sessions(older_than_days, source): the sessions
// list_prune_candidates selects with archived=False — prune's predicate (Retention: ended,
// older than the cutoff by the generation's age rule, of the source, with its keyword
// filters) and `s.archived = 0`
// (hermes_state.py archive_sessions, 040a5e30d; at c2a3b9ce5 and 481156139).
func ArchiveOlder(r Retention) Archiving {
	where, args := r.predicate()
	return Archiving{Value: true, where: where + " AND s.archived = 0", args: args, cols: append([]string{"archived"}, r.columns()...)}
}

// ArchiveIdle is r0817's SessionDB.archive_stale_sessions(idle_days, exclude_pinned=True):
// sessions not archived, not ended by compression (a lineage's tips and standalone rows, open
// ones included), not pinned, whose last activity — the freshest of last_activity_at and the
// latest message, else started_at (_sql_session_last_active) — is before cutoff, strictly
// (f16b80362; at 481156139).
func ArchiveIdle(cutoff float64) Archiving {
	return Archiving{Value: true, where: `s.archived = 0 AND COALESCE(s.end_reason, '') <> 'compression'
		AND s.pinned = 0 AND ` + lastActiveExpr("s") + ` < ?`, args: []any{cutoff},
		cols: []string{"archived", "pinned", "last_activity_at"}}
}

// SetArchivedOn is set_session_archived(id, value) for each of the ids a caller names (passed
// as Batch.Among): every one is selected whatever it holds.
func SetArchivedOn(value bool) Archiving {
	return Archiving{Value: value, where: "1", cols: []string{"archived"}}
}

// lastActiveExpr is the runtime's _sql_session_last_active for the sessions alias a: the
// freshest of last_activity_at and the latest message's timestamp, else started_at
// (hermes_state_common.py at 481156139; c2088efe9).
func lastActiveExpr(a string) string {
	return `COALESCE((SELECT MAX(v.v) FROM (SELECT ` + a + `.last_activity_at AS v
		UNION ALL SELECT (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = ` + a + `.id)) v), ` + a + `.started_at)`
}

// ArchiveCandidates lists the ids a selects, oldest first (started_at, id).
func (db *DB) ArchiveCandidates(ctx context.Context, a Archiving) ([]string, error) {
	const op = "archive candidates"
	if err := db.requireSessionColumns(op, a.cols...); err != nil {
		return nil, err
	}
	ids, err := queryStrings(ctx, db.sql, `SELECT s.id FROM sessions s WHERE `+a.where+` ORDER BY s.started_at, s.id`, a.args...)
	if err != nil {
		return nil, classify(op, err, false)
	}
	return ids, nil
}

// ArchiveChanges returns what setting a.Value on the lineages of ids changes: one RowChange
// per row whose archived is not already exactly that value, with images of the archived
// column only (read only; the plan).
func (db *DB) ArchiveChanges(ctx context.Context, a Archiving, ids []string) ([]RowChange, error) {
	changes, err := lineageChanges(ctx, db.sql, ids, a.Value)
	if err != nil {
		return nil, classify("archive", err, false)
	}
	return changes, nil
}

// ArchiveResult reports one SetArchived transaction.
type ArchiveResult struct {
	Matched   []string    // the selected sessions of the batch, oldest first
	Changes   []RowChange // the archived values changed (images of that column only)
	Remaining []string    // the candidate ids left for the next batch
	Stats     TxStats
}

// SetArchived performs, in one BEGIN IMMEDIATE transaction, set_session_archived(id, a.Value)
// for each session of batch.Among (at most MaxRows of them) that a still selects under the
// write lock: archived becomes a.Value on the session's whole lineage — its ancestors through
// parents that ended 'compression', its descendants through every child of a
// 'compression'-ended parent, open continuations and other children included (04b3f1953,
// 8c70346e3; at 52d0d671e, c2a3b9ce5 and 481156139). The runtime updates every lineage row;
// only the rows whose value differs are written here, which leaves the same file. beforeCommit
// sees the changes before the commit. When nothing changes, nothing is written.
func (db *DB) SetArchived(ctx context.Context, a Archiving, batch Batch, beforeCommit CommitHook) (ArchiveResult, error) {
	const op = "set archived"
	if err := db.requireWrite(op); err != nil {
		return ArchiveResult{}, err
	}
	if err := db.requireSessionColumns(op, a.cols...); err != nil {
		return ArchiveResult{}, err
	}
	var res ArchiveResult
	stats, err := db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		var err error
		if res, err = setArchivedTx(ctx, tx, a, batch); err != nil {
			return err
		}
		return beforeCommit.run(res.Changes)
	})
	res.Stats = stats
	if err != nil && !errors.Is(err, errNothingToChange) {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// setArchivedTx is one SetArchived transaction.
func setArchivedTx(ctx context.Context, tx *sql.Tx, a Archiving, batch Batch) (ArchiveResult, error) {
	var res ArchiveResult
	among, notEvaluated := batch.take()
	res.Remaining = notEvaluated
	list, _ := json.Marshal(among) // a []string always encodes
	matched, err := queryStrings(ctx, tx, `SELECT s.id FROM json_each(?) AS among CROSS JOIN sessions s ON s.id = among.value
		WHERE `+a.where+` ORDER BY s.started_at, s.id`, append([]any{string(list)}, a.args...)...)
	if err != nil {
		return res, fmt.Errorf("read candidates: %w", err)
	}
	res.Matched = matched
	if res.Changes, err = lineageChanges(ctx, tx, matched, a.Value); err != nil {
		return res, err
	}
	if len(res.Changes) == 0 {
		return res, errNothingToChange
	}
	ids := make([]string, len(res.Changes))
	for i, c := range res.Changes {
		ids[i] = c.Key["id"].Text
	}
	list, _ = json.Marshal(ids)
	n, err := execCount(ctx, tx, `UPDATE sessions SET archived = ? WHERE id IN (SELECT value FROM json_each(?))`, archivedInt(a.Value), string(list))
	if err != nil || n != int64(len(ids)) {
		return res, fmt.Errorf("update archived: %d rows, %d expected (%v)", n, len(ids), err)
	}
	return res, nil
}

// lineageSQL selects, for the seed ids (a JSON array, ?1), every session of their
// compression lineages whose archived is not exactly the integer ?2, by id: set_session_archived's
// recursive walk, seeded with all the ids at once (the union of the lineages).
const lineageSQL = `WITH RECURSIVE
	seed(id) AS (SELECT value FROM json_each(?1)),
	ancestors(id) AS (SELECT id FROM seed UNION
		SELECT parent.id FROM ancestors a JOIN sessions child ON child.id = a.id
		JOIN sessions parent ON parent.id = child.parent_session_id WHERE parent.end_reason = 'compression'),
	descendants(id) AS (SELECT id FROM seed UNION
		SELECT child.id FROM descendants d JOIN sessions parent ON parent.id = d.id
		JOIN sessions child ON child.parent_session_id = parent.id WHERE parent.end_reason = 'compression'),
	lineage(id) AS (SELECT id FROM ancestors UNION SELECT id FROM descendants)
	SELECT s.id, +s.archived FROM sessions s WHERE s.id IN (SELECT id FROM lineage)
	AND NOT (typeof(s.archived) = 'integer' AND s.archived = ?2) ORDER BY s.id`

// lineageChanges reads what setting archived to value on the lineages of ids changes.
func lineageChanges(ctx context.Context, q querier, ids []string, value bool) ([]RowChange, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(ids)
	rows, err := q.QueryContext(ctx, lineageSQL, string(list), archivedInt(value))
	if err != nil {
		return nil, fmt.Errorf("read lineages: %w", err)
	}
	defer rows.Close()
	var out []RowChange
	for rows.Next() {
		var id string
		var raw any
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("read lineages: %w", err)
		}
		before, err := valueFromDriver(raw)
		if err != nil {
			return nil, fmt.Errorf("read lineages: %w", err)
		}
		out = append(out, archivedChange(id, before, IntValue(archivedInt(value))))
	}
	return out, rows.Err()
}

// archivedChange is the change of one row's archived column, with images of that column only.
func archivedChange(id string, before, after Value) RowChange {
	key := map[string]Value{"id": TextValue(id)}
	image := func(v Value) *RowImage {
		return &RowImage{Table: "sessions", Key: key, Columns: []string{"archived"}, Values: []Value{v}}
	}
	return RowChange{Table: "sessions", Key: key, Before: image(before), After: image(after)}
}

// archivedInt is the integer the runtime binds for archived (`1 if archived else 0`).
func archivedInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}
