package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// DefaultOrphanMinAge is the runtime's finalize cutoff: 7 days, in seconds.
const DefaultOrphanMinAge = 604800.0

// EndReasonOrphanedCompression is the end_reason the finalize repair writes.
const EndReasonOrphanedCompression = "orphaned_compression"

// orphanPredicate is finalize_orphaned_compression_sessions' WHERE clause (upstream hermes_state.py
// SessionDB.finalize_orphaned_compression_sessions, as of 3b750715a and later);
// its one argument is the cutoff.
const orphanPredicate = `sessions.api_call_count = 0
	AND sessions.end_reason IS NULL
	AND sessions.ended_at IS NULL
	AND sessions.started_at < ?
	AND sessions.parent_session_id IS NOT NULL
	AND EXISTS (SELECT 1 FROM sessions p WHERE p.id = sessions.parent_session_id
	            AND p.end_reason = 'compression' AND p.ended_at IS NOT NULL)
	AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)`

// Orphan is a compression continuation the finalize repair would end. LiveLock is the
// compression lock it holds at now (the CLI skips those; the runtime does not).
type Orphan struct {
	Session
	LiveLock *CompressionLock
	// LiveLease is the live turn lease of the session's lineage root (r0817), which the CLI
	// skips as it skips a live lock (the runtime does not).
	LiveLease *TurnLease
}

// FinalizeResult reports a FinalizeOrphans run.
type FinalizeResult struct {
	Changes []RowChange // one per finalized sessions row, full before/after images
	Locked  []Orphan    // matching sessions left alone because they hold a live compression lock or their lineage a live turn lease
	// Remaining are the candidate ids left for another batch (Batch.Among), oldest first:
	// matching ones beyond MaxRows, and ids of Among this batch did not evaluate. Empty
	// when the run is done.
	Remaining []string
	Latch     RowChange // state_meta orphaned_compression_finalize_v1
	Stats     TxStats
}

// FinalizeCandidates lists the sessions finalize_orphaned_compression_sessions would end at
// now, with cutoff = now - minAge compared strictly (started_at < cutoff), oldest first. It
// needs sessions.api_call_count (v8+), else the error wraps ErrUnsupportedSchema.
func (db *DB) FinalizeCandidates(ctx context.Context, now, minAge float64) ([]Orphan, error) {
	if err := db.requireSessionColumns("finalize candidates", "api_call_count"); err != nil {
		return nil, err
	}
	from, err := orphanSource(ctx, db.sql)
	if err != nil {
		return nil, classify("finalize candidates", err, false)
	}
	query, args := db.finalizeCandidatesQuery(db.sessionColumns("sessions"), from, nil, now, minAge)
	out, err := scanOrphans(ctx, db, query, args)
	if err != nil {
		return nil, classify("finalize candidates", err, false)
	}
	leased, err := db.leasedAmong(ctx, db.sql, now, orphanIDs(out))
	if err != nil {
		return nil, classify("finalize candidates", err, false)
	}
	for i := range out {
		if l, ok := leased[out[i].ID]; ok {
			out[i].LiveLease = &l
		}
	}
	return out, nil
}

func orphanIDs(orphans []Orphan) []string {
	ids := make([]string, len(orphans))
	for i, o := range orphans {
		ids[i] = o.ID
	}
	return ids
}

// parentIndex is the runtime's index on sessions(parent_session_id).
const parentIndex = "idx_sessions_parent"

