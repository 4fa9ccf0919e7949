package commands

// The storage-hygiene fixtures (testdata/fixtures/<gen>/hygiene): the runtime's own
// prune_sessions, archive_sessions, vacuum and prune_old_entries applied to each generation's
// home, replayed with sessionctl and compared with the runtime's dump, extended by the hygiene
// fields of hygiene/README.md (archived, fts, session_model_usage, system_prompts,
// integrity_check, and physical for compact). As the repair harness, the dump is built with
// database/sql only.

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// hygieneOps are the hygiene operations sessionctl replays: a case whose op is not here is
// skipped (adding an operation is adding its op here).
var hygieneOps = map[string]bool{"prune": true, "archive": true, "entries-prune": true, "compact": true}

// hygieneRepeatable are the operations whose second apply may do something again (compact
// always rewrites the file); the idempotence test only asks them to leave the same dump.
var hygieneRepeatable = map[string]bool{"compact": true}

// hygieneRecordOnly are the operations that change no row, entry or file the dump shows but
// still write a journal: an operation record, whose undo has nothing to restore (compact).
var hygieneRecordOnly = map[string]bool{"compact": true}

// hygieneCase is one entry of hygiene/cases.json. JSON nulls leave the zero value.
type hygieneCase struct {
	Name         string   `json:"-"`
	Op           string   `json:"op"`
	CLIArgs      []string `json:"cli_args"`
	InGeneration bool     `json:"in_generation"`
	DumpArgs     []string `json:"dump_args"`
	Returned     any      `json:"returned"`
	Deleted      []string `json:"deleted"`
	Orphaned     []string `json:"orphaned"`
	Archived     []string `json:"archived"`
	FilesRemoved []string `json:"files_removed"`
	RemovedKeys  []string `json:"removed_keys"`
	Adjustments  []string `json:"adjustments"`
	Description  string   `json:"description"`
}

// physical reports whether the case's dump has the physical fields (--physical).
func (c hygieneCase) physical() bool { return slices.Contains(c.DumpArgs, "--physical") }

// hygieneDir is testdata/fixtures/<gen>/hygiene.
func hygieneDir(gen string) string { return filepath.Join(fixturesRoot, gen, "hygiene") }

// loadHygieneCases reads hygiene/cases.json of gen, sorted by name.
func loadHygieneCases(t testing.TB, gen string) []hygieneCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(hygieneDir(gen), "cases.json"))
	if err != nil {
		t.Fatalf("read hygiene cases of %s: %v", gen, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var byName map[string]hygieneCase
	if err := dec.Decode(&byName); err != nil {
		t.Fatalf("parse hygiene cases of %s: %v", gen, err)
	}
	cases := make([]hygieneCase, 0, len(byName))
	for name, c := range byName {
		c.Name = name
		cases = append(cases, c)
	}
	slices.SortFunc(cases, func(a, b hygieneCase) int { return strings.Compare(a.Name, b.Name) })
	return cases
}

// loadHygieneExpected reads hygiene/expected/<name>.json of gen; its physical fields are
// dropped unless physical (before.json has them for compact only).
func loadHygieneExpected(t testing.TB, gen, name string, physical bool) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(hygieneDir(gen), "expected", name+".json"))
	if err != nil {
		t.Fatalf("read hygiene expected %s/%s: %v", gen, name, err)
	}
	v, err := decodeJSON(data)
	if err != nil {
		t.Fatalf("parse hygiene expected %s/%s: %v", gen, name, err)
	}
	m := v.(map[string]any)
	if !physical {
		delete(m, "physical")
	}
	return m
}

// dumpHygiene is dumpHome with the hygiene fields, and the physical ones when asked. The
// WAL's size is read first, before the dump's own connection exists.
func dumpHygiene(t testing.TB, home string, physical bool) map[string]any {
	t.Helper()
	walBytes := int64(0)
	if st, err := os.Stat(filepath.Join(home, "state.db-wal")); err == nil {
		walBytes = st.Size()
	} else if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat state.db-wal: %v", err)
	}
	extra := []func(*dumper){(*dumper).dumpHygiene}
	if physical {
		extra = append(extra, func(d *dumper) { d.dumpPhysical(walBytes) })
	}
	return dumpHomeWith(t, home, extra...)
}

// dumpHygiene adds sessions[id].archived (where the column exists), fts,
// session_model_usage, system_prompts and integrity_check.
func (d *dumper) dumpHygiene() {
	if d.hasColumn("sessions", "archived") {
		sessions := d.out["sessions"].(map[string]any)
		for id, v := range d.queryPairs(`SELECT id, archived FROM sessions`) {
			sessions[id].(map[string]any)["archived"] = v
		}
	}
	d.out["fts"] = d.dumpFTS()
	d.out["session_model_usage"] = nil
	if d.has("session_model_usage") {
		d.out["session_model_usage"] = d.queryPairs(`SELECT session_id, COUNT(*) FROM session_model_usage GROUP BY session_id`)
	}
	d.out["system_prompts"] = nil
	if d.has("system_prompts") {
		d.out["system_prompts"] = d.queryColumn(`SELECT hash FROM system_prompts ORDER BY hash`)
	}
	var ok string
	if err := d.db.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil {
		d.fatal("integrity_check", err)
	}
	d.out["integrity_check"] = ok
}

