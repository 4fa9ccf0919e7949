package statedb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// guardGen is the fixture the guard tests build on: the newest generation sessionctl writes.
const guardGen = "r0715-c2a3b9ce5"

// TestCheckRepairLedger: the ledger refuses only at MaxRepairAttempts failures of the current
// fingerprint; a stale fingerprint or fewer failures pass; a ledger that cannot be read as
// one refuses with ErrRepairLedger (docs/decisions.md); nothing is changed.
func TestCheckRepairLedger(t *testing.T) {
	db := copyDB(t, guardGen)
	fp, err := Fingerprint(db)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(db)
	if want := fmt.Sprintf("%d:%d", st.Size(), st.ModTime().UnixNano()); fp != want {
		t.Fatalf("fingerprint %q, want %q", fp, want)
	}
	cases := []struct {
		name   string
		ledger string // "" = no file
		dir    bool
		want   error
	}{
		{name: "absent"},
		{name: "given up", ledger: `{"fingerprint": "FP", "failed_attempts": 3, "last_attempt": 1784190000.5}`, want: ErrRepairAbandoned},
		{name: "more than enough", ledger: `{"failed_attempts": 7, "fingerprint": "FP"}`, want: ErrRepairAbandoned},
		{name: "two failures", ledger: `{"fingerprint": "FP", "failed_attempts": 2}`},
		// json.loads reads NaN and Infinity (issue 29 item 6): the ledger is read, not malformed.
		{name: "given up, NaN beside", ledger: `{"fingerprint": "FP", "failed_attempts": 3, "last_attempt": NaN}`, want: ErrRepairAbandoned},
		{name: "two failures, Infinity beside", ledger: `{"fingerprint": "FP", "failed_attempts": 2, "x": [Infinity, -Infinity]}`},
		{name: "count NaN", ledger: `{"fingerprint": "FP", "failed_attempts": NaN}`, want: ErrRepairLedger},
		{name: "stale fingerprint", ledger: `{"fingerprint": "1:2", "failed_attempts": 3}`},
		{name: "zero", ledger: `{"fingerprint": "FP", "failed_attempts": 0}`},
		{name: "not json", ledger: `{"fingerprint": "FP", "failed_att`, want: ErrRepairLedger},
		{name: "empty", ledger: " ", want: ErrRepairLedger},
		{name: "array", ledger: `[3]`, want: ErrRepairLedger},
		{name: "no fingerprint", ledger: `{"failed_attempts": 3}`, want: ErrRepairLedger},
		{name: "no count", ledger: `{"fingerprint": "FP"}`, want: ErrRepairLedger},
		{name: "count a string", ledger: `{"fingerprint": "FP", "failed_attempts": "3"}`, want: ErrRepairLedger},
		{name: "count a fraction", ledger: `{"fingerprint": "FP", "failed_attempts": 3.5}`, want: ErrRepairLedger},
		{name: "fingerprint a number", ledger: `{"fingerprint": 12, "failed_attempts": 3}`, want: ErrRepairLedger},
		{name: "trailing data", ledger: `{"fingerprint": "FP", "failed_attempts": 1} {}`, want: ErrRepairLedger},
		{name: "directory", dir: true, want: ErrRepairLedger},
	}
	path := RepairLedgerPath(db)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(path)
			switch {
			case c.dir:
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
			case c.ledger != "":
				if err := os.WriteFile(path, []byte(strings.ReplaceAll(c.ledger, "FP", fp)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := CheckRepairLedger(db)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("CheckRepairLedger: %v, want %v", err, c.want)
			}
			if errors.Is(err, ErrRepairAbandoned) && !strings.Contains(err.Error(), fp) {
				t.Errorf("the refusal does not name the fingerprint: %v", err)
			}
			if now, _ := Fingerprint(db); now != fp {
				t.Errorf("state.db changed: %s -> %s", fp, now)
			}
		})
	}
}

