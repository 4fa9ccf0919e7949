package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
)

// relocate points the gateway_routing rows of a copied db-primary home at
// the copy: the runtime (and sessionctl) only read rows whose scope is the
// resolved sessions/ directory of the home in use. A json-primary home (no
// gateway_routing table) is left alone. The rows must all share one scope.
func relocate(ctx context.Context, home string, stdout io.Writer) error {
	abs, err := filepath.Abs(filepath.Join(home, "sessions"))
	if err != nil {
		return err
	}
	scope, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: filepath.Join(filepath.Dir(scope), "state.db"), RawQuery: "mode=rw"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'gateway_routing'`).Scan(&tables); err != nil {
		return err
	}
	if tables == 0 {
		fmt.Fprintf(stdout, "relocate: %s is json-primary, nothing to do\n", home)
		return nil
	}
	var scopes int
	var old string
	if err := db.QueryRowContext(ctx, `SELECT count(DISTINCT scope), coalesce(max(scope), '') FROM gateway_routing`).Scan(&scopes, &old); err != nil {
		return err
	}
	if scopes != 1 {
		return fmt.Errorf("relocate: gateway_routing has %d scopes, want exactly 1", scopes)
	}
	res, err := db.ExecContext(ctx, `UPDATE gateway_routing SET scope = ? WHERE scope = ?`, scope, old)
	if err != nil {
		return err
	}
	n, _ := res.RowsAffected()
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "relocate: %d rows %s -> %s\n", n, old, scope)
	return nil
}
