package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// The state_meta keys of r0817's deferred FTS rebuild (hermes_state_common.py at 481156139):
// while both are set, a message row is in the indexes iff its id is at most the progress or
// above the high water, and every FTS trigger skips the rows between.
const (
	ftsHighWaterKey = "fts_rebuild_high_water"
	ftsProgressKey  = "fts_rebuild_progress"
)

// ftsSweep is the window on each side of the high water that the end of a gated rebuild sweeps
// for rows the index lacks, as the runtime's _fts_rebuild_finish does: a row written at the
// instant the markers were set by another process (the runtime's own backfill) is indexed.
const ftsSweep = 1000

// FTSRebuild is a rebuild of full-text indexes in bounded steps, each its own write
// transaction (FTSRebuildStep), so that a live gateway's writes get in between: the
// one-statement rebuild held state.db's write lock for seconds on a 1 GB home. The documents it
// leaves are those of the layout's own rebuild (FTS5's 'rebuild' of an external-content
// index; DELETE and the INSERT … SELECT of inlineFill for an inline one):
//
//   - r0817's external indexes, whose triggers are gated by fts_rebuild_high_water and
//     fts_rebuild_progress, are rebuilt by the runtime's own deferred-rebuild protocol
//     (fts_rebuild_step, _fts_rebuild_finish at 481156139): a first step empties them
//     ('delete-all') and sets the markers, each step indexes the next ids up to the high water
//     and publishes its progress in the same transaction, the last one sweeps the boundary and
//     clears the markers. Rows a writer adds meanwhile are above the high water and indexed by
//     the triggers; a kill leaves the markers, and the next rebuild (or the runtime's
//     optimize-storage) resumes from the progress.
//   - An inline index (r0506–r0715) is replaced range by range: each step deletes the
//     documents of its ids and inserts the messages of the same ids, so every range done is
//     exact whatever a writer does around it (the inline triggers delete by rowid); a kill
//     leaves the ranges not yet done as they were, and the next rebuild starts again.
//   - An ungated external index (r0418) is emptied by a first step and refilled range by
//     range; a kill leaves it short of documents (out of step), and the next rebuild starts
//     again. A writer that deletes or edits an old message before its range is refilled would
//     delete a document the index does not hold (FTS5's documented corruption of an external
//     index): that is why the rebuild refuses a running gateway without --force.
type FTSRebuild struct {
	Indexes []FTSIndex // the indexes rebuilt, all of them for the gated layout
	gated   bool
	// cols are each index's column list, its source's column list.
	cols, srcCols []string
	started       bool  // emptied (external), or the markers set (gated)
	next, high    int64 // ids (next, high] remain to be indexed
}

// Remaining returns the ids still to index (cost units of the steps left).
func (b *FTSRebuild) Remaining() int64 { return max(b.high-b.next, 0) }

// Done reports whether the rebuild is complete.
func (b *FTSRebuild) Done() bool { return !b.NeedsStart() && b.next >= b.high }

// NeedsStart reports whether the next step empties the indexes (its cost is not that of ids).
func (b *FTSRebuild) NeedsStart() bool {
	return !b.started && (b.gated || b.Indexes[0].External)
}

// Resumed reports whether the rebuild continues a deferred rebuild already under way (the
// markers were found set).
func (b *FTSRebuild) Resumed() bool { return b.gated && b.started }

// FTSToRebuild returns the indexes `fts rebuild` refills: those out of step with their
// source, and, where the triggers are gated by r0817's markers, every gated index once any of
// them is out of step or the markers are set (a deferred rebuild under way, resumed): the
// markers gate them all.
func (db *DB) FTSToRebuild(ctx context.Context) ([]FTSIndex, error) {
	all, err := db.FTSIndexes(ctx)
	if err != nil {
		return nil, err
	}
	_, pending, err := db.metaInt(ctx, ftsHighWaterKey)
	if err != nil {
		return nil, err
	}
	var out, gated []FTSIndex
	for _, x := range all {
		g, err := db.ftsGated(ctx, x)
		if err != nil {
			return nil, err
		}
		if g {
			gated = append(gated, x)
		}
		pending = pending || x.OutOfStep() && g
		if x.OutOfStep() && !g {
			out = append(out, x)
		}
	}
	if pending {
		out = append(out, gated...)
	}
	return out, nil
}