// orphanSource returns the FROM term of the candidate query: sessions read through the
// parent index when the database has it. Only continuations (rows with a parent) can be
// orphans, so this visits the children instead of every session older than the cutoff,
// which is what SQLite's planner would pick without statistics (2–3× slower on a 100k-session
// home). The predicate is unchanged.
func orphanSource(ctx context.Context, q querier) (string, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM pragma_index_list('sessions') l,
		pragma_index_info(l.name) i WHERE l.name = ? AND l.partial = 0 AND i.seqno = 0
		AND i.name = 'parent_session_id'`, parentIndex).Scan(&n)
	if err != nil {
		return "", fmt.Errorf("read sessions indexes: %w", err)
	}
	if n == 0 {
		return "sessions", nil
	}
	return "sessions INDEXED BY " + parentIndex, nil
}

// finalizeCandidatesQuery returns the candidate query selecting columns from from (see
// orphanSource and amongSource; fromArgs are its arguments), then the four columns of the
// live compression lock (NULL when none), and the query's arguments.
func (db *DB) finalizeCandidatesQuery(columns, from string, fromArgs []any, now, minAge float64) (string, []any) {
	lockCols, join := "NULL, NULL, NULL, NULL", ""
	args := append([]any{}, fromArgs...)
	if db.schema.HasCompressionLocks {
		lockCols = "l.session_id, l.holder, +l.acquired_at, +l.expires_at"
		join = " LEFT JOIN compression_locks l ON l.session_id = sessions.id AND " + liveLockAt("l.")
		args = append(args, now)
	}
	args = append(args, now-minAge)
	return "SELECT " + columns + ", " + lockCols + " FROM " + from + join +
		" WHERE " + orphanPredicate + oldestFirst, args
}

// lockScan receives the lock columns of the candidate query (times as stored: the join's
// liveLockAt takes a TEXT expiry as live, as the runtime's SQL does).
type lockScan struct {
	id, holder        sql.NullString
	acquired, expires any
}

func (l *lockScan) dest() []any { return []any{&l.id, &l.holder, &l.acquired, &l.expires} }

// lock returns the scanned lock, nil when the row had none.
func (l *lockScan) lock() (*CompressionLock, error) {
	if !l.id.Valid {
		return nil, nil
	}
	lock, err := newLock(l.id.String, l.holder.String, l.acquired, l.expires)
	return &lock, err
}

func scanOrphans(ctx context.Context, db *DB, query string, args []any) ([]Orphan, error) {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Orphan
	for rows.Next() {
		var l lockScan
		s, err := scanSession(rows, l.dest()...)
		if err != nil {
			return nil, err
		}
		lock, err := l.lock()
		if err != nil {
			return nil, err
		}
		out = append(out, Orphan{Session: s, LiveLock: lock})
	}
	return out, rows.Err()
}

// FinalizeOrphans ends every session that finalize_orphaned_compression_sessions would end
// at now (cutoff = now - minAge, compared strictly) and that holds no live compression lock:
// ended_at = now, end_reason = 'orphaned_compression'. Candidates are selected inside the
// one BEGIN IMMEDIATE transaction that changes them, so what changes is exactly what matches
// while the write lock is held; the locked ones are reported in Locked. The state_meta latch
// orphaned_compression_finalize_v1 is set to '1' as the runtime does. When no session is to
// be ended nothing is written (not even the latch) and Changes is empty. batch bounds how many
// sessions (the oldest) are ended, and so how long the write lock is held; Remaining lists
// the others for the next batch. beforeCommit (optional) sees every change, latch included,
// inside the transaction before it commits; its error rolls everything back.
func (db *DB) FinalizeOrphans(ctx context.Context, now, minAge float64, batch Batch, beforeCommit CommitHook) (FinalizeResult, error) {
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
		if res, err = db.finalizeTx(ctx, tx, now, minAge, batch); err != nil {
			return err
		}
		return beforeCommit.run(append(res.Changes, res.Latch))
	})
	res.Stats = stats
	if err != nil && !errors.Is(err, errNothingToChange) {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

func (db *DB) finalizeTx(ctx context.Context, tx *sql.Tx, now, minAge float64, batch Batch) (FinalizeResult, error) {
	var res FinalizeResult
	ti, err := loadTableInfo(ctx, tx, "sessions")
	if err != nil {
		return res, err
	}
	among, notEvaluated := batch.take()
	before, locked, err := db.orphanImages(ctx, tx, ti, now, minAge, among)
	if err != nil {
		return res, fmt.Errorf("read orphans: %w", err)
	}
	res.Locked = locked
	k := batch.limit(len(before))
	res.Remaining = remainingAfter(imageIDs(before[k:]), notEvaluated)
	before = before[:k]
	if len(before) == 0 {
		return res, errNothingToChange
	}
	if res.Changes, err = finalizeRows(ctx, tx, ti, before, now); err != nil {
		return res, err
	}
	res.Latch, err = setLatch(ctx, tx, LatchFinalizeOrphans)
	return res, err
}

// orphanImages runs the candidate query with full row images: the images of the sessions
// to finalize, oldest first, and the candidates that hold a live compression lock. With
// among (not nil) only those ids are considered, looked up by id.
func (db *DB) orphanImages(ctx context.Context, q querier, ti tableInfo, now, minAge float64, among []string) ([]RowImage, []Orphan, error) {
	query, args, err := db.orphanImagesQuery(ctx, q, ti, now, minAge, among)
	if err != nil {
		return nil, nil, err
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var free []RowImage
	var locked []Orphan
	for rows.Next() {
		var l lockScan
		img, err := ti.scanImage(rows, l.dest()...)
		if err != nil {
			return nil, nil, err
		}
		lock, err := l.lock()
		if err != nil {
			return nil, nil, err
		}
		if lock != nil {
			locked = append(locked, Orphan{Session: Session{ID: img.Key["id"].Text}, LiveLock: lock})
		} else {
			free = append(free, img)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return db.withoutLeased(ctx, q, now, free, locked)
}

// withoutLeased moves the images whose lineage root holds a live turn lease from free to
// locked.
func (db *DB) withoutLeased(ctx context.Context, q querier, now float64, free []RowImage, locked []Orphan) ([]RowImage, []Orphan, error) {
	leased, err := db.leasedAmong(ctx, q, now, imageIDs(free))
	if err != nil || len(leased) == 0 {
		return free, locked, err
	}
	kept := free[:0]
	for _, img := range free {
		id := img.Key["id"].Text
		if l, ok := leased[id]; ok {
			locked = append(locked, Orphan{Session: Session{ID: id}, LiveLease: &l})
		} else {
			kept = append(kept, img)
		}
	}
	return kept, locked, nil
}

// orphanImagesQuery returns orphanImages' query and its arguments.
// A scan (among nil) reads sessions through orphanSource.
func (db *DB) orphanImagesQuery(ctx context.Context, q querier, ti tableInfo, now, minAge float64, among []string) (string, []any, error) {
	from, fromArgs := amongSource(among)
	if among == nil {
		var err error
		if from, err = orphanSource(ctx, q); err != nil {
			return "", nil, err
		}
	}
	query, args := db.finalizeCandidatesQuery(ti.selectList(), from, fromArgs, now, minAge)
	return query, args, nil
}

// finalizeRows ends the sessions whose images are given and returns their changes.
func finalizeRows(ctx context.Context, tx *sql.Tx, ti tableInfo, before []RowImage, now float64) ([]RowChange, error) {
	ids := imageIDs(before)
	for _, chunk := range chunks(ids) {
		res, err := tx.ExecContext(ctx, "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id IN ("+
			placeholders(len(chunk))+")", append([]any{now, EndReasonOrphanedCompression}, stringArgs(chunk)...)...)
		if err != nil {
			return nil, fmt.Errorf("update orphans: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(chunk)) {
			return nil, fmt.Errorf("update orphans: %d rows changed, %d expected (%v)", n, len(chunk), err)
		}
	}
	after, err := readImagesByID(ctx, tx, ti, ids)
	if err != nil {
		return nil, fmt.Errorf("read orphans after update: %w", err)
	}
	out := make([]RowChange, len(before))
	for i := range before {
		out[i] = RowChange{Table: ti.name, Key: before[i].Key, Before: &before[i], After: after[ids[i]]}
	}
	return out, nil
}
