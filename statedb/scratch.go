package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Object is one row of sqlite_master.
type Object struct {
	Type  string // table, index, view or trigger
	Name  string
	Table string // tbl_name: the table an index or trigger belongs to
	// SQL is the stored CREATE statement; "" for the objects SQLite creates without one
	// (automatic indexes).
	SQL string
}

// Virtual reports whether o is a virtual table (CREATE VIRTUAL TABLE).
func (o Object) Virtual() bool {
	return o.Type == "table" && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(o.SQL)), "CREATE VIRTUAL TABLE")
}

// Column is one row of PRAGMA table_info.
type Column struct {
	Name    string
	Type    string
	NotNull bool
	// Default is dflt_value, the default's SQL text ("0", "''"); nil without a default.
	Default *string
	PK      int // position in the primary key, 0 when not part of it
}

// fts5Shadows are the suffixes of the tables an FTS5 virtual table creates for itself.
var fts5Shadows = []string{"_data", "_idx", "_content", "_docsize", "_config"}

// Internal reports whether o is created by SQLite on its own when the other objects are
// created: sqlite_* tables, automatic indexes and the shadow tables of the virtual tables
// among objs.
func Internal(o Object, objs []Object) bool {
	if strings.HasPrefix(o.Name, "sqlite_") || o.SQL == "" {
		return true
	}
	if o.Type != "table" {
		return false
	}
	for _, v := range objs {
		if !v.Virtual() {
			continue
		}
		for _, suffix := range fts5Shadows {
			if o.Name == v.Name+suffix {
				return true
			}
		}
	}
	return false
}

