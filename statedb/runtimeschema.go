package statedb

import (
	"bufio"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// runtimeSchemas holds one file per generation: the DDL of the state.db that generation's
// runtime creates in an empty home, extracted verbatim from the fixture's state.db
// (testdata/fixtures/<generation>/home/state.db, `go run ./scripts/genhome -extract-schema`).
// scripts/genhome builds its homes from the same files; upgrade-check replays them.
//
//go:embed schema/*.sql
var runtimeSchemas embed.FS

// schemaVersionPrefix starts the header line of a schema file that records schema_version.
const schemaVersionPrefix = "-- schema_version: "

// ErrNoRuntimeSchema reports a generation sessionctl holds no runtime schema for (the
// short-lived v22–v25 builds, a newer runtime).
var ErrNoRuntimeSchema = errors.New("no runtime schema for this generation")

// RuntimeSchema is the schema one generation's runtime creates in a new state.db.
type RuntimeSchema struct {
	Generation string
	// Version is the schema_version that runtime inserts (its SCHEMA_VERSION).
	Version int
	// DDL is every statement of sqlite_master in creation order, each ending in ";"; the
	// objects SQLite creates by itself (sqlite_sequence, FTS5 shadow tables) are comments.
	// Executed as one script on an empty database it recreates the runtime's schema.
	DDL string
}

// RuntimeSchemaFor returns the runtime schema of generation (a short name such as "r0715").
func RuntimeSchemaFor(generation string) (RuntimeSchema, error) {
	b, err := runtimeSchemas.ReadFile("schema/" + generation + ".sql")
	if errors.Is(err, fs.ErrNotExist) {
		return RuntimeSchema{}, fmt.Errorf("%s: %w", generation, ErrNoRuntimeSchema)
	}
	if err != nil {
		return RuntimeSchema{}, fmt.Errorf("runtime schema %s: %w", generation, err)
	}
	v, err := parseSchemaVersion(string(b))
	if err != nil {
		return RuntimeSchema{}, fmt.Errorf("runtime schema %s: %w", generation, err)
	}
	return RuntimeSchema{Generation: generation, Version: v, DDL: string(b)}, nil
}

// SchemaFileHeader is the header line that records schema_version in a schema file.
func SchemaFileHeader(version int) string {
	return schemaVersionPrefix + strconv.Itoa(version)
}

// parseSchemaVersion reads the "-- schema_version: N" header line.
func parseSchemaVersion(ddl string) (int, error) {
	sc := bufio.NewScanner(strings.NewReader(ddl))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), schemaVersionPrefix); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("schema file has no %q line", strings.TrimSpace(schemaVersionPrefix))
}
