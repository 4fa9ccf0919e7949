package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// A row store is a journal of whole rows kept in a SQLite file of its own (docs/decisions.md,
// "Row stores"): for each state.db table a change deletes rows from, a table of the same name
// and columns, untyped (so every value keeps its storage class), keyed like the original;
// sessionctl_tables lists them with their key; sessionctl_orphaned holds the children whose
// parent_session_id the change cleared, with the parent they had. Rows are copied with
// INSERT … SELECT between the two files, never through Go values, so the size of a change
// does not reach the process's memory.

// rowStoreRowid names the column that keeps the rowid of a row whose table has no declared
// primary key.
const rowStoreRowid = "sessionctl_rowid"

// rowStoreSchema creates the store's own tables.
const rowStoreSchema = `CREATE TABLE sessionctl_tables (name TEXT PRIMARY KEY, key_columns TEXT NOT NULL, rowid INTEGER NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE sessionctl_orphaned (id PRIMARY KEY, parent_session_id);`

// RowStoreStats counts what a row store holds.
type RowStoreStats struct {
	Rows map[string]int64 // rows by state.db table
}

// openStore opens an existing row store file (never creating one) with durable commits, and
// attaches another database under name: state.db read-only for a capture.
func openStore(ctx context.Context, path string) (*sql.DB, *sql.Conn, error) {
	q := url.Values{}
	q.Set("mode", "rw")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "busy_timeout(1000)")
	sqldb, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, nil, err
	}
	sqldb.SetMaxOpenConns(1)
	conn, err := sqldb.Conn(ctx)
	if err != nil {
		_ = sqldb.Close()
		return nil, nil, err
	}
	return sqldb, conn, nil
}

// uriFor returns a file: URI of path with mode.
func uriFor(path, mode string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=" + mode
}

// CaptureRows records in the row store at path (an existing empty file the caller created)
// every row plan deletes or changes, read from this state.db through a second, read-only
// connection, and commits the store durably. It runs inside PruneSessions' transaction (the
// write lock is held, nothing is written yet), so the store holds exactly what the
// transaction then deletes: the sessions rows, their messages, the rows of other tables the
// ON DELETE actions reach, the children that lose their parent, and (PromptGC) the
// system_prompts rows no remaining session references. A store left by an earlier attempt of
// the same transaction is emptied first.
func (db *DB) CaptureRows(ctx context.Context, path string, plan RetentionPlan) (RowStoreStats, error) {
	sqldb, conn, err := openStore(ctx, path)
	if err != nil {
		return RowStoreStats{}, fmt.Errorf("open row store: %w", err)
	}
	defer sqldb.Close()
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS s", uriFor(db.path, "ro")); err != nil {
		return RowStoreStats{}, fmt.Errorf("attach state.db to the row store: %w", err)
	}
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "DETACH DATABASE s") }()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return RowStoreStats{}, fmt.Errorf("row store: %w", err)
	}
	stats, err := capture(ctx, tx, plan)
	if err == nil {
		faultPoint(FaultRowStoreBeforeCommit)
		err = tx.Commit()
	} else {
		_ = tx.Rollback()
	}
	if err != nil {
		return RowStoreStats{}, fmt.Errorf("row store: %w", err)
	}
	faultPoint(FaultAfterRowStore)
	return stats, nil
}

// captureTable is one state.db table a capture copies from, with its condition on the alias o.
type captureTable struct {
	name  string
	where string
}

// capture fills the store inside its transaction.
func capture(ctx context.Context, tx *sql.Tx, plan RetentionPlan) (RowStoreStats, error) {
	if err := resetStore(ctx, tx); err != nil {
		return RowStoreStats{}, err
	}
	ids, _ := json.Marshal(plan.Deleted)
	tables := []captureTable{
		{"sessions", "o.id IN (SELECT value FROM json_each(?1))"},
		{"messages", "o.session_id IN (SELECT value FROM json_each(?1))"},
	}
	for _, d := range plan.deps {
		tables = append(tables, captureTable{d.ti.name, "o." + quoteIdent(d.column) + " IN (SELECT value FROM json_each(?1))"})
	}
	if plan.Routing {
		tables = append(tables, captureTable{"gateway_routing", routingNaming})
	}
	if plan.PromptGC {
		tables = append(tables, captureTable{"system_prompts", `NOT EXISTS (SELECT 1 FROM s.sessions x
			WHERE x.system_prompt_hash = o.hash AND x.id NOT IN (SELECT value FROM json_each(?1)))`})
	}
	stats := RowStoreStats{Rows: map[string]int64{}}
	for seq, t := range tables {
		n, err := captureOne(ctx, tx, seq, t, string(ids))
		if err != nil {
			return stats, err
		}
		stats.Rows[t.name] += n
	}
	return stats, captureOrphaned(ctx, tx, plan.Orphaned)
}

