package statedb

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
)

// DefaultOrphanMinAge is the runtime's finalize cutoff: 7 days, in seconds.
const DefaultOrphanMinAge = 604800.0

// EndReasonOrphanedCompression is the end_reason the finalize repair writes.
const EndReasonOrphanedCompression = "orphaned_compression"

// orphanPredicate is finalize_orphaned_compression_sessions' WHERE clause (statedb.md §5.18);
// its one argument is the cutoff.
const orphanPredicate = `sessions.api_call_count = 0
	AND sessions.end_reason IS NULL
	AND sessions.ended_at IS NULL
	AND sessions.started_at < ?
	AND sessions.parent_session_id IS NOT NULL
	AND EXISTS (SELECT 1 FROM sessions p WHERE p.id = sessions.parent_session_id
	            AND p.end_reason = 'compression' AND p.ended_at IS NOT NULL)
	AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)`

// notLockedClause excludes sessions holding a compression lock live at its one argument, now.
const notLockedClause = ` AND NOT EXISTS (SELECT 1 FROM compression_locks l
	WHERE l.session_id = sessions.id AND l.expires_at >= ?)`

// Orphan is a compression continuation the finalize repair would end. LiveLock is the
// compression lock it holds at now (the CLI skips those; the runtime does not).
type Orphan struct {
	Session
	LiveLock *CompressionLock
}

// FinalizeResult reports a FinalizeOrphans run.
type FinalizeResult struct {
	Changes []RowChange // one per finalized sessions row, full before/after images
	Skipped []string    // requested ids that no longer match, or hold a live lock
	Latch   RowChange   // state_meta orphaned_compression_finalize_v1
	Stats   TxStats
}

// FinalizeCandidates lists the sessions finalize_orphaned_compression_sessions would end at
// now, with cutoff = now - minAge compared strictly (started_at < cutoff), oldest first. It
// needs sessions.api_call_count (v8+), else the error wraps ErrUnsupportedSchema.
func (db *DB) FinalizeCandidates(ctx context.Context, now, minAge float64) ([]Orphan, error) {
	if err := db.requireSessionColumns("finalize candidates", "api_call_count"); err != nil {
		return nil, err
	}
	query, args := db.finalizeCandidatesQuery(now, minAge)
	out, err := scanOrphans(ctx, db, query, args)
	if err != nil {
		return nil, classify("finalize candidates", err, false)
	}
	return out, nil
}

// finalizeCandidatesQuery returns the candidate query and its arguments.
func (db *DB) finalizeCandidatesQuery(now, minAge float64) (string, []any) {
	lockCols, join := "NULL, NULL, NULL, NULL", ""
	args := []any{now - minAge}
	if db.schema.HasCompressionLocks {
		lockCols = "l.session_id, l.holder, l.acquired_at, l.expires_at"
		join = " LEFT JOIN compression_locks l ON l.session_id = sessions.id AND l.expires_at >= ?"
		args = []any{now, now - minAge}
	}
	return "SELECT " + db.sessionColumns("sessions") + ", " + lockCols + " FROM sessions" + join +
		" WHERE " + orphanPredicate + " ORDER BY sessions.started_at, sessions.id", args
}

