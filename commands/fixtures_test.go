package commands

// Test support for the runtime-written fixture homes under testdata/fixtures.
//
// The helpers here implement the dump format and the comparison rules of
// testdata/fixtures/README.md on their own, with database/sql and encoding/json
// only, so that the tests do not check sessionctl with sessionctl's own readers.

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// fixturesRoot is testdata/fixtures relative to this package's directory, which is the
// working directory of `go test`.
var fixturesRoot = filepath.Join("..", "testdata", "fixtures")

// maxReportedDiffs caps the number of differences compareDump reports.
const maxReportedDiffs = 30

// fixtureGenerations returns the sorted names of the generation directories under
// testdata/fixtures, that is every directory that has a home/ subdirectory. It returns
// nil when the fixtures directory cannot be read; callers treat an empty result as a
// test failure.
func fixtureGenerations() []string {
	entries, err := os.ReadDir(fixturesRoot)
	if err != nil {
		return nil
	}
	var gens []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if st, err := os.Stat(filepath.Join(fixturesRoot, e.Name(), "home")); err == nil && st.IsDir() {
			gens = append(gens, e.Name())
		}
	}
	sort.Strings(gens)
	return gens
}

// fixtureHome copies testdata/fixtures/<gen>/home into a fresh t.TempDir() and
// returns the path of the copy. Modes are kept with owner write (and, for
// directories, owner search) added, modification times are kept, and stale SQLite
// sidecars (any -shm, an empty -wal) are not copied. When the copy's state.db has a
// gateway_routing table (v19+), the rows of the build scope are relocated to the
// copy's resolved sessions directory, as the fixtures README prescribes.
func fixtureHome(t testing.TB, gen string) string {
	t.Helper()
	return fixtureHomeAt(t, gen, filepath.Join(t.TempDir(), "home"))
}

// fatalTB is the part of testing.TB (and of testscript.TestScript) the copy helpers need.
type fatalTB interface {
	Fatalf(format string, args ...any)
}

// fixtureHomeAt copies the fixture home of gen to dst (relocating v19+ routing rows)
// and returns dst.
func fixtureHomeAt(t fatalTB, gen, dst string) string {
	src := filepath.Join(fixturesRoot, gen, "home")
	if err := copyTree(src, dst); err != nil {
		t.Fatalf("copy fixture home %s: %v", gen, err)
	}
	dbPath := filepath.Join(dst, "state.db")
	if _, err := os.Stat(dbPath); err != nil {
		return dst
	}
	if err := relocateRouting(dbPath, buildScope(t, gen), resolvedSessionsDir(dst)); err != nil {
		t.Fatalf("relocate routing of %s: %v", gen, err)
	}
	return dst
}

// copyTree copies the directory tree src to dst (which must not exist), in the manner
// of `cp -a`, with the mode and sidecar adjustments described at fixtureHome.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case skipSidecar(d.Name(), info.Size()):
			return nil
		default:
			return copyFile(path, target, info)
		}
	})
}

// skipSidecar reports whether a file is a stale SQLite sidecar not worth copying: a
// shared-memory index (always rebuilt) or an empty write-ahead log.
func skipSidecar(name string, size int64) bool {
	return strings.HasSuffix(name, "-shm") || (strings.HasSuffix(name, "-wal") && size == 0)
}

// copyFile copies one regular file, keeping its permission bits plus owner write and
// its modification time.
func copyFile(src, dst string, info fs.FileInfo) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chtimes(dst, info.ModTime(), info.ModTime())
}

