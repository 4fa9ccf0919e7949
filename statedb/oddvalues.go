package statedb

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// OddRow is one value of a class the runtime never writes in its column (OddValue), and the
// row holding it: a sessions row by id, a compression_locks row by session_id, a row of the
// other tables r0817 reads (typedTables) by its first key column.
type OddRow struct {
	Table string // "sessions", "compression_locks", or one of typedTables
	ID    string // the row's first key column as text (sessions.id, …)
	// Where names the row exactly, as SQL writes it (id = '…', or the whole primary key).
	Where string
	OddValue
}

// typedTables are the tables of r0817's state.db (schema v26) sessionctl reads, each with
// its primary key, whose every column (or, where only names them, those columns) OddRows
// checks against its declared type. A turn lease's expires_at of TEXT, a last_activity_at of
// TEXT, a BLOB hash, a message's TEXT timestamp: each is a finding about its row, read and
// compared as the runtime's SQL compares it (issue 29 item 4).
var typedTables = []struct {
	table string
	key   []string
	only  []string
}{
	{"sessions", []string{"id"}, nil},
	{"compression_locks", []string{"session_id"}, nil},
	{"session_turn_leases", []string{"conversation_id"}, nil},
	{"system_prompts", []string{"hash"}, nil},
	{"session_model_usage", []string{"session_id", "model", "billing_provider", "billing_base_url", "billing_mode", "task"}, nil},
	// messages: the columns sessionctl's queries compare and order by (counts, ghosts,
	// orphans, activity), both in an index that covers the check; the rest (role included,
	// which only the backfill count compares, in SQL) are measured (length) or compared as
	// SQLite compares them, as the runtime does.
	{"messages", []string{"id"}, MessageColumnsRead},
	{"state_meta", []string{"key"}, nil},
	{"gateway_routing", []string{"scope", "session_key"}, nil},
}

// MessageColumnsRead are the columns of messages whose values sessionctl's queries compare.
var MessageColumnsRead = []string{"session_id", "timestamp"}

// typedClasses are the storage classes a column of each declared type holds when the
// runtime writes it (NULL aside): an INTEGER column integers, a REAL column numbers, a TEXT
// column text.
var typedClasses = map[string][]string{
	"INTEGER": {TypeInteger},
	"REAL":    {TypeInteger, TypeReal},
	"TEXT":    {TypeText},
}

