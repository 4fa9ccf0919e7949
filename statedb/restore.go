package statedb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// RowRestore asks RestoreRows to bring one row from Expected to Desired. Expected nil means
// the row must be absent; Desired nil means the row is deleted.
type RowRestore struct {
	Table    string           `json:"table"`
	Key      map[string]Value `json:"key"`
	Expected *RowImage        `json:"expected"`
	Desired  *RowImage        `json:"desired"`
}

// RestoreRows applies restores in order, in one BEGIN IMMEDIATE transaction with the runtime's
// retries. Every row is first compared with its expected image (same columns, same storage
// classes, same values); a row that already equals its desired image is left alone (the
// change it undoes never landed, or was undone already); any other difference returns an
// error wrapping ErrConflict and changes nothing. Then rows are re-inserted with all their
// columns, updated in the columns that differ, or deleted. Foreign keys are checked at the
// commit, not row by row, so rows that name each other (ghosts of a parent cycle, pruned
// together) come back whatever their order. restored counts the rows written.
func (db *DB) RestoreRows(ctx context.Context, restore []RowRestore) (restored int, stats TxStats, err error) {
	if err := db.requireWrite("restore rows"); err != nil {
		return 0, TxStats{}, err
	}
	stats, err = db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil { // ends with the transaction
			return fmt.Errorf("defer foreign keys: %w", err)
		}
		infos := map[string]tableInfo{}
		var todo []RowRestore
		for _, r := range restore {
			done, err := checkRestore(ctx, tx, infos, r)
			if err != nil {
				return err
			}
			if !done {
				todo = append(todo, r)
			}
		}
		for _, r := range todo {
			if err := applyRestore(ctx, tx, infos[r.Table], r); err != nil {
				return err
			}
		}
		restored = len(todo)
		return nil
	})
	return restored, stats, err
}

// checkRestore verifies that the current row equals r.Expected (done: false), or already
// equals r.Desired (done: true).
func checkRestore(ctx context.Context, tx *sql.Tx, infos map[string]tableInfo, r RowRestore) (done bool, err error) {
	ti, ok := infos[r.Table]
	if !ok {
		if ti, err = loadTableInfo(ctx, tx, r.Table); err != nil {
			return false, fmt.Errorf("restore %s: %w", r.Table, err)
		}
		infos[r.Table] = ti
	}
	cur, err := readImageTI(ctx, tx, ti, r.Key)
	if err != nil {
		return false, fmt.Errorf("restore %s: %w", r.Table, err)
	}
	diff := imageDiff(r.Expected, cur)
	if diff == "" {
		return false, nil
	}
	if imageDiff(r.Desired, cur) == "" {
		return true, nil
	}
	return false, fmt.Errorf("restore %s %s: %s: %w", r.Table, keyString(r.Key), diff, ErrConflict)
}

// imageDiff describes how current differs from expected in expected's columns ("" if not).
func imageDiff(expected, current *RowImage) string {
	switch {
	case expected == nil && current == nil:
		return ""
	case expected == nil:
		return "row exists but was expected absent"
	case current == nil:
		return "row is absent"
	}
	for i, col := range expected.Columns {
		v, ok := current.Get(col)
		if !ok {
			return "column " + col + " no longer exists"
		}
		if !v.Equal(expected.Values[i]) {
			return "column " + col + " changed"
		}
	}
	return ""
}

func keyString(key map[string]Value) string {
	parts := make([]string, 0, len(key))
	for k, v := range key {
		b, _ := v.MarshalJSON()
		parts = append(parts, k+"="+string(b))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// applyRestore inserts, updates or deletes one row.
func applyRestore(ctx context.Context, tx *sql.Tx, ti tableInfo, r RowRestore) error {
	var query string
	var args []any
	var err error
	switch {
	case r.Desired == nil && r.Expected == nil:
		return nil
	case r.Desired == nil:
		query, args, err = deleteStmt(ti, r.Key)
	case r.Expected == nil:
		query, args = insertStmt(ti, r.Desired)
	default:
		query, args, err = updateStmt(ti, r)
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w", r.Table, err)
	}
	if query == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("restore %s %s: %w", r.Table, keyString(r.Key), err)
	}
	return nil
}

func deleteStmt(ti tableInfo, key map[string]Value) (string, []any, error) {
	where, args, err := ti.keyWhere(key)
	return "DELETE FROM " + quoteIdent(ti.name) + " WHERE " + where, args, err
}

// insertStmt re-creates a row with every column of img (plus the rowid when it is the key).
func insertStmt(ti tableInfo, img *RowImage) (string, []any) {
	cols := make([]string, 0, len(img.Columns)+1)
	args := make([]any, 0, len(img.Columns)+1)
	for i, c := range img.Columns {
		cols, args = append(cols, quoteIdent(c)), append(args, img.Values[i].arg())
	}
	if v, ok := img.Key["rowid"]; ti.rowid && ok {
		cols, args = append(cols, "rowid"), append(args, v.arg())
	}
	return "INSERT INTO " + quoteIdent(ti.name) + " (" + strings.Join(cols, ", ") +
		") VALUES (" + placeholders(len(cols)) + ")", args
}

// updateStmt sets the columns whose desired value differs from the expected one.
func updateStmt(ti tableInfo, r RowRestore) (string, []any, error) {
	var sets []string
	var args []any
	for i, c := range r.Desired.Columns {
		want := r.Desired.Values[i]
		if have, ok := r.Expected.Get(c); ok && have.Equal(want) {
			continue
		}
		sets, args = append(sets, quoteIdent(c)+" = ?"), append(args, want.arg())
	}
	if len(sets) == 0 {
		return "", nil, nil
	}
	where, keyArgs, err := ti.keyWhere(r.Key)
	return "UPDATE " + quoteIdent(ti.name) + " SET " + strings.Join(sets, ", ") + " WHERE " + where,
		append(args, keyArgs...), err
}