// buildScope returns the gateway_routing scope the fixture of gen was built with:
// manifest.json "build_scope", else the README's /home/hermes/fixtures/<gen>/home/sessions.
func buildScope(t fatalTB, gen string) string {
	fallback := "/home/hermes/fixtures/" + gen + "/home/sessions"
	data, err := os.ReadFile(filepath.Join(fixturesRoot, gen, "manifest.json"))
	if err != nil {
		return fallback
	}
	var m struct {
		BuildScope string `json:"build_scope"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("parse manifest of %s: %v", gen, err)
	}
	if m.BuildScope == "" {
		return fallback
	}
	return m.BuildScope
}

// resolvedSessionsDir returns the absolute, symlink-resolved sessions/ of home, which is
// the gateway_routing scope the runtime uses for that home. When sessions/ cannot be
// resolved (it does not exist) the cleaned absolute path is returned.
func resolvedSessionsDir(home string) string {
	abs, err := filepath.Abs(filepath.Join(home, "sessions"))
	if err != nil {
		abs = filepath.Join(home, "sessions")
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		return resolved
	}
	return filepath.Clean(abs)
}

// sqliteURI returns a file: URI for the database at path with the given SQLite open mode
// ("ro" or "rw"), escaping the path.
func sqliteURI(path, mode string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: filepath.ToSlash(abs), RawQuery: "mode=" + mode}
	return u.String()
}

// relocateRouting moves the gateway_routing rows of scope oldScope to newScope, if the
// table exists, then checkpoints the WAL (PASSIVE: sessionctl's code and tests issue no other
// kind) and closes the database, which removes the WAL. It fails
// when the table has rows but none at oldScope, which means the fixture moved.
func relocateRouting(dbPath, oldScope, newScope string) (err error) {
	db, err := sql.Open("sqlite", sqliteURI(dbPath, "rw"))
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	defer func() { err = errors.Join(err, db.Close()) }()
	ok, err := tableExists(db, "gateway_routing")
	if err != nil || !ok {
		return err
	}
	res, err := db.Exec(`UPDATE gateway_routing SET scope = ? WHERE scope = ?`, newScope, oldScope)
	if err != nil {
		return err
	}
	moved, err := res.RowsAffected()
	if err != nil {
		return err
	}
	var total int64
	if err := db.QueryRow(`SELECT COUNT(*) FROM gateway_routing`).Scan(&total); err != nil {
		return err
	}
	if total > 0 && moved == 0 {
		return fmt.Errorf("no gateway_routing row has scope %q", oldScope)
	}
	_, err = db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
	return err
}

// tableExists reports whether db has a table called name.
func tableExists(db *sql.DB, name string) (bool, error) {
	var n int
	err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}

// dumpHome returns the canonical dump of home described in testdata/fixtures/README.md
// ("Dump format"), as decoded JSON: nil, bool, string, json.Number, []any and
// map[string]any, the same shapes loadExpected returns. state.db is opened read-only.
func dumpHome(t testing.TB, home string) map[string]any {
	t.Helper()
	return dumpHomeWith(t, home)
}

// dumpHomeWith is dumpHome with more fields: each of extra adds its own to the dump.
func dumpHomeWith(t testing.TB, home string, extra ...func(*dumper)) map[string]any {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteURI(filepath.Join(home, "state.db"), "ro"))
	if err != nil {
		t.Fatalf("open state.db: %v", err)
	}
	defer db.Close()
	d := &dumper{t: t, db: db, home: home, out: map[string]any{}}
	d.dumpSchema()
	d.dumpRouting()
	d.dumpSessions()
	d.dumpMessageCounts()
	d.dumpStateMeta()
	d.dumpCompressionLocks()
	d.dumpRestartFailureCounts()
	d.dumpSessionsFiles()
	for _, add := range extra {
		add(d)
	}
	return canonicalJSON(t, d.out)
}

// dumper holds the state of one dumpHome call.
type dumper struct {
	t    testing.TB
	db   *sql.DB
	home string
	out  map[string]any
}

// fatal stops the test with a dump error.
func (d *dumper) fatal(what string, err error) {
	d.t.Helper()
	d.t.Fatalf("dump %s: %s: %v", d.home, what, err)
}

// has reports whether state.db has the table name.
func (d *dumper) has(name string) bool {
	d.t.Helper()
	ok, err := tableExists(d.db, name)
	if err != nil {
		d.fatal("look up table "+name, err)
	}
	return ok
}

// dumpSchema fills schema_version (null when the table has no row) and storage.
func (d *dumper) dumpSchema() {
	var v any
	if err := d.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil && !errors.Is(err, sql.ErrNoRows) {
		d.fatal("schema_version", err)
	}
	d.out["schema_version"] = v
	d.out["storage"] = "json-primary"
	if d.has("gateway_routing") {
		d.out["storage"] = "db-primary"
	}
}

// dumpRouting fills routing, sessions_json and, for db-primary homes, routing_mirror
// and routing_foreign_scopes.
func (d *dumper) dumpRouting() {
	keys, values, present := d.readSessionsJSON()
	entries := map[string]any{}
	underscore := map[string]any{}
	for _, k := range keys {
		if strings.HasPrefix(k, "_") {
			underscore[k] = values[k]
		} else {
			entries[k] = normaliseEntry(values[k])
		}
	}
	var firstKey any
	if len(keys) > 0 && strings.HasPrefix(keys[0], "_") {
		firstKey = keys[0]
	}
	d.out["sessions_json"] = map[string]any{"present": present, "first_key": firstKey, "underscore_keys": underscore}
	if d.out["storage"] != "db-primary" {
		d.out["routing"] = entries
		return
	}
	d.out["routing_mirror"] = entries
	d.dumpGatewayRouting()
}

// readSessionsJSON returns the top-level keys of sessions/sessions.json in file order,
// their values, and whether the file exists.
func (d *dumper) readSessionsJSON() ([]string, map[string]any, bool) {
	data, err := os.ReadFile(filepath.Join(d.home, "sessions", "sessions.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, map[string]any{}, false
	}
	if err != nil {
		d.fatal("read sessions.json", err)
	}
	keys, values, err := decodeOrderedObject(data)
	if err != nil {
		d.fatal("parse sessions.json", err)
	}
	return keys, values, true
}

// dumpGatewayRouting fills routing (rows of this home's scope) and routing_foreign_scopes
// (all other scopes) from the gateway_routing table; updated_at is not dumped.
func (d *dumper) dumpGatewayRouting() {
	scope := resolvedSessionsDir(d.home)
	own := map[string]any{}
	foreign := map[string]any{}
	rows, err := d.db.Query(`SELECT scope, session_key, entry_json FROM gateway_routing`)
	if err != nil {
		d.fatal("gateway_routing", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rowScope, key, entryJSON string
		if err := rows.Scan(&rowScope, &key, &entryJSON); err != nil {
			d.fatal("gateway_routing row", err)
		}
		entry, err := decodeJSON([]byte(entryJSON))
		if err != nil {
			d.fatal("entry_json of "+key, err)
		}
		target := own
		if rowScope != scope {
			if foreign[rowScope] == nil {
				foreign[rowScope] = map[string]any{}
			}
			target = foreign[rowScope].(map[string]any)
		}
		target[key] = normaliseEntry(entry)
	}
	if err := rows.Err(); err != nil {
		d.fatal("gateway_routing rows", err)
	}
	d.out["routing"] = own
	d.out["routing_foreign_scopes"] = foreign
}

// dumpSessions fills sessions from the sessions table; api_call_count only when the
// column exists.
func (d *dumper) dumpSessions() {
	cols := []string{"source", "parent_session_id", "started_at", "ended_at", "end_reason", "title"}
	if d.hasColumn("sessions", "api_call_count") {
		cols = append(cols, "api_call_count")
	}
	cols = append(cols, "message_count")
	d.out["sessions"] = d.queryKeyed(`SELECT id, `+strings.Join(cols, ", ")+` FROM sessions`, cols)
}

// hasColumn reports whether table has the column col.
func (d *dumper) hasColumn(table, col string) bool {
	rows, err := d.db.Query(`SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		d.fatal("table_info "+table, err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			d.fatal("table_info row", err)
		}
		found = found || name == col
	}
	if err := rows.Err(); err != nil {
		d.fatal("table_info rows", err)
	}
	return found
}

