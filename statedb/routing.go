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

// RoutingRows returns the gateway_routing rows of scope ordered by key; nil when the table
// does not exist (the routing index is then sessions.json).
func (db *DB) RoutingRows(ctx context.Context, scope string) ([]RoutingRow, error) {
	if !db.schema.HasGatewayRouting {
		return nil, nil
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT scope, session_key, entry_json, updated_at
		FROM gateway_routing WHERE scope = ? ORDER BY session_key`, scope)
	if err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	defer rows.Close()
	var out []RoutingRow
	for rows.Next() {
		var r RoutingRow
		if err := rows.Scan(&r.Scope, &r.Key, &r.EntryJSON, &r.UpdatedAt); err != nil {
			return nil, classify("read gateway_routing", err, false)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	return out, nil
}

// RoutingRowIDs returns the rowids of the gateway_routing rows of scope in EachRoutingEntry's
// order (by key, then rowid): a reader that queries state.db between pages of entries
// (EachRoutingEntryOf) keeps its place by them, whatever the keys hold.
func (db *DB) RoutingRowIDs(ctx context.Context, scope string) ([]int64, error) {
	if !db.schema.HasGatewayRouting {
		return nil, nil
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT rowid FROM gateway_routing WHERE scope = ? ORDER BY session_key, rowid`, scope)
	if err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, classify("read gateway_routing", err, false)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, classify("read gateway_routing", err, false)
	}
	return out, nil
}

// EachRoutingEntryOf calls fn as EachRoutingEntry does for the gateway_routing rows of ids
// (rowids, at most maxInList), in the order of ids; a row gone meanwhile is skipped.
func (db *DB) EachRoutingEntryOf(ctx context.Context, ids []int64, fn func(key string, entryJSON []byte) error) error {
	if len(ids) > maxInList {
		return fmt.Errorf("read gateway_routing: %d rowids, at most %d", len(ids), maxInList)
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT rowid, session_key, entry_json FROM gateway_routing
		WHERE rowid IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return classify("read gateway_routing", err, false)
	}
	type entry struct {
		key  string
		json []byte
	}
	byID := make(map[int64]entry, len(ids))
	for rows.Next() {
		var id int64
		var e entry
		if err := rows.Scan(&id, &e.key, &e.json); err != nil {
			rows.Close()
			return classify("read gateway_routing", err, false)
		}
		byID[id] = e
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return classify("read gateway_routing", err, false)
	}
	for _, id := range ids {
		if e, ok := byID[id]; ok {
			if err := fn(e.key, e.json); err != nil {
				return err
			}
		}
	}
	return nil
}

// CountRoutingKeys returns how many of keys (at most maxInList, each once) have a
// gateway_routing row of scope: fewer than len(keys) means some key has none.
func (db *DB) CountRoutingKeys(ctx context.Context, scope string, keys []string) (int, error) {
	if !db.schema.HasGatewayRouting || len(keys) == 0 {
		return 0, nil
	}
	if len(keys) > maxInList {
		return 0, fmt.Errorf("count gateway_routing keys: %d keys, at most %d", len(keys), maxInList)
	}
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT count(DISTINCT session_key) FROM gateway_routing WHERE scope = ? AND session_key IN (`+
		placeholders(len(keys))+`)`, append([]any{scope}, stringArgs(keys)...)...).Scan(&n)
	if err != nil {
		return 0, classify("read gateway_routing", err, false)
	}
	return n, nil
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
		return UpdateRoutingTx(ctx, tx, scope, entries, now)
	})
	return err
}

// UpdateRoutingTx updates, inside the caller's transaction, only the given keys of scope:
// entry_json and updated_at (= now) of an existing row, or a new row for a missing key. Other
// rows are left alone (the runtime rewrites every row on each save; its readers ignore
// updated_at). Use it from WithImmediateTx when another store (sessions.json) must be written
// before the commit, so that a failure there rolls the rows back.
func UpdateRoutingTx(ctx context.Context, tx *sql.Tx, scope string, entries map[string]string, now float64) error {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := upsertRouting(ctx, tx, scope, k, entries[k], now); err != nil {
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
