package statedb

import (
	"github.com/sessionctl/sessionctl/sessionsjson"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
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

// Ghost is an empty TUI session the ghost prune would delete. Kept is set for a ghost with a
// child that is not a ghost deleted with it (see keptGhosts): PruneGhosts keeps it, as the
// runtime's DELETE would fail on the foreign key.
type Ghost struct {
	Session
	ChildIDs []string
	Kept     bool
	// Leased is the live turn lease of the ghost's lineage root (r0817): the CLI skips it.
	Leased *TurnLease
}

// promptGC reports whether the ghost prune of the file's generation also deletes the
// unreferenced system prompts (and the file has the table).
func (db *DB) promptGC() bool {
	return db.schema.Tables["system_prompts"] && sessionsjson.RulesForSchema(db.schema.Version).PromptGC
}

// PruneResult reports a PruneGhosts run.
type PruneResult struct {
	Deleted  []string            // session ids deleted, oldest first
	Changes  []RowChange         // before images of the deleted sessions rows, then of rows in other tables removed or changed by ON DELETE actions, then of the system prompts deleted
	Kept     []string            // matching ghosts kept because rows that stay name them as parent
	Leased   []Ghost             // matching ghosts skipped because their lineage holds a live turn lease
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
// ids of its children and whether PruneGhosts keeps it (keptGhosts).
func (db *DB) GhostCandidates(ctx context.Context, now, minAge float64) ([]Ghost, error) {
	if err := db.requireSessionColumns("ghost candidates", "title"); err != nil {
		return nil, err
	}
	sessions, err := db.querySessions(ctx, db.sql, db.ghostCandidatesQuery(), now-minAge)
	if err != nil {
		return nil, classify("ghost candidates", err, false)
	}
	return db.ghostsOf(ctx, now, sessions)
}

// GhostCandidateIDs is GhostCandidates with only the id of each session read: what an apply
// needs before its batches read each row again under the write lock.
func (db *DB) GhostCandidateIDs(ctx context.Context, now, minAge float64) ([]Ghost, error) {
	if err := db.requireSessionColumns("ghost candidates", "title"); err != nil {
		return nil, err
	}
	ids, err := queryStrings(ctx, db.sql, "SELECT sessions.id FROM sessions WHERE "+ghostPredicate+oldestFirst, now-minAge)
	if err != nil {
		return nil, classify("ghost candidates", err, false)
	}
	sessions := make([]Session, len(ids))
	for i, id := range ids {
		sessions[i] = Session{ID: id}
	}
	return db.ghostsOf(ctx, now, sessions)
}

// ghostsOf completes the candidate sessions (oldest first) with their children, leases and
// whether each is kept.
func (db *DB) ghostsOf(ctx context.Context, now float64, sessions []Session) ([]Ghost, error) {
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	children, err := childIDs(ctx, db.sql, ids)
	if err != nil {
		return nil, classify("ghost candidates", err, false)
	}
	leased, err := db.leasedAmong(ctx, db.sql, now, ids)
	if err != nil {
		return nil, classify("ghost candidates", err, false)
	}
	kept := keptGhosts(notLeased(ids, leased), children)
	out := make([]Ghost, len(sessions))
	for i, s := range sessions {
		out[i] = Ghost{Session: s, ChildIDs: children[s.ID], Kept: kept[s.ID]}
		if l, ok := leased[s.ID]; ok {
			out[i].Leased = &l
		}
	}
	return out, nil
}

// keptGhosts returns the ghosts that cannot be deleted: those with a child that is not a
// ghost, and then, until nothing changes, those with a child that is kept. The runtime
// deletes every ghost in one `DELETE FROM sessions WHERE id IN (…)` (hermes_state.py
// prune_empty_ghost_sessions, 3b750715a, 3914089d5, 52d0d671e, c2a3b9ce5, with
// `PRAGMA foreign_keys=ON` in SessionDB.__init__), whose foreign key on parent_session_id is
// checked when the statement ends: a ghost whose children are all ghosts deleted in the same
// statement — a ghost that is its own parent, ghosts parenting each other, a chain of ghosts
// — goes with them; one a remaining row names as parent would make the statement fail.
func keptGhosts(ids []string, children map[string][]string) map[string]bool {
	ghost := toSet(ids)
	kept := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, id := range ids {
			if kept[id] {
				continue
			}
			for _, c := range children[id] {
				if !ghost[c] || kept[c] {
					kept[id], changed = true, true
					break
				}
			}
		}
	}
	return kept
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
// whose children are all ghosts goes in the same transaction as they do (a ghost that is its
// own parent, ghosts parenting each other); a ghost a remaining row names as parent is kept
// (keptGhosts: the runtime's DELETE would fail on the foreign key), which is also what the
// plan (GhostCandidates) shows. Before images are captured for every deleted sessions row
// and for every row of another table that an ON DELETE action removes or changes. The latch
// ghost_session_prune_v1 is set to '1'; when no ghost is to be deleted nothing is written
// (not even the latch) and Deleted is empty. batch bounds how many ghosts (the oldest) are
// deleted, and so how long the write lock is held; Remaining lists the others for the next
// batch. Transcript files are not touched (see TranscriptFiles). beforeCommit (optional)
// sees every change, latch included, inside the transaction before it commits; its error
// rolls everything back. Where the generation's runtime does (sessionsjson.Rules.PromptGC,
// r0817), every system_prompts row no session references any more is deleted in the same
// transaction, its before image among Changes; run in batches, the last batch (the one that
// leaves nothing Remaining) collects them, once, which leaves the runtime's end state (an
// interrupted run leaves them to the runtime's next prune).
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
		if res, err = db.pruneTx(ctx, tx, now, minAge, batch); err != nil {
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

func (db *DB) pruneTx(ctx context.Context, tx *sql.Tx, now, minAge float64, batch Batch) (PruneResult, error) {
	var res PruneResult
	cutoff := now - minAge
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
	evaluated := imageIDs(ghosts)
	ghosts, children, err := withGhostDescendants(ctx, tx, ti, cutoff, ghosts)
	if err != nil {
		return res, err
	}
	ids := imageIDs(ghosts)
	leased, err := db.leasedAmong(ctx, tx, now, ids)
	if err != nil {
		return res, err
	}
	kept := keptGhosts(notLeased(ids, leased), children)
	res.Children = make(map[string][]string)
	var deletable []string
	for _, id := range evaluated {
		if l, ok := leased[id]; ok {
			res.Leased = append(res.Leased, Ghost{Session: Session{ID: id}, Leased: &l})
			continue
		}
		if kept[id] {
			res.Kept, res.Children[id] = append(res.Kept, id), children[id]
		} else {
			deletable = append(deletable, id)
		}
	}
	taken, left := takeFamilies(deletable, children, batch.MaxRows)
	res.Remaining = remainingAfter(left, notEvaluated)
	for _, id := range ids { // oldest first
		if taken[id] {
			res.Deleted = append(res.Deleted, id)
		}
	}
	if len(res.Deleted) == 0 {
		return res, errNothingToChange
	}
	// The runtime's one DELETE checks the foreign keys when it ends; deleting in chunks, they
	// are checked at the commit instead (the pragma ends with the transaction).
	if _, err := tx.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
		return res, fmt.Errorf("defer foreign keys: %w", err)
	}
	if res.Changes, err = deleteSessions(ctx, tx, ti, deletedImages(ghosts, res.Deleted)); err != nil {
		return res, err
	}
	if db.promptGC() && len(res.Remaining) == 0 {
		prompts, err := deleteUnreferencedPrompts(ctx, tx)
		if err != nil {
			return res, err
		}
		res.Changes = append(res.Changes, prompts...)
	}
	res.Latch, err = setLatch(ctx, tx, LatchPruneGhosts)
	return res, err
}

// unreferencedPrompts is the runtime's condition for a system_prompts row no session uses
// (r0817 hermes_state.py _delete_unreferenced_system_prompts, 7d066c3c5, PR #77755).
const unreferencedPrompts = `NOT EXISTS (SELECT 1 FROM sessions WHERE sessions.system_prompt_hash = system_prompts.hash)`

// deleteUnreferencedPrompts deletes every system_prompts row no session references, as
// r0817's prune_empty_ghost_sessions does in the transaction of its DELETE (not only the
// deleted ghosts' prompts: every unreferenced one), and returns their changes. The rows are
// found in one scan (their before images) and deleted by key, which is the same set inside
// the transaction.
func deleteUnreferencedPrompts(ctx context.Context, tx *sql.Tx) ([]RowChange, error) {
	ti, err := loadTableInfo(ctx, tx, "system_prompts")
	if err != nil {
		return nil, err
	}
	before, err := readImagesWhere(ctx, tx, ti, unreferencedPrompts+" ORDER BY hash")
	if err != nil {
		return nil, fmt.Errorf("read unreferenced system prompts: %w", err)
	}
	if len(before) == 0 {
		return nil, nil
	}
	hashes := make([]string, len(before))
	for i := range before {
		hashes[i] = before[i].Key["hash"].Text
	}
	for _, chunk := range chunks(hashes) {
		res, err := tx.ExecContext(ctx, "DELETE FROM system_prompts WHERE hash IN ("+placeholders(len(chunk))+")", stringArgs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("delete unreferenced system prompts: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(chunk)) {
			return nil, fmt.Errorf("delete unreferenced system prompts: %d rows deleted, %d read (%v)", n, len(chunk), err)
		}
	}
	out := make([]RowChange, len(before))
	for i := range before {
		out[i] = RowChange{Table: ti.name, Key: before[i].Key, Before: &before[i]}
	}
	return out, nil
}

// notLeased returns ids without those in leased: a leased ghost stays, like a row that is
// not a ghost, so a ghost parenting it is kept.
func notLeased(ids []string, leased map[string]TurnLease) []string {
	if len(leased) == 0 {
		return ids
	}
	var out []string
	for _, id := range ids {
		if _, ok := leased[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// withGhostDescendants adds to ghosts (oldest first) the ghosts among their descendants,
// looked up by id under the same predicate, and returns them all oldest first with the
// children of each: a ghost goes only with its ghost children, and a batch may hold the
// parent but not yet the child.
func withGhostDescendants(ctx context.Context, tx *sql.Tx, ti tableInfo, cutoff float64, ghosts []RowImage) ([]RowImage, map[string][]string, error) {
	children := map[string][]string{}
	have := toSet(imageIDs(ghosts))
	for frontier := imageIDs(ghosts); len(frontier) > 0; {
		kids, err := childIDs(ctx, tx, frontier)
		if err != nil {
			return nil, nil, fmt.Errorf("read children: %w", err)
		}
		var unseen []string
		for _, id := range frontier {
			children[id] = kids[id]
			for _, c := range kids[id] {
				if !have[c] {
					have[c], unseen = true, append(unseen, c)
				}
			}
		}
		if len(unseen) == 0 {
			break
		}
		from, args := amongSource(unseen)
		more, err := readImagesFrom(ctx, tx, ti, from, ghostPredicate, append(args, cutoff)...)
		if err != nil {
			return nil, nil, fmt.Errorf("read ghosts: %w", err)
		}
		ghosts, frontier = append(ghosts, more...), imageIDs(more)
	}
	sort.SliceStable(ghosts, func(i, j int) bool { return olderImage(&ghosts[i], &ghosts[j]) })
	return ghosts, children, nil
}

// olderImage orders sessions images as oldestFirst does: started_at, then id, as SQLite
// compares them.
func olderImage(a, b *RowImage) bool {
	as, _ := a.Get("started_at")
	bs, _ := b.Get("started_at")
	if c := Compare(as, bs); c != 0 {
		return c < 0
	}
	return Compare(a.Key["id"], b.Key["id"]) < 0
}

// takeFamilies picks, oldest first, the deletable ghosts a batch of at most maxRows rows (0:
// no bound) deletes, each with its ghost descendants (every one deletable, by keptGhosts), so
// that no deleted row leaves a child behind; a family larger than maxRows is taken whole when
// it comes first. left lists the deletable ghosts not taken, oldest first.
func takeFamilies(deletable []string, children map[string][]string, maxRows int) (taken map[string]bool, left []string) {
	taken = map[string]bool{}
	n := 0
	for i, id := range deletable {
		if taken[id] {
			continue
		}
		family := descendants(id, children, taken)
		if maxRows > 0 && n > 0 && n+len(family) > maxRows {
			for _, rest := range deletable[i:] {
				if !taken[rest] {
					left = append(left, rest)
				}
			}
			return taken, left
		}
		for _, f := range family {
			taken[f] = true
		}
		n += len(family)
	}
	return taken, nil
}

// descendants returns id and every session below it through children, skipping those in
// skip, each once (a cycle ends the walk).
func descendants(id string, children map[string][]string, skip map[string]bool) []string {
	seen := map[string]bool{id: true}
	out := []string{id}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i]] {
			if !seen[c] && !skip[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
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

// deleteEach deletes the sessions rows of ids (at most maxInList) in one statement, as the
// runtime's DELETE … WHERE id IN (…) does. The caller defers the foreign keys to the commit, so
// a parent may go before its ghost child, and the rows of a cycle together. (A statement per
// row was faster once; measured again with the v26 indexes and on v21 alike, one statement for
// 500 rows holds the lock less: 56 against 78 ms on the 2m-message v26 home, 43 against 50 ms
// on v21.)
func deleteEach(ctx context.Context, tx *sql.Tx, ids []string) error {
	res, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id IN ("+placeholders(len(ids))+")", stringArgs(ids)...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(ids)) {
		return fmt.Errorf("%d sessions rows deleted, %d expected (%v)", n, len(ids), err)
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