// queryKeyed runs query, whose first column is a text key and whose other columns are
// named cols, and returns {key: {col: value}} with REAL values rounded to 6 decimals.
func (d *dumper) queryKeyed(query string, cols []string) map[string]any {
	rows, err := d.db.Query(query)
	if err != nil {
		d.fatal(query, err)
	}
	defer rows.Close()
	out := map[string]any{}
	for rows.Next() {
		var key string
		vals := make([]any, len(cols))
		dest := []any{&key}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			d.fatal(query, err)
		}
		rec := map[string]any{}
		for i, c := range cols {
			rec[c] = dbValue(vals[i])
		}
		out[key] = rec
	}
	if err := rows.Err(); err != nil {
		d.fatal(query, err)
	}
	return out
}

// queryPairs runs query, which returns (text key, value) rows, and returns {key: value}
// with REAL values rounded to 6 decimals.
func (d *dumper) queryPairs(query string) map[string]any {
	rows, err := d.db.Query(query)
	if err != nil {
		d.fatal(query, err)
	}
	defer rows.Close()
	out := map[string]any{}
	for rows.Next() {
		var key string
		var val any
		if err := rows.Scan(&key, &val); err != nil {
			d.fatal(query, err)
		}
		out[key] = dbValue(val)
	}
	if err := rows.Err(); err != nil {
		d.fatal(query, err)
	}
	return out
}