// resetStore drops every table of the store and creates its own ones.
func resetStore(ctx context.Context, tx *sql.Tx) error {
	names, err := queryStrings(ctx, tx, "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, "DROP TABLE main."+quoteIdent(n)); err != nil {
			return err
		}
	}
	for _, stmt := range strings.Split(rowStoreSchema, ";\n") {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// captureOne copies the rows of one state.db table into the store's table of the same name
// (created on first use, untyped, keyed like the original) and returns how many it added.
func captureOne(ctx context.Context, tx *sql.Tx, seq int, t captureTable, ids string) (int64, error) {
	ti, err := tableInfoIn(ctx, tx, "s", t.name)
	if err != nil {
		return 0, err
	}
	cols := quoteAll(ti.cols)
	key := quoteAll(ti.pk)
	src := append([]string{}, cols...)
	if ti.rowid {
		cols, key, src = append(cols, rowStoreRowid), []string{rowStoreRowid}, append(src, "rowid")
	}
	if err := ensureStoreTable(ctx, tx, seq, ti, cols, key); err != nil {
		return 0, err
	}
	prefixed := make([]string, len(src))
	for i, c := range src {
		prefixed[i] = "o." + c
	}
	res, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO main."+quoteIdent(ti.name)+" ("+strings.Join(cols, ", ")+") SELECT "+
		strings.Join(prefixed, ", ")+" FROM s."+quoteIdent(ti.name)+" AS o WHERE "+t.where, ids)
	if err != nil {
		return 0, fmt.Errorf("copy %s rows: %w", ti.name, err)
	}
	return res.RowsAffected()
}

// ensureStoreTable creates the store's table for ti once and lists it in sessionctl_tables.
func ensureStoreTable(ctx context.Context, tx *sql.Tx, seq int, ti tableInfo, cols, key []string) error {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM main.sessionctl_tables WHERE name = ?", ti.name).Scan(&n); err != nil || n > 0 {
		return err
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE main."+quoteIdent(ti.name)+" ("+strings.Join(cols, ", ")+
		", PRIMARY KEY ("+strings.Join(key, ", ")+"))"); err != nil {
		return fmt.Errorf("create row store table %s: %w", ti.name, err)
	}
	keyCols := ti.pk
	if ti.rowid {
		keyCols = []string{rowStoreRowid}
	}
	keyJSON, _ := json.Marshal(keyCols)
	_, err := tx.ExecContext(ctx, "INSERT INTO main.sessionctl_tables (name, key_columns, rowid, seq) VALUES (?, ?, ?, ?)",
		ti.name, string(keyJSON), ti.rowid, seq)
	return err
}

// captureOrphaned records the children that lose their parent.
func captureOrphaned(ctx context.Context, tx *sql.Tx, orphaned map[string]string) error {
	for id, parent := range orphaned {
		if _, err := tx.ExecContext(ctx, "INSERT INTO main.sessionctl_orphaned (id, parent_session_id) VALUES (?, ?)", id, parent); err != nil {
			return fmt.Errorf("record orphaned children: %w", err)
		}
	}
	return nil
}

// storeTable is one table of a row store: its name, its columns and how its rows are keyed.
type storeTable struct {
	name  string
	cols  []string // the state.db columns it holds (not sessionctl_rowid)
	key   []string // key columns in the store
	rowid bool     // keyed by the state.db rowid (kept as sessionctl_rowid)
}

// storeTables lists the tables of the store attached as j, in capture order.
func storeTables(ctx context.Context, q querier) ([]storeTable, error) {
	rows, err := q.QueryContext(ctx, "SELECT name, key_columns, rowid FROM j.sessionctl_tables ORDER BY seq")
	if err != nil {
		return nil, fmt.Errorf("read row store: %w", err)
	}
	var out []storeTable
	for rows.Next() {
		var t storeTable
		var key string
		if err := rows.Scan(&t.name, &key, &t.rowid); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read row store: %w", err)
		}
		if err := json.Unmarshal([]byte(key), &t.key); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read row store: key of %s: %w", t.name, err)
		}
		out = append(out, t)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("read row store: %w", err)
	}
	for i := range out {
		cols, err := queryStrings(ctx, q, "SELECT name FROM pragma_table_info(?, 'j') WHERE name <> ? ORDER BY cid", out[i].name, rowStoreRowid)
		if err != nil {
			return nil, fmt.Errorf("read row store: %w", err)
		}
		out[i].cols = cols
	}
	return out, nil
}