// PlanFTSRebuild plans the rebuild of the indexes FTSToRebuild returned, or resumes the
// deferred rebuild whose markers are set.
func (db *DB) PlanFTSRebuild(ctx context.Context, indexes []FTSIndex) (*FTSRebuild, error) {
	const op = "rebuild FTS"
	if err := db.requireWrite(op); err != nil {
		return nil, err
	}
	if len(indexes) == 0 {
		return nil, fmt.Errorf("%s: no index to rebuild", op)
	}
	b := &FTSRebuild{Indexes: indexes}
	for i, x := range indexes {
		gated, err := db.ftsGated(ctx, x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if i == 0 {
			b.gated = gated
		} else if gated != b.gated || x.External != indexes[0].External {
			return nil, fmt.Errorf("%s: %s and %s differ in layout (external content, gated triggers): %w", op, indexes[0].Table, x.Table, ErrUnsupportedSchema)
		}
	}
	for _, x := range b.Indexes {
		if !x.External && !(db.schema.MessageColumns["tool_name"] && db.schema.MessageColumns["tool_calls"]) {
			return nil, fmt.Errorf("%s: %s is inline but messages lacks tool_name or tool_calls: %w", op, x.Table, ErrUnsupportedSchema)
		}
		cols, err := queryStrings(ctx, db.sql, "SELECT name FROM pragma_table_info(?) ORDER BY cid", x.Table)
		if err != nil {
			return nil, classify(op+": read the columns of "+x.Table, err, false)
		}
		src := make([]string, len(cols))
		for i, c := range cols {
			cols[i], src[i] = quoteIdent(c), "s."+quoteIdent(c)
		}
		b.cols, b.srcCols = append(b.cols, strings.Join(cols, ", ")), append(b.srcCols, strings.Join(src, ", "))
	}
	if b.gated {
		hw, hwOK, err := db.metaInt(ctx, ftsHighWaterKey)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		p, pOK, err := db.metaInt(ctx, ftsProgressKey)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		if hwOK { // a deferred rebuild under way: resumed from its progress
			b.started, b.high, b.next = true, hw, p
			if !pOK {
				b.next = -1 // the triggers' COALESCE(…, -1)
			}
			return b, nil
		}
	}
	// The ids to index: every messages id, and for an inline index every document's.
	tables := []string{"messages"}
	if !b.Indexes[0].External {
		for _, x := range b.Indexes {
			tables = append(tables, x.Table+"_docsize")
		}
	}
	lo := int64(1)
	for _, t := range tables {
		var first, last sql.NullInt64
		if err := db.sql.QueryRowContext(ctx, "SELECT MIN(id), MAX(id) FROM "+quoteIdent(t)).Scan(&first, &last); err != nil {
			return nil, classify(op+": read the ids of "+t, err, false)
		}
		if first.Valid {
			lo, b.high = min(lo, first.Int64), max(b.high, last.Int64)
		}
	}
	b.next = min(lo-1, 0)
	return b, nil
}

// ftsGated reports whether an external index's triggers are gated by r0817's rebuild markers.
func (db *DB) ftsGated(ctx context.Context, x FTSIndex) (bool, error) {
	if !x.External || !db.schema.HasStateMeta {
		return false, nil
	}
	var ddl string
	err := db.sql.QueryRowContext(ctx, "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = ?", x.Table+"_insert").Scan(&ddl)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, classify("read the triggers of "+x.Table, err, false)
	}
	return strings.Contains(ddl, ftsHighWaterKey), nil
}

// metaInt reads an integer state_meta value.
func (db *DB) metaInt(ctx context.Context, key string) (int64, bool, error) {
	v, ok, err := db.Meta(ctx, key)
	if err != nil || !ok {
		return 0, ok, err
	}
	var n int64
	if _, err := fmt.Sscan(strings.TrimSpace(v), &n); err != nil {
		return 0, false, fmt.Errorf("state_meta %s = %q is not an integer: %w", key, v, ErrUnsupportedSchema)
	}
	return n, true, nil
}

// FTSRebuildStep runs the rebuild's next step in one write transaction: the start (the
// indexes emptied, the markers set) when NeedsStart, else the next ids ids (at least one).
// beforeCommit runs inside the transaction, before the commit (the journal of the first step).
// No row of messages or of any other table is touched, state_meta's two markers aside.
func (db *DB) FTSRebuildStep(ctx context.Context, b *FTSRebuild, ids int64, beforeCommit CommitHook) (TxStats, error) {
	start := b.NeedsStart()
	next := b.next
	stats, err := db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		b.next = next // a busy retry runs the step again from the same place
		if start {
			if err := b.start(ctx, tx); err != nil {
				return err
			}
		} else if err := b.fill(ctx, tx, max(ids, 1)); err != nil {
			return err
		}
		return beforeCommit.run(nil)
	})
	if err != nil {
		b.next = next
		return stats, fmt.Errorf("rebuild FTS: %w", err)
	}
	if start {
		b.started = true
	}
	return stats, nil
}