// dbValue converts a scanned SQLite value for the dump: BLOB bytes become a string and
// REAL values are rounded to 6 decimals as Python's round(x, 6) does.
func dbValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case float64:
		r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 6, 64), 64)
		return r
	default:
		return v
	}
}

// dumpMessageCounts fills message_counts: messages rows per session id.
func (d *dumper) dumpMessageCounts() {
	d.out["message_counts"] = d.queryPairs(`SELECT session_id, COUNT(*) FROM messages GROUP BY session_id`)
}

// dumpStateMeta fills state_meta, null when the table does not exist.
func (d *dumper) dumpStateMeta() {
	d.out["state_meta"] = nil
	if d.has("state_meta") {
		d.out["state_meta"] = d.queryPairs(`SELECT key, value FROM state_meta`)
	}
}

// dumpCompressionLocks fills compression_locks, null when the table does not exist.
func (d *dumper) dumpCompressionLocks() {
	d.out["compression_locks"] = nil
	if d.has("compression_locks") {
		cols := []string{"holder", "acquired_at", "expires_at"}
		d.out["compression_locks"] = d.queryKeyed(
			`SELECT session_id, holder, acquired_at, expires_at FROM compression_locks`, cols)
	}
}

// dumpRestartFailureCounts fills restart_failure_counts with the parsed
// .restart_failure_counts, null when the file is absent.
func (d *dumper) dumpRestartFailureCounts() {
	d.out["restart_failure_counts"] = nil
	data, err := os.ReadFile(filepath.Join(d.home, ".restart_failure_counts"))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		d.fatal("read .restart_failure_counts", err)
	}
	v, err := decodeJSON(data)
	if err != nil {
		d.fatal("parse .restart_failure_counts", err)
	}
	d.out["restart_failure_counts"] = v
}

// dumpSessionsFiles fills sessions_files: the sorted slash-separated paths, relative to
// sessions/, of every file (or symlink to a file) under sessions/.
func (d *dumper) dumpSessionsFiles() {
	root := filepath.Join(d.home, "sessions")
	files := []string{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if path == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if st, err := os.Stat(path); e.IsDir() || err != nil || !st.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		d.fatal("walk sessions/", err)
	}
	sort.Strings(files)
	d.out["sessions_files"] = files
}

// decodeJSON decodes one JSON value, keeping numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// decodeOrderedObject decodes a JSON object, returning its keys in file order (the last
// occurrence of a duplicate wins, at the position of the first, as in Python) and its
// values with numbers as json.Number.
func decodeOrderedObject(data []byte) ([]string, map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object (%v)", err)
	}
	var keys []string
	values := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := values[key]; !dup {
			keys = append(keys, key)
		}
		values[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return keys, values, nil
}

// canonicalJSON round-trips v through encoding/json so that a dump has exactly the
// value types a decoded expected file has.
func canonicalJSON(t testing.TB, v map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode dump: %v", err)
	}
	out, err := decodeJSON(data)
	if err != nil {
		t.Fatalf("decode dump: %v", err)
	}
	return out.(map[string]any)
}

// normaliseEntry applies the README entry normalisation to a routing entry: each
// top-level string field whose name ends in "_at" is rewritten by normaliseTimestamp.
// Nested objects (origin) are kept as parsed; no fixture has a nested "_at" field.
func normaliseEntry(entry any) any {
	m, ok := entry.(map[string]any)
	if !ok {
		return entry
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if s, isStr := v.(string); isStr && strings.HasSuffix(k, "_at") {
			v = normaliseTimestamp(s)
		}
		out[k] = v
	}
	return out
}

// Patterns of the ISO 8601 subset Python 3.11+ datetime.fromisoformat accepts (week
// dates such as 2026-W28-4 excepted: they come out UNPARSEABLE): a date, optionally followed by any one separator character and a
// time, itself optionally followed by a UTC offset.
var (
	isoDateExt   = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})$`)
	isoDateBasic = regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})$`)
	isoTimeExt   = regexp.MustCompile(`^(\d{2})(?::(\d{2})(?::(\d{2}))?)?(?:[.,](\d+))?$`)
	isoTimeBasic = regexp.MustCompile(`^(\d{2})(?:(\d{2})(\d{2})?)?(?:[.,](\d+))?$`)
	isoOffset    = regexp.MustCompile(`^[+-](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,]\d+)?)?)?$`)
)

