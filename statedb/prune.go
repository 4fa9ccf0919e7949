package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// DefaultGhostMinAge is the runtime's ghost-prune cutoff: 24 hours, in seconds.
const DefaultGhostMinAge = 86400.0

// ghostPredicate is prune_empty_ghost_sessions' WHERE clause (upstream hermes_state.py
// SessionDB.prune_empty_ghost_sessions, as of 3b750715a and later); its one
// argument is the cutoff.
const ghostPredicate = `sessions.source = 'tui'
	AND sessions.title IS NULL
	AND sessions.ended_at IS NOT NULL
	AND sessions.started_at < ?
	AND NOT EXISTS (SELECT 1 FROM messages WHERE messages.session_id = sessions.id)`

// Ghost is an empty TUI session the ghost prune would delete. A ghost with ChildIDs is kept
// by PruneGhosts (the runtime's DELETE would fail on the foreign key).
type Ghost struct {
	Session
	ChildIDs []string
}

// PruneResult reports a PruneGhosts run.
type PruneResult struct {
	Deleted  []string            // session ids deleted, oldest first
	Changes  []RowChange         // before images of the deleted sessions rows, then of rows in other tables removed or changed by ON DELETE actions
	Kept     []string            // matching ghosts kept because rows still name them as parent
	Children map[string][]string // the children of each kept ghost
	// Remaining are the candidate ids left for another batch (Batch.Among), oldest first:
	// matching ones beyond MaxRows, and ids of Among this batch did not evaluate. Empty
	// when the run is done.
	Remaining []string
	Latch     RowChange // state_meta ghost_session_prune_v1
	Stats     TxStats
}

// GhostCandidates lists the sessions prune_empty_ghost_sessions would delete at now, with
// cutoff = now - minAge compared strictly (started_at < cutoff), oldest first, each with the
// ids of its children.
func (db *DB) GhostCandidates(ctx context.Context, now, minAge float64) ([]Ghost, error) {
	if err := db.requireSessionColumns("ghost candidates", "title"); err != nil {
		return nil, err
	}
	sessions, err := db.querySessions(ctx, db.sql, db.ghostCandidatesQuery(), now-minAge)
	if err != nil {
		return nil, classify("ghost candidates", err, false)
	}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	children, err := childIDs(ctx, db.sql, ids)
	if err != nil {
		return nil, classify("ghost candidates", err, false)
	}
	out := make([]Ghost, len(sessions))
	for i, s := range sessions {
		out[i] = Ghost{Session: s, ChildIDs: children[s.ID]}
	}
	return out, nil
}

// ghostCandidatesQuery returns the candidate query; its one argument is the cutoff.
func (db *DB) ghostCandidatesQuery() string {
	return "SELECT " + db.sessionColumns("sessions") + " FROM sessions WHERE " + ghostPredicate + oldestFirst
}

