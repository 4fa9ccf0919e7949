package statedb

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// querier is satisfied by *sql.DB, *sql.Conn and *sql.Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// maxInList bounds the number of ids bound in one IN (…) list, like the runtime's chunks.
const maxInList = 900

// queryStrings runs a one-column query and returns every value.
func queryStrings(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// placeholders returns "?, ?, …" with n marks.
func placeholders(n int) string {
	if n == 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// stringArgs converts ids to query arguments.
func stringArgs(ids []string) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

// chunks splits ids into slices of at most maxInList.
func chunks(ids []string) [][]string {
	var out [][]string
	for len(ids) > maxInList {
		out = append(out, ids[:maxInList])
		ids = ids[maxInList:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}

// likeEscape escapes s for LIKE … ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// maxPrepared bounds the statements a DB keeps prepared.
const maxPrepared = 64

// statements are the prepared statements of the queries a read runs once per routing entry
// (the recovery lookups): preparing them each time was half their cost on a 20,000-entry
// home (issue 30). They are closed with the DB.
type statements struct {
	mu    sync.Mutex
	bySQL map[string]*sql.Stmt
}

// queryRow runs query, prepared once and kept (up to maxPrepared statements; past that it is
// prepared for this run only).
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st := &db.stmts
	st.mu.Lock()
	stmt, ok := st.bySQL[query]
	if !ok && len(st.bySQL) < maxPrepared {
		var err error
		if stmt, err = db.sql.PrepareContext(ctx, query); err == nil {
			if st.bySQL == nil {
				st.bySQL = map[string]*sql.Stmt{}
			}
			st.bySQL[query], ok = stmt, true
		}
	}
	st.mu.Unlock()
	if !ok {
		return db.sql.QueryRowContext(ctx, query, args...) // the error, if any, comes with the row
	}
	return stmt.QueryRowContext(ctx, args...)
}

// close closes the statements kept.
func (st *statements) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, stmt := range st.bySQL {
		_ = stmt.Close()
	}
	st.bySQL = nil
}