// keyMatch joins the store's row o with the state.db row c.
func (t storeTable) keyMatch() string {
	if t.rowid {
		return "c.rowid = o." + rowStoreRowid
	}
	parts := make([]string, len(t.key))
	for i, k := range t.key {
		parts[i] = "c." + quoteIdent(k) + " = o." + quoteIdent(k)
	}
	return strings.Join(parts, " AND ")
}

// sameRow is true when the state.db row c holds every value of the store's row o, each of
// the same storage class.
func (t storeTable) sameRow() string {
	parts := make([]string, len(t.cols))
	for i, c := range t.cols {
		q := quoteIdent(c)
		parts[i] = "c." + q + " IS o." + q + " AND typeof(c." + q + ") = typeof(o." + q + ")"
	}
	return strings.Join(parts, " AND ")
}

// RowStoreDirection is what applying a row store does to state.db.
type RowStoreDirection int

// Row store directions.
const (
	// RowsRestore puts the store's rows back and gives the orphaned children their parent
	// again (undo of a prune).
	RowsRestore RowStoreDirection = iota + 1
	// RowsDelete deletes the store's rows again and clears the children's parent (undo of an
	// undo).
	RowsDelete
)

// ApplyRowStore applies the row store at path to state.db in one BEGIN IMMEDIATE transaction
// (with the runtime's retries). Every row is checked first: a row that already is as the
// direction leaves it (restored: present and equal to its image; deleted: absent) is left
// alone (the change never landed, or was undone already); a row that holds anything else
// returns an error wrapping ErrConflict and nothing is written. Restored messages go through
// the table's FTS triggers. Foreign keys are checked at the commit. changed counts the rows
// written.
func (db *DB) ApplyRowStore(ctx context.Context, path string, dir RowStoreDirection) (changed int64, stats TxStats, err error) {
	if err := db.requireWrite("apply row store"); err != nil {
		return 0, TxStats{}, err
	}
	if _, err := db.sql.ExecContext(ctx, "ATTACH DATABASE ? AS j", uriFor(path, "ro")); err != nil {
		return 0, TxStats{}, fmt.Errorf("attach row store %s: %w", path, err)
	}
	defer func() { _, _ = db.sql.ExecContext(context.WithoutCancel(ctx), "DETACH DATABASE j") }()
	stats, err = db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
			return fmt.Errorf("defer foreign keys: %w", err)
		}
		tables, err := storeTables(ctx, tx)
		if err != nil {
			return err
		}
		if err := checkStore(ctx, tx, tables); err != nil {
			return err
		}
		changed, err = writeStore(ctx, tx, tables, dir)
		return err
	})
	return changed, stats, err
}

// checkStore refuses (ErrConflict) when a row holds neither of the store's two states: a
// stored row present with other values, a child missing or with another parent. Both
// directions accept the same states.
func checkStore(ctx context.Context, tx *sql.Tx, tables []storeTable) error {
	for _, t := range tables {
		var key string
		err := tx.QueryRowContext(ctx, "SELECT "+keyText(t)+" FROM j."+quoteIdent(t.name)+" AS o JOIN main."+quoteIdent(t.name)+
			" AS c ON "+t.keyMatch()+" WHERE NOT ("+t.sameRow()+") LIMIT 1").Scan(&key)
		if err == nil {
			return fmt.Errorf("%s row %s holds other values than the journal's: %w", t.name, key, ErrConflict)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("check %s rows: %w", t.name, err)
		}
	}
	var id string // a child has either state: its parent cleared, or the recorded one
	err := tx.QueryRowContext(ctx, `SELECT o.id FROM j.sessionctl_orphaned AS o LEFT JOIN main.sessions AS c ON c.id = o.id
		WHERE c.id IS NULL OR NOT (c.parent_session_id IS NULL OR c.parent_session_id IS o.parent_session_id) LIMIT 1`).Scan(&id)
	if err == nil {
		return fmt.Errorf("session %s is missing or has another parent than the journal's: %w", id, ErrConflict)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("check orphaned children: %w", err)
	}
	return nil
}

// keyText renders the store row's key for a message.
func keyText(t storeTable) string {
	if t.rowid {
		return "'rowid=' || o." + rowStoreRowid
	}
	parts := make([]string, len(t.key))
	for i, k := range t.key {
		parts[i] = "'" + strings.ReplaceAll(k, "'", "''") + "=' || quote(o." + quoteIdent(k) + ")"
	}
	return strings.Join(parts, " || ', ' || ")
}