// TestCheckWritable: state.db, a -wal or -shm beside it, or the directory that refuses writes
// (the immutable attribute, which binds root too) refuses with ErrNotWritable; nothing is
// created, and no mode is changed.
func TestCheckWritable(t *testing.T) {
	for _, target := range []string{"state.db", "state.db-wal", "state.db-shm", "."} {
		t.Run(target, func(t *testing.T) {
			db := copyDB(t, guardGen)
			dir := filepath.Dir(db)
			if err := CheckWritable(db); err != nil {
				t.Fatalf("writable home: %v", err)
			}
			path := filepath.Join(dir, target)
			if strings.HasPrefix(target, "state.db-") {
				if err := os.WriteFile(path, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.Stat(path)
			readOnly(t, path)
			err := CheckWritable(db)
			if !errors.Is(err, ErrNotWritable) {
				t.Fatalf("CheckWritable with %s read-only: %v", target, err)
			}
			if !errors.Is(CheckWriteSafety(db), ErrNotWritable) {
				t.Errorf("CheckWriteSafety does not refuse")
			}
			if after, _ := os.Stat(path); after.Mode() != before.Mode() {
				t.Errorf("mode changed: %v -> %v", before.Mode(), after.Mode())
			}
			if _, err := os.Lstat(RepairLockPath(db)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a repair lock was created")
			}
		})
	}
}

// readOnly makes path refuse writes until the test ends: mode bits for an ordinary user,
// the immutable attribute for root (skipped where chattr cannot set it).
func readOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, st.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(path, st.Mode().Perm()) })
		return
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("chattr +i %s: %v %s (root needs the immutable attribute)", path, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("chattr", "-i", path).CombinedOutput(); err != nil {
			t.Errorf("chattr -i %s: %v %s", path, err, out)
		}
	})
}

// TestZeroedStateDB: a file whose first bytes (up to the 100-byte header) are all NUL is
// reported as zeroed (ErrZeroed, also ErrCorrupt) by every open, before any connection; other
// junk is corrupt but not zeroed.
func TestZeroedStateDB(t *testing.T) {
	ctx := context.Background()
	real := copyDB(t, guardGen)
	data, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	header := bytes.Clone(data)
	copy(header, make([]byte, 100))
	cases := map[string]struct {
		data   []byte
		zeroed bool
	}{
		"all NUL":           {make([]byte, 8192), true},
		"short NUL":         {make([]byte, 40), true},
		"header zeroed":     {header, true},
		"one byte set":      {append(make([]byte, 99), 1), false},
		"not sqlite":        {bytes.Repeat([]byte("junk "), 100), false},
		"NUL after a magic": {append([]byte("SQLite format 3\x00"), make([]byte, 200)...), false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, open := range []func(context.Context, string) (*DB, error){OpenReadOnly, OpenWrite} {
				db, err := open(ctx, path)
				if err == nil {
					db.Close()
					t.Fatalf("opened")
				}
				if errors.Is(err, ErrZeroed) != c.zeroed || !errors.Is(err, ErrCorrupt) {
					t.Errorf("err %v: zeroed %v, want %v (and ErrCorrupt)", err, errors.Is(err, ErrZeroed), c.zeroed)
				}
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, c.data) {
				t.Errorf("the file changed")
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("files beside it: %v", entries)
			}
		})
	}
}

// TestCheckRoutingKey: the fixture's (scope, session_key) key passes; a gateway_routing keyed
// by session_key alone (as before the heal) or by nothing refuses, saying to start the
// gateway once.
func TestCheckRoutingKey(t *testing.T) {
	ctx := context.Background()
	good := copyDB(t, guardGen)
	if err := openRO(t, good).CheckRoutingKey(ctx); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	for name, ddl := range map[string]string{
		"session_key": `CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT PRIMARY KEY,
			entry_json TEXT NOT NULL, updated_at REAL NOT NULL)`,
		"reversed": `CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT NOT NULL,
			entry_json TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY (session_key, scope))`,
		"none": `CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT NOT NULL,
			entry_json TEXT NOT NULL, updated_at REAL NOT NULL)`,
	} {
		t.Run(name, func(t *testing.T) {
			path := copyDB(t, guardGen)
			legacyRoutingKey(t, path, ddl)
			err := openRO(t, path).CheckRoutingKey(ctx)
			if !errors.Is(err, ErrLegacyRoutingKey) || !strings.Contains(err.Error(), "start the gateway once") {
				t.Fatalf("CheckRoutingKey: %v", err)
			}
		})
	}
	older := copyDB(t, "r0703-52d0d671e") // no gateway_routing at all
	if err := openRO(t, older).CheckRoutingKey(ctx); err != nil {
		t.Fatalf("r0703: %v", err)
	}
}

// legacyRoutingKey rebuilds gateway_routing of the database at path with ddl, rows kept.
func legacyRoutingKey(t testing.TB, path, ddl string) {
	t.Helper()
	raw := rawDB(t, path)
	for _, q := range []string{
		"ALTER TABLE gateway_routing RENAME TO gr_old", ddl,
		"INSERT INTO gateway_routing SELECT scope, session_key, entry_json, updated_at FROM gr_old",
		"DROP TABLE gr_old",
	} {
		mustExec(t, raw, q)
	}
	raw.Close()
}