// ftsTables lists the FTS5 virtual tables named messages_fts*, sorted.
func (d *dumper) ftsTables() []string {
	tables := d.queryColumn(`SELECT name FROM sqlite_master WHERE type = 'table'
		AND name LIKE 'messages\_fts%' ESCAPE '\' AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%' ORDER BY name`)
	names := make([]string, len(tables))
	for i, v := range tables {
		names[i] = v.(string)
	}
	return names
}

// dumpFTS returns {table: {docs, integrity}} for each FTS table, nil when there is none.
// The integrity check is an INSERT into the table, so it runs on a private copy of the
// database (state.db is opened read-only here).
func (d *dumper) dumpFTS() any {
	tables := d.ftsTables()
	if len(tables) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "hygiene-dump-")
	if err != nil {
		d.fatal("scratch dir", err)
	}
	defer os.RemoveAll(dir)
	scratch := d.scratchCopy(filepath.Join(dir, "copy.db"))
	defer scratch.Close()
	out := map[string]any{}
	for _, tbl := range tables {
		var docs any
		if d.has(tbl + "_docsize") {
			var n int64
			if err := d.db.QueryRow(`SELECT COUNT(*) FROM "` + tbl + `_docsize"`).Scan(&n); err != nil {
				d.fatal("docsize of "+tbl, err)
			}
			docs = n
		}
		integrity := "ok"
		if _, err := scratch.Exec(`INSERT INTO "` + tbl + `"("` + tbl + `") VALUES('integrity-check')`); err != nil {
			integrity = "error"
		}
		out[tbl] = map[string]any{"docs": docs, "integrity": integrity}
	}
	return out
}

// scratchCopy copies the database (with VACUUM INTO, from the dump's read-only connection)
// to path and opens the copy read-write.
func (d *dumper) scratchCopy(path string) *sql.DB {
	if _, err := d.db.Exec(`VACUUM INTO ?`, path); err != nil {
		d.fatal("copy for the FTS integrity check", err)
	}
	db, err := sql.Open("sqlite", sqliteURI(path, "rw"))
	if err != nil {
		d.fatal("open the copy", err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// dumpPhysical adds physical: freelist_count, wal_bytes (measured before the dump opened
// the database) and fts_segments.
func (d *dumper) dumpPhysical(walBytes int64) {
	var free int64
	if err := d.db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil {
		d.fatal("freelist_count", err)
	}
	segments := map[string]any{}
	for _, tbl := range d.ftsTables() {
		var block []byte
		if err := d.db.QueryRow(`SELECT block FROM "` + tbl + `_data" WHERE id = 10`).Scan(&block); err != nil {
			d.fatal("structure record of "+tbl, err)
		}
		n, err := ftsSegments(block)
		if err != nil {
			d.fatal("structure record of "+tbl, err)
		}
		segments[tbl] = n
	}
	d.out["physical"] = map[string]any{"freelist_count": free, "wal_bytes": walBytes, "fts_segments": segments}
}

// ftsSegments reads nSegment from an FTS5 structure record: a 4-byte cookie, the 4 bytes
// FF 00 00 01 in the v2 format, then the varints nLevel and nSegment.
func ftsSegments(block []byte) (uint64, error) {
	if len(block) < 4 {
		return 0, errors.New("structure record too short")
	}
	rest := block[4:]
	if bytes.HasPrefix(rest, []byte{0xff, 0x00, 0x00, 0x01}) {
		rest = rest[4:]
	}
	_, n := sqliteVarint(rest)
	if n == 0 {
		return 0, errors.New("structure record: no nLevel")
	}
	seg, m := sqliteVarint(rest[n:])
	if m == 0 {
		return 0, errors.New("structure record: no nSegment")
	}
	return seg, nil
}

// sqliteVarint decodes one SQLite varint (big-endian, 7 bits a byte, the ninth byte whole)
// and returns it with the number of bytes read (0 when b is too short).
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9 && i < len(b); i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// queryColumn runs query, which returns one column, and returns its values in order.
func (d *dumper) queryColumn(query string) []any {
	rows, err := d.db.Query(query)
	if err != nil {
		d.fatal(query, err)
	}
	defer rows.Close()
	out := []any{}
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			d.fatal(query, err)
		}
		out = append(out, dbValue(v))
	}
	if err := rows.Err(); err != nil {
		d.fatal(query, err)
	}
	return out
}

// forEachHygieneCase runs fn as a parallel subtest, on a fresh copy of the generation's home,
// for every hygiene case whose op is in hygieneOps (and, with inGenerationOnly, that the
// generation's runtime has). args are the case's arguments after --home and --now.
func forEachHygieneCase(t *testing.T, inGenerationOnly bool, fn func(t *testing.T, gen string, c hygieneCase, home string, args []string)) {
	for _, gen := range requireGenerations(t) {
		for _, c := range loadHygieneCases(t, gen) {
			if !hygieneOps[c.Op] || (inGenerationOnly && !c.InGeneration) {
				continue
			}
			t.Run(gen+"/"+c.Name, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, gen)
				fn(t, gen, c, home, append([]string{"--home", home, "--now", fixtureNow}, c.CLIArgs...))
			})
		}
	}
}

