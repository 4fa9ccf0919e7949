package commands

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/listout"
)

// TestListFormats: sessions list and entries list in every --format give the same items,
// read back: the envelope's data.<field>, one NDJSON line per item then the envelope, and
// CSV/TSV records under a header row of the JSON field names.
func TestListFormats(t *testing.T) {
	home := fixtureHome(t, genDB)
	for _, l := range []struct{ args, field, key string }{
		{"sessions list --limit 0 --sort messages", "sessions", "id"},
		{"entries list", "entries", "key"},
	} {
		base := append([]string{"--home", home, "--now", fixtureNow}, strings.Fields(l.args)...)
		want := jsonItems(t, base, l.field, l.key)
		if len(want) < 10 {
			t.Fatalf("%s: %d items", l.args, len(want))
		}
		if got := ndjsonItems(t, base, l.key); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s --format ndjson: %v, want %v", l.args, got, want)
		}
		for _, sep := range []rune{',', '\t'} {
			format := map[rune]string{',': "csv", '\t': "tsv"}[sep]
			if got := csvColumn(t, append(base, "--format", format), sep, l.key); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s --format %s: %v, want %v", l.args, format, got, want)
			}
		}
	}
}

// listRun runs a list command that must succeed and returns its stdout.
func listRun(t *testing.T, args []string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	if code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

// jsonItems is member key of each item of data.<field> of the envelope (--format json).
func jsonItems(t *testing.T, args []string, field, key string) []string {
	t.Helper()
	var env struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(listRun(t, append(args, "--format", "json"))), &env); err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	if err := json.Unmarshal(env.Data[field], &items); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, fmt.Sprint(it[key]))
	}
	return out
}

// ndjsonItems is member key of each item line; the last line is a successful envelope.
func ndjsonItems(t *testing.T, args []string, key string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(listRun(t, append(args, "--format", "ndjson")), "\n"), "\n")
	var out []string
	for i, line := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		if i == len(lines)-1 {
			if obj["exit_code"] != 0.0 || obj["error"] != nil || obj["command"] == nil {
				t.Errorf("last line is not a successful envelope: %s", line)
			}
			continue
		}
		out = append(out, fmt.Sprint(obj[key]))
	}
	return out
}

// csvColumn reads the records and returns column key of each.
func csvColumn(t *testing.T, args []string, sep rune, key string) []string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(listRun(t, args)))
	r.Comma = sep
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, name := range recs[0] {
		if name == key {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("header %v has no %s", recs[0], key)
	}
	var out []string
	for _, rec := range recs[1:] {
		out = append(out, rec[col])
	}
	return out
}