// normaliseTimestamp rewrites raw as Python's
// datetime.fromisoformat(raw).strftime("%Y-%m-%dT%H:%M:%S.%f") would for a naive value;
// an aware value gives "AWARE:<raw>" and an unparseable one "UNPARSEABLE:<raw>".
func normaliseTimestamp(raw string) string {
	ts, aware, ok := parseISO(raw)
	switch {
	case !ok:
		return "UNPARSEABLE:" + raw
	case aware:
		return "AWARE:" + raw
	default:
		return ts.Format("2006-01-02T15:04:05.000000")
	}
}

// parseISO parses raw like datetime.fromisoformat, returning the wall time, whether an
// offset was given, and whether raw parsed.
func parseISO(raw string) (time.Time, bool, bool) {
	datePart, rest := raw, ""
	if len(raw) >= 10 && raw[4] == '-' {
		datePart, rest = raw[:10], raw[10:]
	} else if len(raw) >= 8 {
		datePart, rest = raw[:8], raw[8:]
	}
	m := isoDateExt.FindStringSubmatch(datePart)
	if m == nil {
		m = isoDateBasic.FindStringSubmatch(datePart)
	}
	if m == nil {
		return time.Time{}, false, false
	}
	var clock [4]int
	aware := false
	if rest != "" {
		_, size := utf8.DecodeRuneInString(rest)
		var ok bool
		if clock, aware, ok = parseISOTime(rest[size:]); !ok {
			return time.Time{}, false, false
		}
	}
	ts, ok := buildTime(atoi(m[1]), atoi(m[2]), atoi(m[3]), clock)
	return ts, aware, ok
}

// parseISOTime parses the time part (after the separator) into hour, minute, second and
// microsecond, reporting whether a valid UTC offset followed.
func parseISOTime(s string) ([4]int, bool, bool) {
	var clock [4]int
	timePart, offset := s, ""
	if i := strings.IndexAny(s, "+-Z"); i >= 0 {
		timePart, offset = s[:i], s[i:]
	}
	m := isoTimeExt.FindStringSubmatch(timePart)
	if m == nil {
		m = isoTimeBasic.FindStringSubmatch(timePart)
	}
	if m == nil || (offset != "" && !validOffset(offset)) {
		return clock, false, false
	}
	clock = [4]int{atoi(m[1]), atoi(m[2]), atoi(m[3]), fracMicros(m[4])}
	return clock, offset != "", true
}

// validOffset reports whether s is a UTC offset fromisoformat accepts: Z or ±HH[:MM[:SS[.f]]]
// strictly less than 24 hours.
func validOffset(s string) bool {
	if s == "Z" {
		return true
	}
	m := isoOffset.FindStringSubmatch(s)
	return m != nil && atoi(m[1]) < 24 && atoi(m[2]) < 60 && atoi(m[3]) < 60
}

// buildTime validates the fields and returns the naive wall time as a UTC time.Time,
// reporting whether every field was in range.
func buildTime(year, month, day int, clock [4]int) (time.Time, bool) {
	h, mi, s, us := clock[0], clock[1], clock[2], clock[3]
	if year < 1 || h > 23 || mi > 59 || s > 59 {
		return time.Time{}, false
	}
	ts := time.Date(year, time.Month(month), day, h, mi, s, us*1000, time.UTC)
	if ts.Year() != year || int(ts.Month()) != month || ts.Day() != day {
		return time.Time{}, false
	}
	return ts, true
}

// fracMicros converts fraction digits to microseconds, truncating beyond 6 digits.
func fracMicros(frac string) int {
	if frac == "" {
		return 0
	}
	frac = (frac + "000000")[:6]
	return atoi(frac)
}

// atoi converts a string of ASCII digits (or "") to an int.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// compareDump reports, via t.Errorf, every difference between a dump got and an expected
// dump want (at most maxReportedDiffs lines, then a count of the rest).
func compareDump(t testing.TB, got, want map[string]any) {
	t.Helper()
	diffs := diffDump(got, want)
	for i, d := range diffs {
		if i == maxReportedDiffs {
			t.Errorf("... and %d more differences", len(diffs)-i)
			return
		}
		t.Errorf("%s", d)
	}
}

// diffDump returns every difference between got and want under the README comparison
// rules: numbers compare numerically (0 equals 0.0), booleans only equal booleans, maps
// compare key by key and lists in order. Each difference reads
// "path/to/field: got X want Y", with <absent> for a missing key.
func diffDump(got, want map[string]any) []string {
	var diffs []string
	diffValue("", got, want, &diffs)
	return diffs
}