// childIDs maps each of ids to the ids of its children (oldest first).
func childIDs(ctx context.Context, q querier, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, chunk := range chunks(ids) {
		rows, err := q.QueryContext(ctx, "SELECT parent_session_id, id FROM sessions WHERE parent_session_id IN ("+
			placeholders(len(chunk))+") ORDER BY started_at, id", stringArgs(chunk)...)
		if err != nil {
			return nil, err
		}
		err = collectPairs(rows, out)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func collectPairs(rows *sql.Rows, out map[string][]string) error {
	defer rows.Close()
	for rows.Next() {
		var parent, child string
		if err := rows.Scan(&parent, &child); err != nil {
			return err
		}
		out[parent] = append(out[parent], child)
	}
	return rows.Err()
}

// PruneGhosts deletes every session prune_empty_ghost_sessions would delete at now (cutoff
// = now - minAge, compared strictly), in one BEGIN IMMEDIATE transaction that also selects
// them, so what is deleted is exactly what matches while the write lock is held. A ghost
// that any row names as parent is kept, even when that child is a ghost deleted in the same
// run (the runtime's DELETE would fail on the foreign key; the next run deletes the parent),
// which is also what the plan (GhostCandidates) shows. Before images are captured for every deleted sessions row
// and for every row of another table that an ON DELETE action removes or changes. The latch
// ghost_session_prune_v1 is set to '1'; when no ghost is to be deleted nothing is written
// (not even the latch) and Deleted is empty. batch bounds how many ghosts (the oldest) are
// deleted, and so how long the write lock is held; Remaining lists the others for the next
// batch. Transcript files are not touched (see TranscriptFiles). beforeCommit (optional)
// sees every change, latch included, inside the transaction before it commits; its error
// rolls everything back.
func (db *DB) PruneGhosts(ctx context.Context, now, minAge float64, batch Batch, beforeCommit CommitHook) (PruneResult, error) {
	const op = "prune ghosts"
	if err := db.requireWrite(op); err != nil {
		return PruneResult{}, err
	}
	if err := db.requireSessionColumns(op, "title"); err != nil {
		return PruneResult{}, err
	}
	if err := db.requireTable(op, "state_meta"); err != nil {
		return PruneResult{}, err
	}
	var res PruneResult
	stats, err := db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		var err error
		if res, err = pruneTx(ctx, tx, now-minAge, batch); err != nil {
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

func pruneTx(ctx context.Context, tx *sql.Tx, cutoff float64, batch Batch) (PruneResult, error) {
	var res PruneResult
	ti, err := loadTableInfo(ctx, tx, "sessions")
	if err != nil {
		return res, err
	}
	among, notEvaluated := batch.take()
	from, args := amongSource(among)
	ghosts, err := readImagesFrom(ctx, tx, ti, from, ghostPredicate+oldestFirst, append(args, cutoff)...)
	if err != nil {
		return res, fmt.Errorf("read ghosts: %w", err)
	}
	ids := imageIDs(ghosts)
	children, err := childIDs(ctx, tx, ids)
	if err != nil {
		return res, fmt.Errorf("read children: %w", err)
	}
	res.Children = make(map[string][]string)
	for _, id := range ids {
		if kids := children[id]; len(kids) > 0 {
			res.Kept, res.Children[id] = append(res.Kept, id), kids
		} else {
			res.Deleted = append(res.Deleted, id)
		}
	}
	k := batch.limit(len(res.Deleted))
	res.Remaining = remainingAfter(res.Deleted[k:], notEvaluated)
	res.Deleted = res.Deleted[:k]
	if len(res.Deleted) == 0 {
		return res, errNothingToChange
	}
	if res.Changes, err = deleteSessions(ctx, tx, ti, deletedImages(ghosts, res.Deleted)); err != nil {
		return res, err
	}
	res.Latch, err = setLatch(ctx, tx, LatchPruneGhosts)
	return res, err
}

// deletedImages returns the images of ghosts whose id is in deleted, in order.
func deletedImages(ghosts []RowImage, deleted []string) []RowImage {
	del := toSet(deleted)
	out := make([]RowImage, 0, len(deleted))
	for _, g := range ghosts {
		if del[g.Key["id"].Text] {
			out = append(out, g)
		}
	}
	return out
}

// deleteSessions deletes the sessions rows whose before images are given and returns their
// changes, then those of the dependent rows ON DELETE actions touch.
func deleteSessions(ctx context.Context, tx *sql.Tx, ti tableInfo, before []RowImage) ([]RowChange, error) {
	deps, err := dependents(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	var sessions, others []RowChange
	for len(before) > 0 {
		chunk := before[:min(len(before), maxInList)]
		before = before[len(chunk):]
		o, err := deleteChunk(ctx, tx, deps, chunk)
		if err != nil {
			return nil, err
		}
		for i := range chunk {
			sessions = append(sessions, RowChange{Table: ti.name, Key: chunk[i].Key, Before: &chunk[i]})
		}
		others = append(others, o...)
	}
	return append(sessions, others...), nil
}

// deleteChunk deletes the sessions of one chunk (at most maxInList) and returns the changes
// of the dependent rows.
func deleteChunk(ctx context.Context, tx *sql.Tx, deps []dependent, chunk []RowImage) ([]RowChange, error) {
	ids := imageIDs(chunk)
	in := "(" + placeholders(len(ids)) + ")"
	depBefore, err := dependentImages(ctx, tx, deps, in, ids)
	if err != nil {
		return nil, err
	}
	if err := deleteEach(ctx, tx, ids); err != nil {
		return nil, fmt.Errorf("delete ghosts: %w", err)
	}
	var others []RowChange
	for _, d := range depBefore {
		changes, err := afterImages(ctx, tx, d.ti, d.rows)
		if err != nil {
			return nil, err
		}
		others = append(others, changes...)
	}
	return others, nil
}

// deleteEach deletes the sessions rows of ids one statement each. Under foreign keys SQLite
// keeps a statement journal of every page a DELETE changes; one statement for 500 rows
// journals thousands of pages, each a fresh allocation in modernc's SQLite, while a statement
// per row reuses a journal of a few pages. On the 2 M-message home that makes deleting 500
// ghosts 45 ms instead of 69 ms (medians of 10), with the write lock held. A foreign key
// without an ON DELETE action is checked after each row, not after the whole batch; none can
// fail in between, since a ghost has no messages and a ghost with children is kept.
func deleteEach(ctx context.Context, tx *sql.Tx, ids []string) error {
	stmt, err := tx.PrepareContext(ctx, "DELETE FROM sessions WHERE id = ?")
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, id := range ids {
		res, err := stmt.ExecContext(ctx, id)
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("session %s: %d rows deleted, 1 expected (%v)", id, n, err)
		}
	}
	return nil
}

// dependent is a column of another table whose foreign key to sessions has an ON DELETE
// action (CASCADE, SET NULL, SET DEFAULT) that a sessions DELETE would apply.
type dependent struct {
	ti     tableInfo
	column string
}

// dependents lists the foreign keys to sessions with an ON DELETE action, in table order.
func dependents(ctx context.Context, tx *sql.Tx) ([]dependent, error) {
	tables, err := queryStrings(ctx, tx, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var out []dependent
	for _, t := range tables {
		cols, err := queryStrings(ctx, tx, `SELECT "from" FROM pragma_foreign_key_list(?)
			WHERE "table" = 'sessions' AND upper(on_delete) IN ('CASCADE', 'SET NULL', 'SET DEFAULT')`, t)
		if err != nil {
			return nil, err
		}
		if len(cols) == 0 {
			continue
		}
		ti, err := loadTableInfo(ctx, tx, t)
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			out = append(out, dependent{ti: ti, column: c})
		}
	}
	return out, nil
}

// depRows holds the before images of one dependent table's rows.
type depRows struct {
	ti   tableInfo
	rows []RowImage
}

func dependentImages(ctx context.Context, tx *sql.Tx, deps []dependent, in string, chunk []string) ([]depRows, error) {
	var out []depRows
	for _, d := range deps {
		order := strings.Join(quoteAll(d.ti.pk), ", ")
		rows, err := readImagesWhere(ctx, tx, d.ti, quoteIdent(d.column)+" IN "+in+" ORDER BY "+order,
			stringArgs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read %s rows: %w", d.ti.name, err)
		}
		if len(rows) > 0 {
			out = append(out, depRows{ti: d.ti, rows: rows})
		}
	}
	return out, nil
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteIdent(n)
	}
	return out
}
