package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// RowImage is the full content of one row: every column, typed. Key holds the primary-key
// columns (or "rowid" for a table without a declared primary key).
type RowImage struct {
	Table   string           `json:"table"`
	Key     map[string]Value `json:"key"`
	Columns []string         `json:"columns"`
	Values  []Value          `json:"values"`
}

// Get returns the value of column col and whether the image has it.
func (r *RowImage) Get(col string) (Value, bool) {
	for i, c := range r.Columns {
		if c == col {
			return r.Values[i], true
		}
	}
	return Value{}, false
}

// RowChange records one row before and after a write. Before is nil for an inserted row,
// After nil for a deleted one.
type RowChange struct {
	Table  string           `json:"table"`
	Key    map[string]Value `json:"key"`
	Before *RowImage        `json:"before"`
	After  *RowImage        `json:"after"`
}

// Undo returns the restore that reverts c: the row must still equal After and becomes Before.
func (c RowChange) Undo() RowRestore {
	return RowRestore{Table: c.Table, Key: c.Key, Expected: c.After, Desired: c.Before}
}

// tableInfo describes how to read full row images of one table.
type tableInfo struct {
	name  string
	cols  []string
	pk    []string // primary-key columns in key order; ["rowid"] when none is declared
	rowid bool     // the key is the implicit rowid, selected after the columns
}

func loadTableInfo(ctx context.Context, q querier, table string) (tableInfo, error) {
	rows, err := q.QueryContext(ctx, "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		return tableInfo{}, err
	}
	defer rows.Close()
	ti := tableInfo{name: table}
	pkPos := map[string]int{}
	for rows.Next() {
		var name string
		var pk int
		if err := rows.Scan(&name, &pk); err != nil {
			return ti, err
		}
		ti.cols = append(ti.cols, name)
		if pk > 0 {
			ti.pk = append(ti.pk, name)
			pkPos[name] = pk
		}
	}
	if err := rows.Err(); err != nil {
		return ti, err
	}
	if len(ti.cols) == 0 {
		return ti, fmt.Errorf("table %q does not exist: %w", table, ErrUnsupportedSchema)
	}
	sort.SliceStable(ti.pk, func(i, j int) bool { return pkPos[ti.pk[i]] < pkPos[ti.pk[j]] })
	if len(ti.pk) == 0 {
		ti.pk, ti.rowid = []string{"rowid"}, true
	}
	return ti, nil
}

// selectList selects every column as an expression (+col), so the driver reports the stored
// class without declared-type conversions, then the rowid when it is the key.
func (ti tableInfo) selectList() string {
	parts := make([]string, 0, len(ti.cols)+1)
	for _, c := range ti.cols {
		parts = append(parts, "+"+quoteIdent(c))
	}
	if ti.rowid {
		parts = append(parts, "rowid")
	}
	return strings.Join(parts, ", ")
}

// keyWhere returns "k1 = ? AND k2 = ?" for the key columns and the matching arguments.
func (ti tableInfo) keyWhere(key map[string]Value) (string, []any, error) {
	conds := make([]string, 0, len(ti.pk))
	args := make([]any, 0, len(ti.pk))
	for _, k := range ti.pk {
		v, ok := key[k]
		if !ok {
			return "", nil, fmt.Errorf("key of %s lacks column %q", ti.name, k)
		}
		conds, args = append(conds, quoteIdent(k)+" = ?"), append(args, v.arg())
	}
	if len(key) != len(ti.pk) {
		return "", nil, fmt.Errorf("key of %s has %d columns, want %d", ti.name, len(key), len(ti.pk))
	}
	return strings.Join(conds, " AND "), args, nil
}

// scanImage reads one row selected with selectList.
func (ti tableInfo) scanImage(rows *sql.Rows) (RowImage, error) {
	n := len(ti.cols)
	raw := make([]any, n, n+1)
	if ti.rowid {
		raw = raw[:n+1]
	}
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return RowImage{}, err
	}
	img := RowImage{Table: ti.name, Key: map[string]Value{}, Columns: ti.cols, Values: make([]Value, n)}
	for i, r := range raw {
		v, err := valueFromDriver(r)
		if err != nil {
			return RowImage{}, fmt.Errorf("%s: %w", ti.name, err)
		}
		if i < n {
			img.Values[i] = v
		}
		if i == n {
			img.Key["rowid"] = v
		}
	}
	for _, k := range ti.pk {
		if v, ok := img.Get(k); ok {
			img.Key[k] = v
		}
	}
	return img, nil
}

// readImagesWhere returns the full images of the rows of ti matching where.
func readImagesWhere(ctx context.Context, q querier, ti tableInfo, where string, args ...any) ([]RowImage, error) {
	query := "SELECT " + ti.selectList() + " FROM " + quoteIdent(ti.name) + " WHERE " + where
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RowImage
	for rows.Next() {
		img, err := ti.scanImage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	return out, rows.Err()
}

// readImage returns the full image of the row of table with key, or nil when absent.
func readImage(ctx context.Context, q querier, table string, key map[string]Value) (*RowImage, error) {
	ti, err := loadTableInfo(ctx, q, table)
	if err != nil {
		return nil, err
	}
	return readImageTI(ctx, q, ti, key)
}

func readImageTI(ctx context.Context, q querier, ti tableInfo, key map[string]Value) (*RowImage, error) {
	where, args, err := ti.keyWhere(key)
	if err != nil {
		return nil, err
	}
	imgs, err := readImagesWhere(ctx, q, ti, where, args...)
	if err != nil {
		return nil, err
	}
	switch len(imgs) {
	case 0:
		return nil, nil
	case 1:
		return &imgs[0], nil
	default:
		return nil, errors.New("key of " + ti.name + " matches several rows")
	}
}
