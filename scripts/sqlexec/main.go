// Command sqlexec runs an SQL script on an existing SQLite database through
// modernc.org/sqlite, the engine sessionctl is built on. scripts/bench times it
// beside the sqlite3 shell running the same script, so that the engine's own
// speed is told apart from the work sessionctl adds (journal, transcript moves,
// reporting).
//
//	go run ./scripts/sqlexec DB 'PRAGMA foreign_keys=ON; BEGIN IMMEDIATE; …; COMMIT;'
//
// The script runs as one Exec on one connection with SQLite's default settings,
// statement after statement, as the sqlite3 shell runs it; the first error stops
// it (exit 1).
package main

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sqlexec:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: sqlexec DB SQL")
	}
	path, script := args[0], args[1]
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	// mode=rw: never create a database where none is.
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "mode=rw"}).String())
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(script); err != nil {
		_ = db.Close()
		return fmt.Errorf("run script on %s: %w", path, err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}
