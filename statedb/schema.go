package statedb

import (
	"github.com/sessionctl/sessionctl/sessionsjson"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// NewestKnownVersion is the newest schema_version this package can write to (S26, the
// r0817 runtime 481156139); v22–v25 below it are read-only (sessionsjson.SchemaWritable).
const NewestKnownVersion = 26

// FTS layouts reported in Schema.FTSLayout (upstream hermes_state.py schema migrations).
const (
	FTSInlineV11   = "inline-v11"   // v11–v22: inline fts5 tables fed by triggers
	FTSExternalV1  = "external-v1"  // v1–v10: external-content single-column table
	FTSExternalV23 = "external-v23" // v23+: external-content with tool_name/tool_calls
	FTSNone        = "none"         // no messages_fts table
)

// Schema describes what a state.db contains. Features are decided by table and column
// presence, never by version alone.
type Schema struct {
	Version int // the single row of schema_version; without one, what the layout says (VersionMissing)
	// VersionMissing: schema_version has no row. Version is then the one the runtime of the
	// generation the tables and columns belong to inserts when it next opens the file
	// (LayoutVersion); sessionctl never writes it.
	VersionMissing      bool
	Known               bool            // a version this package writes (sessionsjson.SchemaWritable)
	Newer               bool            // Version > NewestKnownVersion: readable, never written
	Intermediate        bool            // v22–v25: written by a short-lived build; readable, never written
	Tables              map[string]bool // every table and view name in sqlite_master
	SessionColumns      map[string]bool // PRAGMA table_info(sessions), by name
	MessageColumns      map[string]bool // PRAGMA table_info(messages), by name
	HasCompressionLocks bool            // compression_locks (v14+)
	HasGatewayRouting   bool            // gateway_routing (v19+): the routing index is db-primary
	HasStateMeta        bool            // state_meta (absent before 2026-04-22)
	FTSLayout           string          // one of the FTS* constants
	JournalMode         string          // PRAGMA journal_mode, read only
	SQLiteVersion       string          // sqlite_version() of the linked library
	PageCount           int64           // PRAGMA page_count
	FreelistCount       int64           // PRAGMA freelist_count
}

// inspect reads the schema. The first query failing (other than on a lock) means the file is
// not a readable database and is reported as ErrCorrupt.
func inspect(ctx context.Context, q querier) (Schema, error) {
	s := Schema{}
	var err error
	if s.Tables, err = tableNames(ctx, q); err != nil {
		return s, classify("read sqlite_master", err, true)
	}
	if !s.Tables["schema_version"] {
		return s, fmt.Errorf("not a Hermes state.db: no schema_version: %w", ErrCorrupt)
	}
	if !s.Tables["sessions"] {
		return s, fmt.Errorf("not a Hermes state.db: no sessions table: %w", ErrCorrupt)
	}
	s.HasCompressionLocks = s.Tables["compression_locks"]
	s.HasGatewayRouting = s.Tables["gateway_routing"]
	s.HasStateMeta = s.Tables["state_meta"]
	if err := inspectColumns(ctx, q, &s); err != nil {
		return s, err
	}
	if err := inspectVersion(ctx, q, &s); err != nil {
		return s, err
	}
	if err := inspectFTS(ctx, q, &s); err != nil {
		return s, err
	}
	return s, inspectPragmas(ctx, q, &s)
}

// classify wraps err with what, turning corruption (or, when first is true, any failure but
// a lock or an I/O fault of the file system) into ErrCorrupt.
func classify(what string, err error, first bool) error {
	if isCorrupt(err) || (first && !isBusy(err) && !isIOFault(err)) {
		return fmt.Errorf("%s: %v: %w", what, err, ErrCorrupt)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func tableNames(ctx context.Context, q querier) (map[string]bool, error) {
	names, err := queryStrings(ctx, q, "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
	if err != nil {
		return nil, err
	}
	return toSet(names), nil
}

// inspectVersion reads schema_version. Without a row the version is the layout's: every
// generation's SessionDB._init_schema inserts its own SCHEMA_VERSION when the SELECT finds
// no row, and carries on (hermes_state.py at cb4addaca, 3b750715a, 3914089d5, 52d0d671e,
// c2a3b9ce5). A NULL version is refused: there `current_version < 10` raises TypeError and
// the runtime cannot open the file.
func inspectVersion(ctx context.Context, q querier, s *Schema) error {
	var v sql.NullInt64
	err := q.QueryRowContext(ctx, "SELECT version FROM schema_version LIMIT 1").Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s.Version, s.VersionMissing = LayoutVersion(*s), true
	case err != nil:
		return classify("read schema_version", err, true)
	case !v.Valid:
		return fmt.Errorf("not a Hermes state.db: schema_version holds NULL: %w", ErrCorrupt)
	default:
		s.Version = int(v.Int64)
	}
	s.Known = sessionsjson.SchemaWritable(s.Version)
	s.Newer = s.Version > NewestKnownVersion
	s.Intermediate = sessionsjson.RulesForSchema(s.Version).Intermediate
	return nil
}

// layouts recognises a generation by the tables and columns its runtime creates, newest
// first: the first marker present gives the schema_version that generation's runtime
// inserts into an empty schema_version (its SCHEMA_VERSION). Each marker is what the first
// schema version of the generation added, so a database of any version of the generation
// has it and none older does (hermes_state.py):
//
//	v26 sessions.git_metadata_generation  e89532d97; r0817 (481156139) inserts 26
//	v25 system_prompts           7d066c3c5; a v25 build inserts 25
//	v24 sessions.last_activity_at     c2088efe9; a v24 build inserts 24
//	v19 gateway_routing          94205a113; r0715 (c2a3b9ce5) inserts 21
//	v17 sessions.session_key     86e64900b; r0703 (52d0d671e) inserts 17
//	v12 messages.platform_message_id  31a010010; r0525 (3914089d5) inserts 13
//	v7  messages.reasoning_content    a7d78d3bf; r0506 (3b750715a) inserts 11
//	none of them                 r0418 (cb4addaca) inserts 6
var layouts = []struct {
	table, column string
	version       int
}{
	{"sessions", "git_metadata_generation", 26},
	{"system_prompts", "", 25},
	{"sessions", "last_activity_at", 24},
	{"gateway_routing", "", 21},
	{"sessions", "session_key", 17},
	{"messages", "platform_message_id", 13},
	{"messages", "reasoning_content", 11},
}

// layoutVersionOldest is what r0418's runtime inserts (cb4addaca SCHEMA_VERSION).
const layoutVersionOldest = 6

// LayoutVersion returns the schema_version the runtime of the generation whose tables and
// columns s has would insert into an empty schema_version (see layouts).
func LayoutVersion(s Schema) int {
	for _, l := range layouts {
		cols := map[string]map[string]bool{"sessions": s.SessionColumns, "messages": s.MessageColumns}[l.table]
		if (l.column == "" && s.Tables[l.table]) || (l.column != "" && cols[l.column]) {
			return l.version
		}
	}
	return layoutVersionOldest
}

func inspectColumns(ctx context.Context, q querier, s *Schema) error {
	var err error
	if s.SessionColumns, err = columnSet(ctx, q, "sessions"); err != nil {
		return classify("read sessions columns", err, false)
	}
	if s.MessageColumns, err = columnSet(ctx, q, "messages"); err != nil {
		return classify("read messages columns", err, false)
	}
	return nil
}

func inspectFTS(ctx context.Context, q querier, s *Schema) error {
	var ddl sql.NullString
	err := q.QueryRowContext(ctx,
		"SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'messages_fts'").Scan(&ddl)
	if errors.Is(err, sql.ErrNoRows) {
		s.FTSLayout = FTSNone
		return nil
	}
	if err != nil {
		return classify("read messages_fts definition", err, false)
	}
	s.FTSLayout = ftsLayout(ddl.String)
	return nil
}

// ftsLayout classifies the CREATE VIRTUAL TABLE text of messages_fts.
func ftsLayout(ddl string) string {
	norm := strings.NewReplacer(" ", "", "\n", "", "\t", "", "'", "", `"`, "").Replace(strings.ToLower(ddl))
	switch {
	case strings.Contains(norm, "tool_name"):
		return FTSExternalV23
	case strings.Contains(norm, "content=messages"):
		return FTSExternalV1
	default:
		return FTSInlineV11
	}
}

func inspectPragmas(ctx context.Context, q querier, s *Schema) error {
	steps := []struct {
		query string
		dest  any
	}{
		{"PRAGMA journal_mode", &s.JournalMode},
		{"SELECT sqlite_version()", &s.SQLiteVersion},
		{"PRAGMA page_count", &s.PageCount},
		{"PRAGMA freelist_count", &s.FreelistCount},
	}
	for _, st := range steps {
		if err := q.QueryRowContext(ctx, st.query).Scan(st.dest); err != nil {
			return classify(st.query, err, false)
		}
	}
	return nil
}

// columnSet returns the column names of table (empty when the table does not exist).
func columnSet(ctx context.Context, q querier, table string) (map[string]bool, error) {
	cols, err := columnNames(ctx, q, table)
	if err != nil {
		return nil, err
	}
	return toSet(cols), nil
}

// columnNames returns the column names of table in declaration order.
func columnNames(ctx context.Context, q querier, table string) ([]string, error) {
	return queryStrings(ctx, q, "SELECT name FROM pragma_table_info(?) ORDER BY cid", table)
}

func toSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// requireWrite refuses writes on a read-only handle or a schema this package does not know.
func (db *DB) requireWrite(op string) error {
	if !db.writable {
		return fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	if !db.schema.Known {
		return fmt.Errorf("%s: schema_version %d is not one this package writes (newest v%d): %w",
			op, db.schema.Version, NewestKnownVersion, ErrUnsupportedSchema)
	}
	return nil
}

// requireSessionColumns refuses an operation when sessions lacks one of cols.
func (db *DB) requireSessionColumns(op string, cols ...string) error {
	for _, c := range cols {
		if !db.schema.SessionColumns[c] {
			return fmt.Errorf("%s: sessions.%s missing (schema_version %d): %w",
				op, c, db.schema.Version, ErrUnsupportedSchema)
		}
	}
	return nil
}

// requireTable refuses an operation when table is missing.
func (db *DB) requireTable(op, table string) error {
	if !db.schema.Tables[table] {
		return fmt.Errorf("%s: table %s missing (schema_version %d): %w",
			op, table, db.schema.Version, ErrUnsupportedSchema)
	}
	return nil
}