// diffValue appends the differences between got and want at path to diffs.
func diffValue(path string, got, want any, diffs *[]string) {
	gm, gIsMap := got.(map[string]any)
	wm, wIsMap := want.(map[string]any)
	if gIsMap && wIsMap {
		diffMap(path, gm, wm, diffs)
		return
	}
	gl, gIsList := asList(got)
	wl, wIsList := asList(want)
	if gIsList && wIsList {
		diffList(path, gl, wl, diffs)
		return
	}
	if !scalarEqual(got, want) {
		*diffs = append(*diffs, fmt.Sprintf("%s: got %s want %s", pathOrRoot(path), showValueForDiff(got), showValueForDiff(want)))
	}
}

// diffMap compares two maps key by key, in sorted key order.
func diffMap(path string, got, want map[string]any, diffs *[]string) {
	keys := make([]string, 0, len(got)+len(want))
	for k := range got {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, inGot := got[k]
		w, inWant := want[k]
		p := joinPath(path, k)
		switch {
		case !inGot:
			*diffs = append(*diffs, fmt.Sprintf("%s: got <absent> want %s", p, showValueForDiff(w)))
		case !inWant:
			*diffs = append(*diffs, fmt.Sprintf("%s: got %s want <absent>", p, showValueForDiff(g)))
		default:
			diffValue(p, g, w, diffs)
		}
	}
}

// diffList compares two lists element by element, then reports a length mismatch.
func diffList(path string, got, want []any, diffs *[]string) {
	for i := 0; i < len(got) || i < len(want); i++ {
		p := joinPath(path, strconv.Itoa(i))
		switch {
		case i >= len(got):
			*diffs = append(*diffs, fmt.Sprintf("%s: got <absent> want %s", p, showValueForDiff(want[i])))
		case i >= len(want):
			*diffs = append(*diffs, fmt.Sprintf("%s: got %s want <absent>", p, showValueForDiff(got[i])))
		default:
			diffValue(p, got[i], want[i], diffs)
		}
	}
}

// asList returns v as []any when it is a list ([]any or []string).
func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// scalarEqual compares two non-container values: numbers numerically, everything else
// (nil, bool, string) by type and value.
func scalarEqual(got, want any) bool {
	gn, gIsNum := numberOf(got)
	wn, wIsNum := numberOf(want)
	if gIsNum || wIsNum {
		return gIsNum && wIsNum && numbersEqual(gn, wn)
	}
	switch got.(type) {
	case nil, bool, string:
		return got == want
	}
	return false
}

// numberOf returns v as a JSON number literal when it is a number.
func numberOf(v any) (json.Number, bool) {
	switch x := v.(type) {
	case json.Number:
		return x, true
	case float64:
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), true
	case int:
		return json.Number(strconv.Itoa(x)), true
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), true
	}
	return "", false
}

// numbersEqual compares two JSON numbers: exactly when both are integers, else as float64.
func numbersEqual(a, b json.Number) bool {
	ai, aok := new(big.Int).SetString(string(a), 10)
	bi, bok := new(big.Int).SetString(string(b), 10)
	if aok && bok {
		return ai.Cmp(bi) == 0
	}
	af, aerr := strconv.ParseFloat(string(a), 64)
	bf, berr := strconv.ParseFloat(string(b), 64)
	return aerr == nil && berr == nil && af == bf
}

// joinPath appends a key to a diff path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "/" + key
}

// pathOrRoot names the root of a dump in a diff line.
func pathOrRoot(path string) string {
	if path == "" {
		return "<root>"
	}
	return path
}

// showValueForDiff renders a value for a diff line as compact JSON, shortened when long.
func showValueForDiff(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	const maxLen = 120
	if len(data) > maxLen {
		return string(data[:maxLen]) + "..."
	}
	return string(data)
}

// loadExpected reads testdata/fixtures/<gen>/expected/<name>.json (numbers as json.Number).
func loadExpected(t testing.TB, gen, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixturesRoot, gen, "expected", name+".json"))
	if err != nil {
		t.Fatalf("read expected %s/%s: %v", gen, name, err)
	}
	v, err := decodeJSON(data)
	if err != nil {
		t.Fatalf("parse expected %s/%s: %v", gen, name, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("expected %s/%s is not a JSON object", gen, name)
	}
	return m
}