// TestCheckMessageWritesCJK builds the r0817 CJK index (view, external-content fts5 table and
// its three triggers, statedb.md §2.8) on a fixture copy and names its tokenizer
// cjk_unicode61, which no SQLite here can load: a messages write fails for real, so
// CheckMessageWrites refuses; deleting sessions reaches no messages row (no foreign-key
// action), so CheckSessionDeletes passes, and the runtime's finalize and ghost prune run on
// this file as on any other. With a messages foreign key that cascades, session deletes
// refuse too.
func TestCheckMessageWritesCJK(t *testing.T) {
	ctx := context.Background()
	plain := copyDB(t, guardGen)
	ro := openRO(t, plain)
	if err := ro.CheckMessageWrites(ctx); err != nil {
		t.Fatalf("fixture without CJK: %v", err)
	}
	if err := ro.CheckSessionDeletes(ctx); err != nil {
		t.Fatalf("fixture without CJK: %v", err)
	}

	path := copyDB(t, guardGen)
	addCJKIndex(t, path)
	raw := rawDB(t, path)
	if _, err := raw.Exec("DELETE FROM messages WHERE id = (SELECT MIN(id) FROM messages)"); err == nil || !strings.Contains(err.Error(), "cjk_unicode61") {
		t.Fatalf("a messages delete under the CJK triggers: %v, want a tokenizer error", err)
	}
	raw.Close()
	ro = openRO(t, path)
	err := ro.CheckMessageWrites(ctx)
	if !errors.Is(err, ErrMessageTriggers) || !strings.Contains(err.Error(), "messages_fts_cjk") {
		t.Fatalf("CheckMessageWrites: %v", err)
	}
	if err := ro.CheckSessionDeletes(ctx); err != nil {
		t.Fatalf("CheckSessionDeletes: %v", err)
	}
	db := openWrite(t, path)
	if fin := finalize(t, db, fixtureNow); len(changedIDs(fin.Changes, "sessions")) == 0 {
		t.Errorf("finalize changed nothing under the CJK triggers")
	}
	if pr := prune(t, db, fixtureNow); len(changedIDs(pr.Changes, "sessions")) == 0 {
		t.Errorf("prune changed nothing under the CJK triggers")
	}
	db.Close()
	checkCJKIntact(t, path)

	cascading := copyDB(t, guardGen)
	addCJKIndex(t, cascading)
	rewriteSchemaSQL(t, cascading, "messages", "REFERENCES sessions(id)", "REFERENCES sessions(id) ON DELETE CASCADE")
	if err := openRO(t, cascading).CheckSessionDeletes(ctx); !errors.Is(err, ErrMessageTriggers) {
		t.Fatalf("CheckSessionDeletes with messages cascading: %v", err)
	}
}