// TestHygieneDumpMatchesBefore proves the hygiene dump: an untouched copy of each home dumps
// to hygiene/expected/before.json, physical fields included.
func TestHygieneDumpMatchesBefore(t *testing.T) {
	for _, gen := range requireGenerations(t) {
		t.Run(gen, func(t *testing.T) {
			t.Parallel()
			home := fixtureHome(t, gen)
			compareDump(t, dumpHygiene(t, home, true), loadHygieneExpected(t, gen, "before", true))
		})
	}
}

// TestHygieneCases applies every hygiene case sessionctl replays to a copy of its
// generation's home and compares the result with the runtime's own dump; a case the
// generation lacks must exit 4 and leave the home as it was.
func TestHygieneCases(t *testing.T) {
	forEachHygieneCase(t, false, func(t *testing.T, gen string, c hygieneCase, home string, args []string) {
		code, stdout, stderr := runCLI(t, append(args, "--apply")...)
		if !c.InGeneration {
			if code != ExitData {
				t.Fatalf("%s is not in %s: exit %d, want %d\nstderr: %s", c.Name, gen, code, ExitData, stderr)
			}
			compareDump(t, dumpHygiene(t, home, true), loadHygieneExpected(t, gen, "before", true))
			return
		}
		if code != ExitOK {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		compareDump(t, dumpHygiene(t, home, c.physical()), loadHygieneExpected(t, gen, c.Name, c.physical()))
	})
}

// TestHygieneCasesIdempotent applies each case twice: the second run writes no journal (and,
// but for a repeatable op, plans nothing) and leaves the runtime's dump.
func TestHygieneCasesIdempotent(t *testing.T) {
	forEachHygieneCase(t, true, func(t *testing.T, gen string, c hygieneCase, home string, args []string) {
		if code, _, stderr := runCLI(t, append(args, "--apply")...); code != ExitOK {
			t.Fatalf("first apply: exit %d: %s", code, stderr)
		}
		before := len(journals(t, home))
		code, stdout, stderr := runCLI(t, append(args, "--apply")...)
		if code != ExitOK {
			t.Fatalf("second apply: exit %d: %s", code, stderr)
		}
		if !hygieneRepeatable[c.Op] && (!strings.Contains(stdout, "nothing to change") || len(journals(t, home)) != before) {
			t.Fatalf("second apply changed something:\n%s", stdout)
		}
		compareDump(t, dumpHygiene(t, home, c.physical()), loadHygieneExpected(t, gen, c.Name, c.physical()))
	})
}

// TestHygieneCasesUndo applies each case, undoes every journal it wrote (newest first), and
// expects the untouched home back: the hygiene dump of before.json and the same bytes in
// every plain file. A case that writes no journal must leave that dump as it was.
func TestHygieneCasesUndo(t *testing.T) {
	forEachHygieneCase(t, true, func(t *testing.T, gen string, c hygieneCase, home string, args []string) {
		original := plainFiles(t, home)
		if code, _, stderr := runCLI(t, append(args, "--apply")...); code != ExitOK {
			t.Fatalf("apply: exit %d: %s", code, stderr)
		}
		paths := journals(t, home)
		changes := len(diffDump(loadHygieneExpected(t, gen, c.Name, false), loadHygieneExpected(t, gen, "before", false))) > 0
		if (changes || hygieneRecordOnly[c.Op]) != (len(paths) > 0) {
			t.Fatalf("apply wrote journals %v, but the runtime's dump changes: %v", paths, changes)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(paths)))
		for _, p := range paths {
			code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", p, "--apply")
			if code != ExitOK {
				t.Fatalf("undo %s: exit %d\n%s\n%s", p, code, stdout, stderr)
			}
		}
		compareDump(t, dumpHygiene(t, home, false), loadHygieneExpected(t, gen, "before", false))
		comparePlainFiles(t, plainFiles(t, home), original)
	})
}

// TestFTSSegments reads nSegment from structure records of both formats.
func TestFTSSegments(t *testing.T) {
	v2 := []byte{0, 0, 0, 7, 0xff, 0, 0, 1, 2, 0x81, 0x00}
	v1 := []byte{0, 0, 0, 7, 1, 3}
	for _, tc := range []struct {
		block []byte
		want  uint64
	}{{v2, 128}, {v1, 3}} {
		if got, err := ftsSegments(tc.block); err != nil || got != tc.want {
			t.Errorf("ftsSegments(% x) = %d, %v; want %d", tc.block, got, err, tc.want)
		}
	}
	if _, err := ftsSegments([]byte{0, 0, 0}); err == nil {
		t.Error("a short record parsed")
	}
}
