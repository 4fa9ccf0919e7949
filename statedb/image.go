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

// MarshalJSON encodes c as {"table", "key", "before", "after"}, the images in full.
func (c RowChange) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(make([]byte, 0, 4096))
}

// AppendJSON appends what MarshalJSON returns to dst. It is written directly, without
// reflection or the validation pass encoding/json gives a Marshaler's output: a journal
// holds thousands of images.
func (c RowChange) AppendJSON(dst []byte) ([]byte, error) {
	dst = appendJSONString(append(dst, `{"table":`...), c.Table)
	dst, err := appendKey(append(dst, `,"key":`...), c.Key)
	if err != nil {
		return nil, err
	}
	for _, img := range []struct {
		name string
		img  *RowImage
	}{{"before", c.Before}, {"after", c.After}} {
		dst = append(append(append(dst, `,"`...), img.name...), `":`...)
		if dst, err = img.img.appendJSON(dst); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// MarshalJSON encodes r as {"table", "key", "columns", "values"}.
func (r *RowImage) MarshalJSON() ([]byte, error) {
	return r.appendJSON(nil)
}

// appendJSON appends r's JSON form to dst ("null" for a nil image), written directly. It
// decodes like encoding/json's output for the struct (the bytes differ: <, >, & and U+2028
// are not escaped, and empty columns are [] rather than null).
func (r *RowImage) appendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	dst = appendJSONString(append(dst, `{"table":`...), r.Table)
	dst, err := appendKey(append(dst, `,"key":`...), r.Key)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"columns":[`...)
	for i, c := range r.Columns {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, c)
	}
	dst = append(dst, `],"values":[`...)
	for i, v := range r.Values {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = v.appendJSON(dst); err != nil {
			return nil, err
		}
	}
	return append(dst, "]}"...), nil
}

// appendKey appends a key map as a JSON object with sorted names.
func appendKey(dst []byte, key map[string]Value) ([]byte, error) {
	if key == nil {
		return append(dst, "null"...), nil
	}
	names := make([]string, 0, len(key))
	for k := range key {
		names = append(names, k)
	}
	sort.Strings(names)
	dst = append(dst, '{')
	for i, k := range names {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = key[k].appendJSON(append(appendJSONString(dst, k), ':')); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
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
	return tableInfoIn(ctx, q, "main", table)
}

// tableInfoIn reads the columns and key of a table of the schema (main, or an attached one).
func tableInfoIn(ctx context.Context, q querier, schema, table string) (tableInfo, error) {
	rows, err := q.QueryContext(ctx, "SELECT name, pk FROM pragma_table_info(?, ?) ORDER BY cid", table, schema)
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
			ti.pk, pkPos[name] = append(ti.pk, name), pk
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

// selectList selects every column as an expression (+"table"."col"), so the driver reports
// the stored class without declared-type conversions, then the rowid when it is the key.
// Columns are qualified by the table name, so the list also works in a join.
func (ti tableInfo) selectList() string {
	table := quoteIdent(ti.name)
	parts := make([]string, 0, len(ti.cols)+1)
	for _, c := range ti.cols {
		parts = append(parts, "+"+table+"."+quoteIdent(c))
	}
	if ti.rowid {
		parts = append(parts, table+".rowid")
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

// scanImage reads one row selected with selectList; extra receives the columns selected
// after it, if any.
func (ti tableInfo) scanImage(rows *sql.Rows, extra ...any) (RowImage, error) {
	n := len(ti.cols)
	raw := make([]any, n, n+1)
	if ti.rowid {
		raw = raw[:n+1]
	}
	ptrs := make([]any, len(raw), len(raw)+len(extra))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := rows.Scan(append(ptrs, extra...)...); err != nil {
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

// afterImages pairs each before image with the row's current image (nil when deleted).
func afterImages(ctx context.Context, q querier, ti tableInfo, before []RowImage) ([]RowChange, error) {
	out := make([]RowChange, 0, len(before))
	for i := range before {
		after, err := readImageTI(ctx, q, ti, before[i].Key)
		if err != nil {
			return nil, fmt.Errorf("read %s after write: %w", ti.name, err)
		}
		out = append(out, RowChange{Table: ti.name, Key: before[i].Key, Before: &before[i], After: after})
	}
	return out, nil
}

// readImagesByID returns the images of the rows of ti (keyed by a single text column, such
// as sessions.id) whose key is in ids, by key.
func readImagesByID(ctx context.Context, q querier, ti tableInfo, ids []string) (map[string]*RowImage, error) {
	if len(ti.pk) != 1 || ti.rowid {
		return nil, fmt.Errorf("%s is not keyed by one column", ti.name)
	}
	out := make(map[string]*RowImage, len(ids))
	for _, chunk := range chunks(ids) {
		imgs, err := readImagesWhere(ctx, q, ti, quoteIdent(ti.name)+"."+quoteIdent(ti.pk[0])+
			" IN ("+placeholders(len(chunk))+")", stringArgs(chunk)...)
		if err != nil {
			return nil, err
		}
		for i := range imgs {
			out[imgs[i].Key[ti.pk[0]].Text] = &imgs[i]
		}
	}
	return out, nil
}

// readImagesWhere returns the full images of the rows of ti matching where.
func readImagesWhere(ctx context.Context, q querier, ti tableInfo, where string, args ...any) ([]RowImage, error) {
	return readImagesFrom(ctx, q, ti, quoteIdent(ti.name), where, args...)
}

// readImagesFrom is readImagesWhere reading ti's rows through the FROM term from (which
// names ti's table, and whose arguments come first in args).
func readImagesFrom(ctx context.Context, q querier, ti tableInfo, from, where string, args ...any) ([]RowImage, error) {
	query := "SELECT " + ti.selectList() + " FROM " + from + " WHERE " + where
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

// SessionFromImage returns the Session a full sessions row image holds. MessageCount is 0:
// an image carries no messages.
func SessionFromImage(img *RowImage) Session {
	s := Session{ID: imageText(img, "id"), Source: imageText(img, "source")}
	s.UserID, s.ParentID = imageTextPtr(img, "user_id"), imageTextPtr(img, "parent_session_id")
	s.EndReason, s.Title = imageTextPtr(img, "end_reason"), imageTextPtr(img, "title")
	s.SessionKey, s.ModelConfig = imageTextPtr(img, "session_key"), imageTextPtr(img, "model_config")
	s.Started, _ = img.Get("started_at")
	s.Ended, _ = img.Get("ended_at")
	s.APICalls, _ = img.Get("api_call_count")
	s.setNumbers()
	return s
}

func imageText(img *RowImage, col string) string {
	if p := imageTextPtr(img, col); p != nil {
		return *p
	}
	return ""
}

// imageTextPtr returns a TEXT column's value, nil for NULL, absent or non-text.
func imageTextPtr(img *RowImage, col string) *string {
	v, ok := img.Get(col)
	if !ok || v.Type != TypeText {
		return nil
	}
	return &v.Text
}