func scanOrphans(ctx context.Context, db *DB, query string, args []any) ([]Orphan, error) {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Orphan
	for rows.Next() {
		var lockID, holder sql.NullString
		var acquired, expires sql.NullFloat64
		s, err := scanSession(rows, &lockID, &holder, &acquired, &expires)
		if err != nil {
			return nil, err
		}
		o := Orphan{Session: s}
		if lockID.Valid {
			o.LiveLock = &CompressionLock{SessionID: lockID.String, Holder: holder.String,
				AcquiredAt: acquired.Float64, ExpiresAt: expires.Float64}
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

// FinalizeOrphans ends the given sessions the way finalize_orphaned_compression_sessions
// does (ended_at = now, end_reason = 'orphaned_compression'), in one BEGIN IMMEDIATE
// transaction. Inside it every id is re-checked against the runtime predicate (cutoff =
// now - minAge) and against a live compression lock; ids that fail either are reported in
// Skipped and left alone. The state_meta latch orphaned_compression_finalize_v1 is set to
// '1' as the runtime does. beforeCommit (optional) sees every change, latch included, inside
// the transaction before it commits; its error rolls everything back.
func (db *DB) FinalizeOrphans(ctx context.Context, ids []string, now, minAge float64, beforeCommit CommitHook) (FinalizeResult, error) {
	const op = "finalize orphans"
	if err := db.requireWrite(op); err != nil {
		return FinalizeResult{}, err
	}
	if err := db.requireSessionColumns(op, "api_call_count"); err != nil {
		return FinalizeResult{}, err
	}
	if err := db.requireTable(op, "state_meta"); err != nil {
		return FinalizeResult{}, err
	}
	var res FinalizeResult
	stats, err := db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		var err error
		if res, err = db.finalizeTx(ctx, tx, uniqueSorted(ids), now, minAge); err != nil {
			return err
		}
		return beforeCommit.run(append(res.Changes, res.Latch))
	})
	res.Stats = stats
	if err != nil {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

func (db *DB) finalizeTx(ctx context.Context, tx *sql.Tx, ids []string, now, minAge float64) (FinalizeResult, error) {
	var res FinalizeResult
	ti, err := loadTableInfo(ctx, tx, "sessions")
	if err != nil {
		return res, err
	}
	done := map[string]bool{}
	for _, chunk := range chunks(ids) {
		changes, err := db.finalizeChunk(ctx, tx, ti, chunk, now, minAge)
		if err != nil {
			return res, err
		}
		for _, c := range changes {
			done[c.Key["id"].Text] = true
		}
		res.Changes = append(res.Changes, changes...)
	}
	res.Skipped = missing(ids, done)
	res.Latch, err = setLatch(ctx, tx, LatchFinalizeOrphans)
	return res, err
}

// finalizeChunk finalizes the ids of one chunk that still match, returning their images.
func (db *DB) finalizeChunk(ctx context.Context, tx *sql.Tx, ti tableInfo, chunk []string, now, minAge float64) ([]RowChange, error) {
	where := "sessions.id IN (" + placeholders(len(chunk)) + ") AND " + orphanPredicate
	args := append(stringArgs(chunk), now-minAge)
	if db.schema.HasCompressionLocks {
		where += notLockedClause
		args = append(args, now)
	}
	before, err := readImagesWhere(ctx, tx, ti, where, args...)
	if err != nil {
		return nil, fmt.Errorf("read orphans: %w", err)
	}
	res, err := tx.ExecContext(ctx, "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE "+where,
		append([]any{now, EndReasonOrphanedCompression}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("update orphans: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(before)) {
		return nil, fmt.Errorf("update orphans: %d rows changed, %d expected (%v)", n, len(before), err)
	}
	return afterImages(ctx, tx, ti, before)
}

// afterImages pairs each before image with the row's current image (nil when deleted).
func afterImages(ctx context.Context, tx *sql.Tx, ti tableInfo, before []RowImage) ([]RowChange, error) {
	out := make([]RowChange, 0, len(before))
	for i := range before {
		after, err := readImageTI(ctx, tx, ti, before[i].Key)
		if err != nil {
			return nil, fmt.Errorf("read %s after write: %w", ti.name, err)
		}
		out = append(out, RowChange{Table: ti.name, Key: before[i].Key, Before: &before[i], After: after})
	}
	return out, nil
}

// uniqueSorted returns ids sorted without duplicates.
func uniqueSorted(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	n := 0
	for i, id := range out {
		if i == 0 || id != out[n-1] {
			out[n] = id
			n++
		}
	}
	return out[:n]
}

// missing returns the ids not in done, in order.
func missing(ids []string, done map[string]bool) []string {
	var out []string
	for _, id := range ids {
		if !done[id] {
			out = append(out, id)
		}
	}
	return out
}
