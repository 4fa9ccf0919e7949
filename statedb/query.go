package statedb

import (
	"context"
	"database/sql"
	"strings"
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
