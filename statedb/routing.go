package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
)

// TableGatewayRouting is the routing table of v19+ (db-primary homes).
const TableGatewayRouting = "gateway_routing"

// RoutingRow is one gateway_routing row (v19+).
type RoutingRow struct {
	Scope     string
	Key       string // session_key
	EntryJSON string
	UpdatedAt float64
}

// RoutingCursor is where a page of gateway_routing rows ended: the last row's key as stored (a
// BLOB key stays a BLOB, so the next page compares as ORDER BY does).
type RoutingCursor struct {
	key any
}

// RoutingPage calls fn as EachRoutingEntry does, in its order, for at most limit gateway_routing
// rows of scope after after (nil: from the first), and returns where the page ended (nil when
// it held no row). A reader that queries state.db between pages keeps its place by key, so a
// row the gateway rewrites meanwhile is read once, as it is then. The keys of scope must be
// unique (RoutingKeysUnique): a key twice across a page's end would lose a row.
func (db *DB) RoutingPage(ctx context.Context, scope string, after *RoutingCursor, limit int, fn func(key string, entryJSON []byte) error) (*RoutingCursor, error) {
	if !db.schema.HasGatewayRouting {
		return nil, nil
	}
	// session_key twice: once read as EachRoutingEntry reads it, once as stored, for the cursor
	query, args := `SELECT session_key, entry_json, session_key FROM gateway_routing WHERE scope = ?`, []any{scope}
	if after != nil {
		query, args = query+` AND session_key > ?`, append(args, after.key)
	}
	rows, err := db.sql.QueryContext(ctx, query+` ORDER BY session_key LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	defer rows.Close()
	var last *RoutingCursor
	for rows.Next() {
		var key string
		var entry []byte
		var cur RoutingCursor
		if err := rows.Scan(&key, &entry, &cur.key); err != nil {
			return nil, classify("read gateway_routing", err, false)
		}
		if err := fn(key, entry); err != nil {
			return nil, err
		}
		last = &cur
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	return last, nil
}

// RoutingKeysUnique reports whether no key of scope has two gateway_routing rows (true under
// the runtime's primary key, scope and session_key), as RoutingPage needs.
func (db *DB) RoutingKeysUnique(ctx context.Context, scope string) (bool, error) {
	var unique bool
	err := db.sql.QueryRowContext(ctx, `SELECT count(*) = count(DISTINCT session_key) FROM gateway_routing WHERE scope = ?`, scope).Scan(&unique)
	if err != nil {
		return false, classify("read gateway_routing", err, false)
	}
	return unique, nil
}

// EachRoutingEntry calls fn for every gateway_routing row of scope, ordered by key, with its
// session_key and entry_json; fn owns entryJSON. Rows are streamed, not collected, so memory
// stays flat however many rows there are. fn runs while the query is open and must not use
// db; an error from fn stops the walk and is returned unchanged. Without the table (before
// v19) fn is never called.
func (db *DB) EachRoutingEntry(ctx context.Context, scope string, fn func(key string, entryJSON []byte) error) error {
	if !db.schema.HasGatewayRouting {
		return nil
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT session_key, entry_json
		FROM gateway_routing WHERE scope = ? ORDER BY session_key`, scope)
	if err != nil {
		return classify("read gateway_routing", err, false)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var entry []byte
		if err := rows.Scan(&key, &entry); err != nil {
			return classify("read gateway_routing", err, false)
		}
		if err := fn(key, entry); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return classify("read gateway_routing", err, false)
	}
	return nil
}

// RoutingScopes returns the number of gateway_routing rows per scope; nil when the table does
// not exist.
func (db *DB) RoutingScopes(ctx context.Context) (map[string]int, error) {
	if !db.schema.HasGatewayRouting {
		return nil, nil
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT scope, COUNT(*) FROM gateway_routing GROUP BY scope")
	if err != nil {
		return nil, classify("count gateway_routing scopes", err, false)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var scope string
		var n int
		if err := rows.Scan(&scope, &n); err != nil {
			return nil, classify("count gateway_routing scopes", err, false)
		}
		out[scope] = n
	}
	if err := rows.Err(); err != nil {
		return nil, classify("count gateway_routing scopes", err, false)
	}
	return out, nil
}

// UpdateRoutingEntries writes entries (session_key → entry_json) of scope in one BEGIN
// IMMEDIATE transaction with the runtime's retries; see UpdateRoutingTx.
func (db *DB) UpdateRoutingEntries(ctx context.Context, scope string, entries map[string]string, now float64) error {
	const op = "update gateway_routing"
	if err := db.requireWrite(op); err != nil {
		return err
	}
	if err := db.requireTable(op, "gateway_routing"); err != nil {
		return err
	}
	_, err := db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		return UpdateRoutingTx(ctx, tx, scope, entries, nil, now)
	})
	return err
}

// RoutingTimes returns the updated_at column of the gateway_routing rows of keys in scope
// (a key without a row, or with a NULL time, is left out).
func (db *DB) RoutingTimes(ctx context.Context, scope string, keys []string) (map[string]float64, error) {
	out := make(map[string]float64, len(keys))
	if !db.schema.HasGatewayRouting {
		return out, nil
	}
	cols, err := routingColumn[sql.NullFloat64](ctx, db.sql, scope, "updated_at", keys)
	for k, t := range cols {
		if t.Valid {
			out[k] = t.Float64
		}
	}
	return out, err
}

// routingLookups is how many keys routingColumn looks up one by one (about 10 µs each); past
// it one scan of the scope's rows (about 1 µs a row) costs less.
const routingLookups = 256