// fixtureCase is one entry of expected/cases.json: a runtime operation applied to the
// fixture home, with its sessionctl command line and the runtime's result. JSON nulls
// leave the zero value ("" or nil).
type fixtureCase struct {
	Name         string   `json:"-"`             // the case name, also the expected/<name>.json file
	Op           string   `json:"op"`            // the operation, e.g. "suspend", "prune-ghosts"
	CLIArgs      []string `json:"cli_args"`      // sessionctl arguments; nil when no command exists
	InGeneration bool     `json:"in_generation"` // whether the generation's runtime has the operation
	Missing      string   `json:"missing"`       // the runtime function absent when !InGeneration
	Key          string   `json:"key"`           // the routing key acted on, if any
	Role         string   `json:"role"`          // the manifest role of Key, if any
	Reason       string   `json:"reason"`        // the reason argument, if any
	Returned     any      `json:"returned"`      // the runtime's return value (numbers as json.Number)
	Changes      []string `json:"changes"`       // "path: before=X after=Y" lines, before -> after
	Summary      []string `json:"summary"`       // human-readable summary of the changes
	Adjustments  []string `json:"adjustments"`   // oracle adjustments to the bare runtime result
	Description  string   `json:"description"`   // what the operation does
}

// loadCases reads testdata/fixtures/<gen>/expected/cases.json, an object of case name to
// case, and returns the cases sorted by name.
func loadCases(t testing.TB, gen string) []fixtureCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixturesRoot, gen, "expected", "cases.json"))
	if err != nil {
		t.Fatalf("read cases of %s: %v", gen, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var byName map[string]fixtureCase
	if err := dec.Decode(&byName); err != nil {
		t.Fatalf("parse cases of %s: %v", gen, err)
	}
	cases := make([]fixtureCase, 0, len(byName))
	for name, c := range byName {
		c.Name = name
		cases = append(cases, c)
	}
	slices.SortFunc(cases, func(a, b fixtureCase) int { return strings.Compare(a.Name, b.Name) })
	return cases
}

// requireGenerations returns fixtureGenerations, failing the test when there are none.
func requireGenerations(t testing.TB) []string {
	t.Helper()
	gens := fixtureGenerations()
	if len(gens) == 0 {
		t.Fatalf("no fixture generations under %s", fixturesRoot)
	}
	return gens
}

// TestFixtureDumpMatchesBefore proves the harness: the dump of an untouched (copied and
// relocated) fixture home equals its expected/before.json in every generation.
func TestFixtureDumpMatchesBefore(t *testing.T) {
	for _, gen := range requireGenerations(t) {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			compareDump(t, dumpHome(t, home), loadExpected(t, gen, "before"))
			if cases := loadCases(t, gen); len(cases) == 0 {
				t.Errorf("no cases in %s/expected/cases.json", gen)
			}
		})
	}
}