// start empties external indexes ('delete-all') and, for the gated layout, sets the markers:
// the ids to index are read again under the lock.
func (b *FTSRebuild) start(ctx context.Context, tx *sql.Tx) error {
	for _, x := range b.Indexes {
		t := quoteIdent(x.Table)
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+t+"("+t+") VALUES('delete-all')"); err != nil {
			return fmt.Errorf("%s: %w", x.Table, err)
		}
	}
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM messages").Scan(&b.high); err != nil {
		return fmt.Errorf("read the message ids: %w", err)
	}
	if !b.gated {
		return nil
	}
	for _, kv := range [][2]any{{ftsHighWaterKey, b.high}, {ftsProgressKey, b.next}} {
		if _, err := tx.ExecContext(ctx, "INSERT INTO state_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
			kv[0], fmt.Sprint(kv[1])); err != nil {
			return fmt.Errorf("set %s: %w", kv[0], err)
		}
	}
	return nil
}

// fill indexes the ids (next, next+ids] (up to the high water), and ends the rebuild with the
// last of them.
func (b *FTSRebuild) fill(ctx context.Context, tx *sql.Tx, ids int64) error {
	if b.gated { // the claim: the markers as they are under the lock (another process may have moved them)
		var hw, p sql.NullString
		err := tx.QueryRowContext(ctx, "SELECT (SELECT value FROM state_meta WHERE key = ?), (SELECT value FROM state_meta WHERE key = ?)",
			ftsHighWaterKey, ftsProgressKey).Scan(&hw, &p)
		if err != nil {
			return fmt.Errorf("read %s: %w", ftsProgressKey, err)
		}
		if !hw.Valid { // finished (or cleared) by another process
			b.next = b.high
			return nil
		}
		b.next = -1 // no progress: the triggers' COALESCE(…, -1)
		if p.Valid {
			if _, err := fmt.Sscan(strings.TrimSpace(p.String), &b.next); err != nil {
				return fmt.Errorf("state_meta %s = %q is not an integer: %w", ftsProgressKey, p.String, ErrUnsupportedSchema)
			}
		}
	}
	upper := min(b.next+ids, b.high)
	for i, x := range b.Indexes {
		t, docs := quoteIdent(x.Table), quoteIdent(x.Table+"_docsize")
		stmts := []string{"INSERT INTO " + t + "(rowid, " + b.cols[i] + ") SELECT s." + quoteIdent(x.key) + ", " + b.srcCols[i] +
			" FROM " + quoteIdent(x.Source) + " s WHERE s." + quoteIdent(x.key) + " > ? AND s." + quoteIdent(x.key) + " <= ?" +
			" AND NOT EXISTS (SELECT 1 FROM " + docs + " d WHERE d.id = s." + quoteIdent(x.key) + ")"}
		if !x.External {
			stmts = []string{"DELETE FROM " + t + " WHERE rowid > ? AND rowid <= ?",
				"INSERT INTO " + t + "(rowid, content) SELECT id, " + inlineFill + " FROM messages WHERE id > ? AND id <= ?"}
		}
		for _, st := range stmts {
			if _, err := tx.ExecContext(ctx, st, b.next, upper); err != nil {
				return fmt.Errorf("%s: %w", x.Table, err)
			}
		}
	}
	b.next = upper
	if !b.gated {
		return nil
	}
	if upper < b.high {
		_, err := tx.ExecContext(ctx, "INSERT INTO state_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
			ftsProgressKey, fmt.Sprint(upper))
		return err
	}
	for i, x := range b.Indexes { // the end: the boundary swept, the markers cleared
		k, docs := quoteIdent(x.key), quoteIdent(x.Table+"_docsize")
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+quoteIdent(x.Table)+"(rowid, "+b.cols[i]+") SELECT s."+k+", "+b.srcCols[i]+
			" FROM "+quoteIdent(x.Source)+" s WHERE s."+k+" > ? AND s."+k+" <= ? AND NOT EXISTS (SELECT 1 FROM "+docs+" d WHERE d.id = s."+k+")",
			b.high-ftsSweep, b.high+ftsSweep); err != nil {
			return fmt.Errorf("%s: sweep: %w", x.Table, err)
		}
	}
	_, err := tx.ExecContext(ctx, "DELETE FROM state_meta WHERE key IN (?, ?)", ftsHighWaterKey, ftsProgressKey)
	return err
}