// checkCJKIntact fails unless the CJK triggers and table are still there, as written.
func checkCJKIntact(t *testing.T, path string) {
	t.Helper()
	raw := rawDB(t, path)
	defer raw.Close()
	names, err := queryStrings(context.Background(), raw, `SELECT name FROM sqlite_master WHERE name LIKE 'messages_fts_cjk%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"messages_fts_cjk", "messages_fts_cjk_src", "messages_fts_cjk_insert", "messages_fts_cjk_delete", "messages_fts_cjk_update"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is gone; CJK objects now: %v", want, names)
		}
	}
}

// addCJKIndex adds the r0817 CJK index to the database at path, as a runtime that
// loaded libfts5_cjk.so creates it (testdata/sql/cjk_index.sql), then names the tokenizer it
// was built with cjk_unicode61 (the table is created with unicode61, which every FTS5 has).
func addCJKIndex(t testing.TB, path string) {
	t.Helper()
	ddl, err := os.ReadFile(filepath.Join("..", "testdata", "sql", "cjk_index.sql"))
	if err != nil {
		t.Fatal(err)
	}
	raw := rawDB(t, path)
	mustExec(t, raw, string(ddl))
	raw.Close()
	rewriteSchemaSQL(t, path, "messages_fts_cjk", "tokenize='unicode61'", "tokenize='cjk_unicode61'")
}

// rewriteSchemaSQL replaces old with new in the stored CREATE statement of name
// (writable_schema; the next connection parses the new text).
func rewriteSchemaSQL(t testing.TB, path, name, old, new string) {
	t.Helper()
	raw := rawDB(t, path)
	defer raw.Close()
	var cookie int
	if err := raw.QueryRow("PRAGMA schema_version").Scan(&cookie); err != nil {
		t.Fatal(err)
	}
	mustExec(t, raw, "PRAGMA writable_schema = ON")
	res, err := raw.Exec("UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = ? AND instr(sql, ?) > 0", old, new, name, old)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("rewrite %s: %d rows", name, n)
	}
	mustExec(t, raw, fmt.Sprintf("PRAGMA schema_version = %d", cookie+1))
	mustExec(t, raw, "PRAGMA writable_schema = OFF")
}

// TestWritePatience: a write blocked by another connection's write lock waits (time-based,
// well past the 1 s busy timeout) and commits once the lock goes; a lock held past the
// patience fails with ErrBusy, having slept with the runtime's two-stage jitter.
func TestWritePatience(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a write lock for seconds")
	}
	ctx := context.Background()
	path := copyDB(t, guardGen)
	holdFor := func(d time.Duration) <-chan struct{} {
		blocker := rawDB(t, path)
		conn, err := blocker.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			time.Sleep(d)
			conn.ExecContext(ctx, "ROLLBACK")
			conn.Close()
			close(done)
		}()
		return done
	}
	db := openWrite(t, path)
	done := holdFor(1600 * time.Millisecond)
	stats, err := db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec("UPDATE sessions SET title = title WHERE 0")
		return err
	})
	<-done
	if err != nil {
		t.Fatalf("write after a 1.6 s lock: %v", err)
	}
	if stats.Attempts < 2 || stats.Waited < 1500*time.Millisecond {
		t.Errorf("stats %+v: want at least 2 attempts and 1.5 s waited", stats)
	}

	old := writePatience
	writePatience = 1500 * time.Millisecond
	defer func() { writePatience = old }()
	done = holdFor(3500 * time.Millisecond)
	start := time.Now()
	stats, err = db.WithImmediateTx(ctx, func(tx *sql.Tx) error { return nil })
	took := time.Since(start)
	<-done
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("write under a lock held past the patience: %v, want ErrBusy", err)
	}
	if took < 1500*time.Millisecond || took > 3*time.Second {
		t.Errorf("gave up after %v, want about the 1.5 s patience (+ one busy timeout)", took)
	}
	t.Logf("gave up after %v and %d attempts", took, stats.Attempts)
}

// TestRetrySleep: 20–150 ms during the first 2 s after the first attempt, 250–1000 ms after.
func TestRetrySleep(t *testing.T) {
	for range 2000 {
		if d := retrySleep(1999 * time.Millisecond); d < 20*time.Millisecond || d > 150*time.Millisecond {
			t.Fatalf("fast stage: %v", d)
		}
		if d := retrySleep(2 * time.Second); d < 250*time.Millisecond || d > time.Second {
			t.Fatalf("slow stage: %v", d)
		}
	}
}

// TestNoJournalModeOrCheckpointWrites scans the module's sources (Go, testscripts, SQL):
// sessionctl never sets the journal mode (no PRAGMA journal_mode=…, no DSN journal-mode
// parameter, no locking_mode), and every explicit checkpoint is PASSIVE (runtime-v26.md §4.1,
// §4.8). Only the home generator and the sqlexec test, which create new databases standing in
// for the runtime (whose default is WAL), set a journal mode. The one exception to PASSIVE is
// compact's port of the runtime's vacuum() (runtime-v26.md §4.8, §5): the TRUNCATE checkpoint
// its generations run around VACUUM, declared once in statedb/vacuum.go.
func TestNoJournalModeOrCheckpointWrites(t *testing.T) {
	setsMode := regexp.MustCompile(`(?i)journal_mode\s*[=(]\s*['"]?[a-z]|[?&]_journal|locking_mode\s*[=(]`)
	checkpoint := regexp.MustCompile(`(?i)wal_checkpoint\s*\(\s*['"]?(\w*)`)
	creators := map[string]bool{"scripts/genhome/db.go": true, "scripts/sqlexec/main_test.go": true}
	vacuumTruncate := map[string]string{"statedb/vacuum.go": `checkpointTruncate = "PRAGMA wal_` + `checkpoint(TRUNCATE)"`}
	root := ".."
	scanned := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "testdata/fixtures" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".txtar", ".sql", ".sh":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned++
		for i, line := range strings.Split(string(data), "\n") {
			if setsMode.MatchString(line) && !creators[rel] {
				t.Errorf("%s:%d sets the journal or locking mode: %s", rel, i+1, strings.TrimSpace(line))
			}
			for _, m := range checkpoint.FindAllStringSubmatch(line, -1) {
				if !strings.EqualFold(m[1], "PASSIVE") && strings.TrimSpace(line) != vacuumTruncate[rel] {
					t.Errorf("%s:%d checkpoints other than PASSIVE: %s", rel, i+1, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned only %d files under %s", scanned, root)
	}
}