// writeStore writes the store's rows back (or deletes them again) and sets the children's
// parent, returning the rows written.
func writeStore(ctx context.Context, tx *sql.Tx, tables []storeTable, dir RowStoreDirection) (int64, error) {
	var total int64
	if dir == RowsDelete {
		n, err := execCount(ctx, tx, `UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IS NOT NULL
			AND id IN (SELECT id FROM j.sessionctl_orphaned)`)
		if err != nil {
			return 0, fmt.Errorf("orphan children: %w", err)
		}
		total += n
		for i := len(tables) - 1; i >= 0; i-- { // the dependents first, the sessions last
			t := tables[i]
			n, err := execCount(ctx, tx, "DELETE FROM main."+quoteIdent(t.name)+" AS c WHERE EXISTS (SELECT 1 FROM j."+
				quoteIdent(t.name)+" AS o WHERE "+t.keyMatch()+")")
			if err != nil {
				return 0, fmt.Errorf("delete %s rows: %w", t.name, err)
			}
			total += n
		}
		return total, nil
	}
	for _, t := range tables {
		cols := quoteAll(t.cols)
		src := make([]string, len(cols))
		for i, c := range cols {
			src[i] = "o." + c
		}
		if t.rowid {
			cols, src = append(cols, "rowid"), append(src, "o."+rowStoreRowid)
		}
		n, err := execCount(ctx, tx, "INSERT INTO main."+quoteIdent(t.name)+" ("+strings.Join(cols, ", ")+") SELECT "+
			strings.Join(src, ", ")+" FROM j."+quoteIdent(t.name)+" AS o WHERE NOT EXISTS (SELECT 1 FROM main."+
			quoteIdent(t.name)+" AS c WHERE "+t.keyMatch()+")")
		if err != nil {
			return 0, fmt.Errorf("restore %s rows: %w", t.name, err)
		}
		total += n
	}
	n, err := execCount(ctx, tx, `UPDATE sessions SET parent_session_id = (SELECT o.parent_session_id FROM j.sessionctl_orphaned AS o WHERE o.id = sessions.id)
		WHERE parent_session_id IS NULL AND id IN (SELECT id FROM j.sessionctl_orphaned)`)
	if err != nil {
		return 0, fmt.Errorf("restore parents: %w", err)
	}
	return total + n, nil
}

// RowStoreHolds reports whether the row store at path (opened read-only) holds rows of the
// state.db table: an undo that writes gateway_routing rows is a routing-index write.
func RowStoreHolds(ctx context.Context, path, table string) (bool, error) {
	sqldb, err := sql.Open("sqlite", uriFor(path, "ro"))
	if err != nil {
		return false, fmt.Errorf("open row store: %w", err)
	}
	defer sqldb.Close()
	var listed bool
	if err := sqldb.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM sessionctl_tables WHERE name = ?)", table).Scan(&listed); err != nil {
		return false, fmt.Errorf("read row store %s: %w", path, err)
	}
	if !listed {
		return false, nil
	}
	var holds bool
	if err := sqldb.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+quoteIdent(table)+")").Scan(&holds); err != nil {
		return false, fmt.Errorf("read row store %s: %w", path, err)
	}
	return holds, nil
}

// ErrRowStoreDamaged says a row store cannot be read whole: not a SQLite database, a page
// that fails SQLite's quick_check, or a table its list names missing.
var ErrRowStoreDamaged = errors.New("the row store is damaged")

// CheckRowStore reads the row store at path (read-only) as an undo will: SQLite's quick_check
// over every page, then the tables sessionctl_tables lists, and sessionctl_orphaned. Undo
// runs it before it changes anything, so that a damaged store refuses the undo whole instead
// of failing inside its transaction.
func CheckRowStore(ctx context.Context, path string) error {
	sqldb, err := sql.Open("sqlite", uriFor(path, "ro"))
	if err != nil {
		return fmt.Errorf("open row store %s: %w", path, err)
	}
	defer sqldb.Close()
	damaged := func(err error) error { return fmt.Errorf("%w: %s: %w", ErrRowStoreDamaged, path, err) }
	problems, err := queryStrings(ctx, sqldb, "PRAGMA quick_check")
	if err != nil {
		return damaged(err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return damaged(fmt.Errorf("quick_check: %s", strings.Join(problems[:min(3, len(problems))], "; ")))
	}
	tables, err := queryStrings(ctx, sqldb, "SELECT name FROM sessionctl_tables ORDER BY seq")
	if err != nil {
		return damaged(err)
	}
	for _, t := range append(tables, "sessionctl_orphaned") {
		var n int64
		if err := sqldb.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(t)).Scan(&n); err != nil {
			return damaged(err)
		}
	}
	return nil
}