// TestListStreamFailsMidway: a row that cannot be read (a NULL id), met after a thousand
// rows were written, ends every format cleanly: exit 4 and the error on stderr; --json still
// one valid envelope whose error says why and whose list holds the rows read; NDJSON still
// ends with that envelope; the table and CSV keep the rows written.
func TestListStreamFailsMidway(t *testing.T) {
	home := fixtureHome(t, genDB)
	db, err := sql.Open("sqlite", sqliteURI(filepath.Join(home, "state.db"), "rw"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1199)
		INSERT INTO sessions (id, source, started_at) SELECT printf('old_%04d', i), 'old', 1000 + i FROM n;
		INSERT INTO sessions (id, source, started_at) VALUES (NULL, 'old', 1)`)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "ndjson", "table", "csv", "tsv"} {
		code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "sessions", "list", "--limit", "0", "--source", "old", "--format", format)
		if code != ExitData || !strings.Contains(stderr, "state.db") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 4 and one line", format, code, stderr)
		}
		if n := strings.Count(stdout, "old_"); n < 1000 || n >= 1200 {
			t.Errorf("%s: %d rows written before the failure, want the first page", format, n)
		}
		last := stdout
		switch format {
		case "ndjson":
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			last = lines[len(lines)-1]
		case "json":
		default:
			continue
		}
		var env struct {
			Error    *errorJSON                 `json:"error"`
			ExitCode int                        `json:"exit_code"`
			Data     map[string]json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(last), &env); err != nil {
			t.Errorf("%s: the envelope is not valid JSON: %v\n%s", format, err, last[max(0, len(last)-300):])
			continue
		}
		if env.ExitCode != ExitData || env.Error == nil || env.Error.Kind != "data" || !strings.Contains(stderr, env.Error.Message) {
			t.Errorf("%s: envelope exit_code %d error %+v; stderr %q", format, env.ExitCode, env.Error, stderr)
		}
		if _, ok := env.Data["total"]; ok {
			t.Errorf("%s: data.total given for a list that stopped", format)
		}
	}
}

// TestSessionsListFilters: the sessions list filters and --sort as the command line gives
// them (statedb's tests check them against every row): each item passes the filter, each
// pair is in order, and the count is the fixture's.
func TestSessionsListFilters(t *testing.T) {
	home := fixtureHome(t, genDB)
	since, until := 1783900800.0, 1783987200.0 // 2026-07-13T00:00:00Z, 2026-07-14T00:00:00Z
	num := func(item map[string]any, k string) float64 { f, _ := item[k].(float64); return f }
	tests := []struct {
		args    string
		n       int
		keep    func(map[string]any) bool
		ordered func(a, b map[string]any) bool
	}{
		{"--title pLaN --sort id --reverse", 20, func(s map[string]any) bool {
			title, _ := s["title"].(string)
			return strings.Contains(strings.ToLower(title), "plan")
		}, func(a, b map[string]any) bool { return a["id"].(string) < b["id"].(string) }},
		{"--min-messages 3 --sort messages", 19, func(s map[string]any) bool { return num(s, "message_count") >= 3 },
			func(a, b map[string]any) bool { return num(a, "message_count") >= num(b, "message_count") }},
		{"--since 2026-07-13T00:00:00Z --until 1783987200 --reverse", 14, func(s map[string]any) bool {
			return num(s, "started_at_unix") >= since && num(s, "started_at_unix") < until
		}, func(a, b map[string]any) bool { return num(a, "started_at_unix") <= num(b, "started_at_unix") }},
		{"--since 1d --sort ended", 3, func(s map[string]any) bool { return num(s, "started_at_unix") >= 1784194200.25-86400 },
			func(a, b map[string]any) bool { return num(a, "ended_at_unix") >= num(b, "ended_at_unix") }},
	}
	for _, tt := range tests {
		stdout := listRun(t, append([]string{"--home", home, "--now", fixtureNow, "sessions", "list", "--format", "ndjson"}, strings.Fields(tt.args)...))
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		var prev map[string]any
		for _, line := range lines[:len(lines)-1] {
			var item map[string]any
			if err := json.Unmarshal([]byte(line), &item); err != nil {
				t.Fatal(err)
			}
			if !tt.keep(item) || (prev != nil && !tt.ordered(prev, item)) {
				t.Errorf("%s: %s (after %v)", tt.args, line, prev["id"])
			}
			prev = item
		}
		if len(lines)-1 != tt.n {
			t.Errorf("%s: %d sessions, want %d", tt.args, len(lines)-1, tt.n)
		}
	}
	for _, bad := range []string{"--since yesterday", "--until 7x", "--sort size", "--min-messages -1", "--format xml", "--format csv --json"} {
		code, stdout, stderr := runCLI(t, append([]string{"--home", home, "sessions", "list"}, strings.Fields(bad)...)...)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 || (stdout != "" && !strings.Contains(bad, "--json")) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want a usage error", bad, code, stdout, stderr)
		}
	}
}

// TestStreamTableChunks: a long streamed table, whose rows after the sample are rendered in
// chunks on several renderers, prints exactly what one streaming table prints with the same
// widths (cells wider than the sample cut with "…", wide characters, a last partial chunk,
// lines without trailing spaces), in order.
func TestStreamTableChunks(t *testing.T) {
	header := []string{"ID", "SOURCE", "TITLE"}
	var rows [][]string
	for i := range streamSample + 256*8*2 + 17 { // chunks of 256 rows, 8 of them out at once
		title := fmt.Sprintf("title %d", i)
		switch i % 97 {
		case 5:
			title = strings.Repeat("long ", 40) // wider than the sample: cut
		case 7:
			title = "会话 " + title // wide characters
		}
		rows = append(rows, []string{fmt.Sprintf("s%06d", i), "tui", title})
	}
	var got bytes.Buffer
	table := tableOf(header...)(&got)
	for _, r := range rows {
		if err := table.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := table.Close(); err != nil {
		t.Fatal(err)
	}

	want := &trimmedLines{w: &bytes.Buffer{}}
	ref := &streamTable{header: header, sample: rows[:streamSample]}
	ref.fixWidths()
	one, err := ref.newTable(want)
	if err != nil {
		t.Fatal(err)
	}
	one.Header(toAny(header)...)
	for _, r := range rows {
		if err := one.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := one.Close(); err != nil {
		t.Fatal(err)
	}
	if err := want.Flush(); err != nil {
		t.Fatal(err)
	}
	wantText := want.w.(*bytes.Buffer).String()
	if got.String() != wantText {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(wantText, "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d differs (%d and %d lines):\n got %q\nwant %q", i, len(gl), len(wl), gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
	if n := strings.Count(got.String(), "\n"); n != len(rows)+1 {
		t.Errorf("%d lines, want %d", n, len(rows)+1)
	}
}

// failingWriter fails every write once n bytes are written.
type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		return 0, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestStreamTableWriteFails: a streamed table whose output fails part-way stops and says the
// failure once (every later write and flush of the writer fails the same way).
func TestStreamTableWriteFails(t *testing.T) {
	l, err := listout.NewWriter(&failingWriter{n: 100 << 10}, listout.Table, listout.Spec[[]string]{
		Table: tableOf("ID", "TITLE"), Cells: func(r []string) []string { return r }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000 && err == nil; i++ {
		err = l.Add([]string{fmt.Sprintf("s%06d", i), "a title"})
	}
	err = l.End(err, nil)
	if !errors.Is(err, errDiskFull) || strings.Count(err.Error(), "disk full") != 1 {
		t.Errorf("End = %v, want the write failure said once", err)
	}
}
