package main

import (
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/sessionctl/sessionctl/statedb"
)

// schemaFor returns the DDL and the schema_version of a generation: the runtime
// schema statedb embeds (statedb/schema/<short>.sql), the files upgrade-check
// replays too.
func schemaFor(g generation) (ddl string, version int, err error) {
	rs, err := statedb.RuntimeSchemaFor(g.Short)
	if err != nil {
		return "", 0, err
	}
	return rs.DDL, rs.Version, nil
}

// masterRow is one row of sqlite_master.
type masterRow struct {
	typ, name, tblName string
	sql                sql.NullString
}

// readMaster returns sqlite_master in rowid (creation) order.
func readMaster(db *sql.DB) ([]masterRow, error) {
	rows, err := db.Query(`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []masterRow
	for rows.Next() {
		var r masterRow
		if err := rows.Scan(&r.typ, &r.name, &r.tblName, &r.sql); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// openReadOnly opens an existing state.db without writing anything next to
// it (immutable=1: no -wal/-shm files are created).
func openReadOnly(path string) (*sql.DB, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// isInternal reports whether a sqlite_master row is created by SQLite itself
// when the other statements run: sqlite_sequence (AUTOINCREMENT) and the
// shadow tables of FTS5 virtual tables.
func isInternal(r masterRow, vtabs []string) bool {
	if r.name == "sqlite_sequence" {
		return true
	}
	for _, v := range vtabs {
		for _, suffix := range []string{"_data", "_idx", "_content", "_docsize", "_config"} {
			if r.name == v+suffix {
				return true
			}
		}
	}
	return false
}

// extractSchema writes the schema file of the state.db at path to w: every
// non-NULL sqlite_master.sql in rowid order, each terminated by ";", with the
// objects SQLite creates on its own kept as comments.
func extractSchema(w io.Writer, path, label string) error {
	db, err := openReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	var version int
	if err := db.QueryRow(`SELECT version FROM schema_version`).Scan(&version); err != nil {
		return fmt.Errorf("schema_version: %w", err)
	}
	master, err := readMaster(db)
	if err != nil {
		return err
	}
	var vtabs []string
	for _, r := range master {
		if strings.HasPrefix(r.sql.String, "CREATE VIRTUAL TABLE") {
			vtabs = append(vtabs, r.name)
		}
	}
	fmt.Fprintf(w, "-- Hermes Agent state.db schema of %s, extracted verbatim from\n", label)
	fmt.Fprintf(w, "-- SELECT sql FROM sqlite_master ORDER BY rowid (go run ./scripts/genhome -extract-schema).\n")
	fmt.Fprintf(w, "-- Objects SQLite creates by itself (sqlite_sequence, FTS5 shadow tables) are\n")
	fmt.Fprintf(w, "-- kept as comments: they appear when the statements before them run.\n")
	fmt.Fprintln(w, statedb.SchemaFileHeader(version))
	for _, r := range master {
		if !r.sql.Valid {
			continue
		}
		fmt.Fprintln(w)
		if isInternal(r, vtabs) {
			fmt.Fprintf(w, "-- (created by SQLite) %s;\n", strings.ReplaceAll(r.sql.String, "\n", "\n-- "))
			continue
		}
		fmt.Fprintf(w, "%s;\n", r.sql.String)
	}
	return nil
}