// routingColumn reads column col of the gateway_routing rows of keys in scope through q (a
// connection, or a write transaction), each looked up by key, or for many keys in one scan of
// the scope. A key without a row is left out.
func routingColumn[T sql.NullFloat64 | sql.NullString](ctx context.Context, q querier, scope, col string, keys []string) (map[string]T, error) {
	out := make(map[string]T, len(keys))
	if len(keys) > routingLookups {
		want := make(map[string]bool, len(keys))
		for _, k := range keys {
			want[k] = true
		}
		rows, err := q.QueryContext(ctx, `SELECT session_key, `+col+` FROM gateway_routing WHERE scope = ?`, scope)
		if err != nil {
			return nil, classify("read gateway_routing", err, false)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var v T
			if err := rows.Scan(&k, &v); err != nil {
				return nil, classify("read gateway_routing", err, false)
			}
			if want[k] {
				out[k] = v
			}
		}
		if err := rows.Err(); err != nil {
			return nil, classify("read gateway_routing", err, false)
		}
		return out, nil
	}
	for _, k := range keys {
		var v T
		err := q.QueryRowContext(ctx, `SELECT `+col+` FROM gateway_routing WHERE scope = ? AND session_key = ?`, scope, k).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, classify("read gateway_routing", err, false)
		}
		out[k] = v
	}
	return out, nil
}

// UpdateRoutingTx updates, inside the caller's transaction, only the given keys of scope:
// entry_json and updated_at (times[key] where given, else now) of an existing row, or a new
// row for a missing key. Other
// rows are left alone (the runtime rewrites every row on each save; its readers ignore
// updated_at). Use it from WithImmediateTx when another store (sessions.json) must be written
// before the commit, so that a failure there rolls the rows back.
func UpdateRoutingTx(ctx context.Context, tx *sql.Tx, scope string, entries map[string]string, times map[string]float64, now float64) error {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		at, ok := times[k]
		if !ok {
			at = now
		}
		if err := upsertRouting(ctx, tx, scope, k, entries[k], at); err != nil {
			return err
		}
	}
	return nil
}

func upsertRouting(ctx context.Context, tx *sql.Tx, scope, key, entry string, now float64) error {
	res, err := tx.ExecContext(ctx, `UPDATE gateway_routing SET entry_json = ?1, updated_at = ?2
		WHERE scope = ?3 AND session_key = ?4`, entry, now, scope, key)
	if err != nil {
		return fmt.Errorf("update gateway_routing %q: %w", key, err)
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO gateway_routing (entry_json, updated_at, scope, session_key)
		VALUES (?1, ?2, ?3, ?4)`, entry, now, scope, key); err != nil {
		return fmt.Errorf("insert gateway_routing %q: %w", key, err)
	}
	return nil
}

// CheckRoutingTx verifies, inside the caller's write transaction, that each key of scope in
// expected still holds the entry_json read before it (nil: no row): a writer that changed the
// row in between (a gateway sessionctl cannot see) is not overwritten, and the journal's
// before-image stays true. A difference is ErrConflict.
func CheckRoutingTx(ctx context.Context, tx *sql.Tx, scope string, expected map[string]*string) error {
	keys := make([]string, 0, len(expected))
	for k := range expected {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows, err := routingColumn[sql.NullString](ctx, tx, scope, "entry_json", keys)
	if err != nil {
		return err
	}
	for _, key := range keys {
		got, there := rows[key]
		switch want := expected[key]; {
		case !there && want != nil:
			return fmt.Errorf("gateway_routing %q is gone since it was read: %w", key, ErrConflict)
		case there && (want == nil || !got.Valid || got.String != *want):
			return fmt.Errorf("gateway_routing %q changed since it was read (another writer: a gateway sessionctl cannot see?): %w", key, ErrConflict)
		}
	}
	return nil
}

// DeleteRoutingTx deletes, inside the caller's transaction, the rows of keys in scope (the
// runtime's save leaves no row for an entry its store dropped). A key without a row is left
// alone.
func DeleteRoutingTx(ctx context.Context, tx *sql.Tx, scope string, keys []string) error {
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `DELETE FROM gateway_routing WHERE scope = ? AND session_key = ?`, scope, k); err != nil {
			return fmt.Errorf("delete gateway_routing %q: %w", k, err)
		}
	}
	return nil
}

// RelocationChanges reads the gateway_routing rows of scope from and returns, for each, the
// changes that move it to scope to: the row deleted under from and inserted under to with
// every other column as it is (relocate; RestoreRows applies them, expecting each before
// image, and refuses with ErrConflict a key that to holds already).
func (db *DB) RelocationChanges(ctx context.Context, from, to string) ([]RowChange, error) {
	const table = TableGatewayRouting
	ti, err := loadTableInfo(ctx, db.sql, table)
	if err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	imgs, err := readImagesWhere(ctx, db.sql, ti, "scope = ? ORDER BY session_key", from)
	if err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	out := make([]RowChange, 0, 2*len(imgs))
	for i := range imgs {
		before := &imgs[i]
		after := &RowImage{Table: table, Key: map[string]Value{}, Columns: before.Columns, Values: append([]Value(nil), before.Values...)}
		for c, v := range before.Key {
			after.Key[c] = v
		}
		after.Key["scope"] = TextValue(to)
		for j, c := range after.Columns {
			if c == "scope" {
				after.Values[j] = TextValue(to)
			}
		}
		out = append(out, RowChange{Table: table, Key: before.Key, Before: before},
			RowChange{Table: table, Key: after.Key, After: after})
	}
	return out, nil
}
