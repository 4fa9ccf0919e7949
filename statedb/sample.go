package statedb

import (
	"context"
	"database/sql"
	"fmt"
)

// sampleTimeColumns are the REAL epoch-second columns RebaseSample shifts, per table.
var sampleTimeColumns = map[string][]string{
	"sessions":          {"started_at", "ended_at"},
	"messages":          {"timestamp"},
	"compression_locks": {"acquired_at", "expires_at"},
}

// RebaseSample moves a sample database (such as the demo home) in time and place: every
// session, message and compression-lock time is shifted by delta seconds and the
// gateway_routing rows are moved to scope. It is meant for freshly copied sample homes that
// no runtime has open; it refuses schemas this package does not know.
func RebaseSample(ctx context.Context, path string, delta float64, scope string) error {
	db, err := OpenWrite(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.requireWrite("rebase sample"); err != nil {
		return err
	}
	_, err = db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		if err := db.shiftTimes(ctx, tx, delta); err != nil {
			return err
		}
		if !db.schema.HasGatewayRouting {
			return nil
		}
		_, err := tx.ExecContext(ctx, "UPDATE gateway_routing SET scope = ?", scope)
		return err
	})
	if err != nil {
		return fmt.Errorf("rebase sample %s: %w", path, err)
	}
	return nil
}

func (db *DB) shiftTimes(ctx context.Context, tx *sql.Tx, delta float64) error {
	for table, cols := range sampleTimeColumns {
		if !db.schema.Tables[table] {
			continue
		}
		for _, col := range cols {
			q := fmt.Sprintf("UPDATE %q SET %q = %q + ? WHERE %q IS NOT NULL", table, col, col, col)
			if _, err := tx.ExecContext(ctx, q, delta); err != nil {
				return fmt.Errorf("shift %s.%s: %w", table, col, err)
			}
		}
	}
	return nil
}