// OddRows lists every odd value of sessions (started_at, ended_at, api_call_count: see
// Session.OddValues) and of compression_locks (acquired_at, expires_at not a number), by
// table, id and column. The runtime's SQL compares such values as SQLite does (Compare):
// TEXT after every number.
func (db *DB) OddRows(ctx context.Context) ([]OddRow, error) {
	col := func(name string) string {
		if db.schema.SessionColumns[name] {
			return "+" + name
		}
		return "NULL"
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT id, +started_at, `+col("ended_at")+`, `+col("api_call_count")+`
		FROM sessions WHERE typeof(started_at) NOT IN ('integer', 'real')
		OR typeof(`+col("ended_at")+`) NOT IN ('integer', 'real', 'null')
		OR typeof(`+col("api_call_count")+`) NOT IN ('integer', 'null') ORDER BY id`)
	if err != nil {
		return nil, classify("read odd values", err, false)
	}
	defer rows.Close()
	var out []OddRow
	for rows.Next() {
		var s Session
		var started, ended, calls any
		if err := rows.Scan(&s.ID, &started, &ended, &calls); err != nil {
			return nil, classify("read odd values", err, false)
		}
		for _, v := range []struct {
			raw any
			dst *Value
		}{{started, &s.Started}, {ended, &s.Ended}, {calls, &s.APICalls}} {
			if *v.dst, err = valueFromDriver(v.raw); err != nil {
				return nil, fmt.Errorf("session %q: %w", s.ID, err)
			}
		}
		for _, odd := range s.OddValues() {
			out = append(out, OddRow{"sessions", s.ID, "id = " + keyLiteral(TextValue(s.ID)), odd})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read odd values", err, false)
	}
	locks, err := db.CompressionLocks(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range locks {
		for _, c := range []string{"acquired_at", "expires_at"} {
			if v, ok := l.OddValues[c]; ok {
				out = append(out, OddRow{"compression_locks", l.SessionID, "session_id = " + keyLiteral(TextValue(l.SessionID)), OddValue{c, v}})
			}
		}
	}
	if db.schema.Version < typedSchema {
		return out, nil
	}
	for _, t := range typedTables {
		more, err := db.typedOddRows(ctx, t.table, t.key, t.only)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// typedSchema is the first schema version whose tables OddRows checks column by column
// (typedTables): r0817's. The earlier generations keep the checks they had.
const typedSchema = 26

// typedOddRows lists the values of table whose storage class its column's declared type does
// not take (typedClasses), by key and column; the columns OddRows checks by their own rules
// (sessions.started_at, ended_at, api_call_count, compression_locks.acquired_at,
// expires_at) are left to them; only, when not nil, limits the columns checked. A table that
// is not there has none.
func (db *DB) typedOddRows(ctx context.Context, table string, key, only []string) ([]OddRow, error) {
	if !db.schema.Tables[table] {
		return nil, nil
	}
	cols, err := declaredTypes(ctx, db.sql, table)
	if err != nil {
		return nil, classify("read odd values of "+table, err, false)
	}
	var names, conds []string
	for _, c := range cols {
		classes, ok := typedClasses[c.typ]
		if !ok || ownRule[table+"."+c.name] || only != nil && !slices.Contains(only, c.name) {
			continue
		}
		names = append(names, c.name)
		conds = append(conds, "typeof("+quoteIdent(c.name)+") NOT IN ('null', '"+strings.Join(classes, "', '")+"')")
	}
	if len(conds) == 0 {
		return nil, nil
	}
	sel := make([]string, 0, len(key)+len(names))
	for _, k := range key {
		sel = append(sel, "+"+quoteIdent(k))
	}
	for _, n := range names {
		sel = append(sel, "+"+quoteIdent(n))
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+quoteIdent(table)+
		" WHERE "+strings.Join(conds, " OR ")+" ORDER BY +rowid") // +: a covering index may scan
	if err != nil {
		return nil, classify("read odd values of "+table, err, false)
	}
	defer rows.Close()
	var out []OddRow
	for rows.Next() {
		raw := make([]any, len(sel))
		ptrs := make([]any, len(sel))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, classify("read odd values of "+table, err, false)
		}
		vals := make([]Value, len(raw))
		for i, r := range raw {
			if vals[i], err = valueFromDriver(r); err != nil {
				return nil, fmt.Errorf("odd values of %s: %w", table, err)
			}
		}
		where := make([]string, len(key))
		for i, k := range key {
			where[i] = k + " = " + keyLiteral(vals[i])
		}
		id := vals[0].Text
		if vals[0].Type != TypeText {
			id = vals[0].Literal()
		}
		for i, n := range names {
			v := vals[len(key)+i]
			if !slices.Contains(typedClasses[typeOf(cols, n)], v.Type) && !v.IsNull() {
				out = append(out, OddRow{table, id, strings.Join(where, " AND "), OddValue{n, v}})
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read odd values of "+table, err, false)
	}
	return out, nil
}

// ownRule are the columns OddRows checks by their own rules, on every generation.
var ownRule = map[string]bool{"sessions.started_at": true, "sessions.ended_at": true, "sessions.api_call_count": true,
	"compression_locks.acquired_at": true, "compression_locks.expires_at": true}

// declaredColumn is a column and its declared type, upper-cased.
type declaredColumn struct{ name, typ string }

// declaredTypes reads the columns of table with their declared types.
func declaredTypes(ctx context.Context, q querier, table string) ([]declaredColumn, error) {
	rows, err := q.QueryContext(ctx, "SELECT name, upper(type) FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []declaredColumn
	for rows.Next() {
		var c declaredColumn
		if err := rows.Scan(&c.name, &c.typ); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// typeOf is the declared type of column name among cols.
func typeOf(cols []declaredColumn, name string) string {
	for _, c := range cols {
		if c.name == name {
			return c.typ
		}
	}
	return ""
}

// keyLiteral writes a key value as SQL does, in full (Literal cuts long ones): 'text'
// (quotes doubled), X'…' for a BLOB, NULL, a number.
func keyLiteral(v Value) string {
	switch v.Type {
	case TypeText:
		return "'" + strings.ReplaceAll(v.Text, "'", "''") + "'"
	case TypeBlob:
		return fmt.Sprintf("X'%x'", v.Blob)
	}
	return v.Literal()
}