// TestFixtureDumpDetectsChange flips one entry's suspended flag in a json-primary copy
// and checks that the comparison reports exactly that field.
func TestFixtureDumpDetectsChange(t *testing.T) {
	gen := firstJSONPrimary(t)
	home := fixtureHome(t, gen)
	path := filepath.Join(home, "sessions", "sessions.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys, values, err := decodeOrderedObject(data)
	if err != nil {
		t.Fatal(err)
	}
	key := firstEntryKey(keys)
	entry := values[key].(map[string]any)
	suspended, _ := entry["suspended"].(bool)
	entry["suspended"] = !suspended
	out, err := json.MarshalIndent(values, "", "  ") // sorted keys keep "_README" first
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	diffs := diffDump(dumpHome(t, home), loadExpected(t, gen, "before"))
	prefix := "routing/" + key + "/suspended: got " + strconv.FormatBool(!suspended)
	if len(diffs) != 1 || !strings.HasPrefix(diffs[0], prefix) {
		t.Errorf("diffs = %q, want one starting %q", diffs, prefix)
	}
}

// firstJSONPrimary returns the first generation whose expected dump is json-primary.
func firstJSONPrimary(t testing.TB) string {
	t.Helper()
	for _, gen := range requireGenerations(t) {
		if loadExpected(t, gen, "before")["storage"] == "json-primary" {
			return gen
		}
	}
	t.Fatal("no json-primary fixture generation")
	return ""
}

// firstEntryKey returns the first key that is a routing entry (does not start with "_").
func firstEntryKey(keys []string) string {
	for _, k := range keys {
		if !strings.HasPrefix(k, "_") {
			return k
		}
	}
	return ""
}

// TestFixtureDumpDiffRules checks the comparison rules on small values.
func TestFixtureDumpDiffRules(t *testing.T) {
	got := map[string]any{
		"zero": json.Number("0"), "real": 1784194200.25, "flag": true, "gone": "x",
		"list": []any{"a", "b"}, "nested": map[string]any{"n": json.Number("1")},
	}
	want := map[string]any{
		"zero": json.Number("0.0"), "real": json.Number("1784194200.250000"), "flag": json.Number("1"),
		"list": []any{"a"}, "nested": map[string]any{"n": json.Number("2"), "m": nil},
	}
	wantDiffs := []string{
		"flag: got true want 1",
		"gone: got \"x\" want <absent>",
		"list/1: got \"b\" want <absent>",
		"nested/m: got <absent> want null",
		"nested/n: got 1 want 2",
	}
	if diffs := diffDump(got, want); !slices.Equal(diffs, wantDiffs) {
		t.Errorf("diffDump =\n%s\nwant\n%s", strings.Join(diffs, "\n"), strings.Join(wantDiffs, "\n"))
	}
}

// TestFixtureDumpNormalisesTimestamps checks normaliseTimestamp against values whose
// datetime.fromisoformat (Python 3.11) behaviour is known.
func TestFixtureDumpNormalisesTimestamps(t *testing.T) {
	tests := map[string]string{
		"2026-07-16T09:30:00.250000":        "2026-07-16T09:30:00.250000",
		"2026-07-16T09:30:00":               "2026-07-16T09:30:00.000000",
		"2026-07-16 09:30:00.25":            "2026-07-16T09:30:00.250000",
		"2026-07-16T09:30":                  "2026-07-16T09:30:00.000000",
		"2026-07-16":                        "2026-07-16T00:00:00.000000",
		"20260716T093000":                   "2026-07-16T09:30:00.000000",
		"2026-07-16T09":                     "2026-07-16T09:00:00.000000",
		"2026-07-16T0930":                   "2026-07-16T09:30:00.000000",
		"2026-07-16T09:3000":                "UNPARSEABLE:2026-07-16T09:3000",
		"2026-07-16é09:30":                  "2026-07-16T09:30:00.000000",
		"2026-07-16T09:30:00,5":             "2026-07-16T09:30:00.500000",
		"2026-07-16T":                       "UNPARSEABLE:2026-07-16T",
		"2026-07-16T09:30:00.":              "UNPARSEABLE:2026-07-16T09:30:00.",
		"0000-01-01":                        "UNPARSEABLE:0000-01-01",
		"2026-07-16T09:30:60":               "UNPARSEABLE:2026-07-16T09:30:60",
		"2026-07-16T09:30:00.1234567":       "2026-07-16T09:30:00.123456",
		"2026-07-16T09:30:00.250000Z":       "AWARE:2026-07-16T09:30:00.250000Z",
		"2026-07-16T09:30:00+00:00":         "AWARE:2026-07-16T09:30:00+00:00",
		"2026-07-16T09:30:00.250000-05:30":  "AWARE:2026-07-16T09:30:00.250000-05:30",
		"2026-02-30T09:30:00":               "UNPARSEABLE:2026-02-30T09:30:00",
		"2026-07-16T25:00:00":               "UNPARSEABLE:2026-07-16T25:00:00",
		"yesterday":                         "UNPARSEABLE:yesterday",
		"":                                  "UNPARSEABLE:",
		"1784194200.25":                     "UNPARSEABLE:1784194200.25",
		"2026-07-16T09:30:00.250000+24:00":  "UNPARSEABLE:2026-07-16T09:30:00.250000+24:00",
		" 2026-07-16T09:30:00":              "UNPARSEABLE: 2026-07-16T09:30:00",
		"2026-07-16T09:30:00.250000 ":       "UNPARSEABLE:2026-07-16T09:30:00.250000 ",
		"2026-07-16T09:30:00.250000+0000":   "AWARE:2026-07-16T09:30:00.250000+0000",
		"2026-07-16T09:30:00.250000+00":     "AWARE:2026-07-16T09:30:00.250000+00",
		"2026-07-16T09:30:00.250000+00:00Z": "UNPARSEABLE:2026-07-16T09:30:00.250000+00:00Z",
	}
	for raw, want := range tests {
		if got := normaliseTimestamp(raw); got != want {
			t.Errorf("normaliseTimestamp(%q) = %q, want %q", raw, got, want)
		}
	}
}