// readObjects returns sqlite_master in rowid (creation) order.
func readObjects(ctx context.Context, q querier) ([]Object, error) {
	rows, err := q.QueryContext(ctx, `SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Object
	for rows.Next() {
		var o Object
		var text sql.NullString
		if err := rows.Scan(&o.Type, &o.Name, &o.Table, &text); err != nil {
			return nil, err
		}
		o.SQL = text.String
		out = append(out, o)
	}
	return out, rows.Err()
}

// readColumns returns PRAGMA table_info(table) in column order (none for a missing table).
func readColumns(ctx context.Context, q querier, table string) ([]Column, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Column
	for rows.Next() {
		var c Column
		var dflt sql.NullString
		if err := rows.Scan(&c.Name, &c.Type, &c.NotNull, &dflt, &c.PK); err != nil {
			return nil, err
		}
		if dflt.Valid {
			c.Default = &dflt.String
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// IndexInfo describes an index: its key columns ("" for an expression) and whether it is
// unique or partial (has a WHERE clause).
type IndexInfo struct {
	Columns []string
	Unique  bool
	Partial bool
}

// readIndex returns the description of index name on table.
func readIndex(ctx context.Context, q querier, table, name string) (IndexInfo, error) {
	var ix IndexInfo
	err := q.QueryRowContext(ctx, `SELECT "unique", partial FROM pragma_index_list(?) WHERE name = ?`, table, name).
		Scan(&ix.Unique, &ix.Partial)
	if err != nil {
		return ix, err
	}
	rows, err := q.QueryContext(ctx, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, name)
	if err != nil {
		return ix, err
	}
	defer rows.Close()
	for rows.Next() {
		var col sql.NullString
		if err := rows.Scan(&col); err != nil {
			return ix, err
		}
		ix.Columns = append(ix.Columns, col.String)
	}
	return ix, rows.Err()
}

// Objects returns the file's sqlite_master rows in creation order.
func (db *DB) Objects(ctx context.Context) ([]Object, error) {
	objs, err := readObjects(ctx, db.sql)
	if err != nil {
		return nil, classify("read sqlite_master", err, false)
	}
	return objs, nil
}

// Columns returns the columns of table (none when it does not exist).
func (db *DB) Columns(ctx context.Context, table string) ([]Column, error) {
	cols, err := readColumns(ctx, db.sql, table)
	if err != nil {
		return nil, classify(fmt.Sprintf("read %s columns", table), err, false)
	}
	return cols, nil
}

// CountRows counts the rows of table (a full scan of its smallest index).
func (db *DB) CountRows(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quoteIdent(table)).Scan(&n); err != nil {
		return 0, classify(fmt.Sprintf("count %s", table), err, false)
	}
	return n, nil
}

// ErrReplay reports a schema that could not be recreated in a scratch database.
var ErrReplay = errors.New("schema cannot be replayed")

// Scratch is a private in-memory database that holds a schema and no rows: sessionctl
// recreates a file's schema in one and runs a runtime's DDL on it to see what that runtime's
// open would change, without touching the file. It holds one connection.
type Scratch struct {
	db   *sql.DB
	conn *sql.Conn
}

// NewScratch opens an empty scratch database.
func NewScratch(ctx context.Context) (*Scratch, error) {
	db, err := sql.Open("sqlite", "file:scratch?mode=memory")
	if err != nil {
		return nil, fmt.Errorf("scratch database: %w", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("scratch database: %w", err)
	}
	return &Scratch{db: db, conn: conn}, nil
}

// Close releases the scratch database.
func (s *Scratch) Close() error {
	return errors.Join(s.conn.Close(), s.db.Close())
}

// Exec runs one statement or a script of statements.
func (s *Scratch) Exec(ctx context.Context, script string) error {
	_, err := s.conn.ExecContext(ctx, script)
	return err
}

// Objects returns the scratch database's sqlite_master rows in creation order.
func (s *Scratch) Objects(ctx context.Context) ([]Object, error) {
	return readObjects(ctx, s.conn)
}

// Columns returns the columns of table (none when it does not exist).
func (s *Scratch) Columns(ctx context.Context, table string) ([]Column, error) {
	return readColumns(ctx, s.conn, table)
}

// Index describes index name on table.
func (s *Scratch) Index(ctx context.Context, table, name string) (IndexInfo, error) {
	return readIndex(ctx, s.conn, table, name)
}

// tokenizeClause matches an FTS5 table's tokenize option; group 1 is its first word (the
// tokenizer's name).
var tokenizeClause = regexp.MustCompile(`(?i)tokenize\s*=\s*['"]?\s*([A-Za-z0-9_]+)[^,)]*`)

// builtinTokenizers are the FTS5 tokenizers every SQLite has.
var builtinTokenizers = map[string]bool{"unicode61": true, "ascii": true, "porter": true, "trigram": true}

// builtinTokenizer returns stmt with a tokenizer from an extension sessionctl cannot load
// (r0817's optional CJK index, cjk_unicode61) replaced by unicode61: the replay compares
// schemas, which the tokenizer does not change.
func builtinTokenizer(stmt string) string {
	m := tokenizeClause.FindStringSubmatch(stmt)
	if m == nil || builtinTokenizers[strings.ToLower(m[1])] {
		return stmt
	}
	return tokenizeClause.ReplaceAllString(stmt, "tokenize='unicode61'")
}

// Replay creates objs (another database's sqlite_master, in creation order) in the scratch
// database, leaving out what SQLite creates on its own. An object whose statement fails
// (it refers to one created later) is tried again after the others.
func (s *Scratch) Replay(ctx context.Context, objs []Object) error {
	var todo []Object
	for _, o := range objs {
		if !Internal(o, objs) {
			todo = append(todo, o)
		}
	}
	for len(todo) > 0 {
		var failed []Object
		var last error
		for _, o := range todo {
			if err := s.Exec(ctx, builtinTokenizer(o.SQL)); err != nil {
				failed, last = append(failed, o), fmt.Errorf("%s %s: %w", o.Type, o.Name, err)
			}
		}
		if len(failed) == len(todo) {
			return fmt.Errorf("%w: %w", ErrReplay, last)
		}
		todo = failed
	}
	return nil
}
