package commands

// Tests of the r0817 runtime's write-safety guards (runtime-v26.md §4.9) on fixture copies:
// every write refused where the runtime would refuse, with its exit code, one stderr line, one
// JSON envelope, and nothing in the home created or changed.

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// strictSnapshot records everything under home, sessionctl's own directory and SQLite's
// sidecars included (snapshotHome leaves those out): a refused write creates none of them.
func strictSnapshot(t testing.TB, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel] = "dir " + info.Mode().String()
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(path)
			out[rel] = "symlink " + target
		default:
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[rel] = fmt.Sprintf("file %v %d %s", info.Mode(), info.ModTime().UnixNano(), hex.EncodeToString(sum[:]))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", home, err)
	}
	return out
}

// assertRefusedEverywhere runs every write command on home (each has something to change on
// the r0715 fixture) and expects exit code, the stderr line containing why (maintain reports
// it as maintain.writes-refused on stdout instead), one JSON envelope with that error, and
// the home exactly as it was. Plans and reads still work.
func assertRefusedEverywhere(t *testing.T, home string, code int, why string) {
	t.Helper()
	before := strictSnapshot(t, home)
	for _, c := range writeCmds(code) {
		what := strings.Join(c.args, " ")
		got, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, c.args...)...)
		if got != code {
			t.Errorf("%s: exit %d, want %d\nstdout: %.1500s\nstderr: %s", what, got, code, stdout, stderr)
		}
		if c.quiet {
			if !strings.Contains(stdout, "maintain.writes-refused") || !strings.Contains(stdout, why) {
				t.Errorf("%s: stdout lacks maintain.writes-refused and %q:\n%s", what, why, stdout)
			}
		} else {
			assertErrorLine(t, what, stderr)
			if !strings.Contains(stderr, why) {
				t.Errorf("%s: stderr lacks %q: %s", what, why, stderr)
			}
		}
		env := oneEnvelope(t, home, c.args...)
		if env.ExitCode != code || env.Error == nil || env.Error.Code != code || !strings.Contains(env.Error.Message, why) || env.Applied || len(env.Journals) != 0 {
			t.Errorf("%s --json: envelope %+v (error %+v), want exit %d naming %q", what, env, env.Error, code, why)
		}
		assertSameSnapshot(t, what, before, strictSnapshot(t, home))
	}
	for _, args := range [][]string{{"status"}, {"finalize-orphans"}, {"prune-ghosts"}, {"suspend", keyBoth}, {"entries", "list"}} {
		if got, _, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...); got != ExitOK {
			t.Errorf("%v (read or plan): exit %d: %s", args, got, stderr)
		}
	}
	assertSameSnapshot(t, "reads and plans", before, strictSnapshot(t, home))
}

// oneEnvelope runs sessionctl --json and decodes its stdout, which must hold exactly one
// JSON document.
func oneEnvelope(t *testing.T, home string, args ...string) outcomeEnvelope {
	t.Helper()
	_, stdout, _ := runCLI(t, append([]string{"--home", home, "--now", fixtureNow, "--json"}, args...)...)
	dec := json.NewDecoder(strings.NewReader(stdout))
	var env outcomeEnvelope
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("%v --json: %v\n%s", args, err, stdout)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Errorf("%v --json: more than one document on stdout:\n%s", args, stdout)
	}
	return env
}

// holdRepairLock creates the runtime's repair lock of home's state.db, as its repairer
// does, holds an exclusive flock on it (another open file description conflicts with it, as
// another process would) and returns its release.
func holdRepairLock(t *testing.T, home string) func() {
	t.Helper()
	f, err := os.OpenFile(statedb.RepairLockPath(filepath.Join(home, "state.db")), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := sessionsjson.TryLock(f); held || err != nil {
		t.Fatalf("lock %s: held elsewhere %v, %v", f.Name(), held, err)
	}
	return func() { f.Close() }
}

// TestGuardRepairLockHeld: while another holder has state.db.repair.lock, every write exits 3
// ("busy", like sessionctl's own lock) and creates nothing (no sessionctl/, no journal, no
// lock, no -wal, -shm or -journal); the lock file itself is untouched. Once it is released the
// same writes run.
func TestGuardRepairLockHeld(t *testing.T) {
	for _, gen := range guardGens {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			release := holdRepairLock(t, home)
			assertRefusedEverywhere(t, home, ExitRefused, "another process holds state.db.repair.lock")
			release()
			if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "finalize-orphans", "--apply"); code != ExitOK {
				t.Fatalf("after the release: exit %d: %s", code, stderr)
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, gen, "finalize-orphans"))
		})
	}
}

// guardGens are the generations the guard tests run on: the db-primary fixtures (r0817's
// runtime made the files the guards read; r0715's is the layout before it).
var guardGens = []string{genDB, genR0817}

// TestGuardRepairLockFreeOrAbsent: a present but free repair lock refuses nothing and is
// left as it is; an absent one is never created.
func TestGuardRepairLockFreeOrAbsent(t *testing.T) {
	for _, present := range []bool{false, true} {
		home := fixtureHome(t, genDB)
		lock := statedb.RepairLockPath(filepath.Join(home, "state.db"))
		if present {
			if err := os.WriteFile(lock, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]string{{"finalize-orphans", "--apply"}, {"suspend", keyBoth, "--apply"}} {
			if code, _, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...); code != ExitOK {
				t.Fatalf("lock present %v: %v: exit %d: %s", present, args, code, stderr)
			}
		}
		if _, err := os.Lstat(lock); present != (err == nil) {
			t.Errorf("lock present %v: now %v", present, err)
		}
	}
}

// TestGuardRepairLedger: a ledger recording 3 or more failed repairs of state.db as it is
// now refuses every write (exit 4, a damaged database); a malformed ledger refuses too
// (docs/decisions.md); a stale fingerprint or fewer failures refuse nothing.
func TestGuardRepairLedger(t *testing.T) {
	refusing := map[string]struct {
		ledger string
		why    string
	}{
		"given up":  {`{"fingerprint": "FP", "failed_attempts": 3, "last_attempt": 1784190000.0}`, "gave up repairing this state.db"},
		"malformed": {`{"fingerprint": "FP", "failed_attempts": `, "unreadable repair ledger"},
		"mistyped":  {`{"fingerprint": "FP", "failed_attempts": "3"}`, "unreadable repair ledger"},
	}
	for name, c := range refusing {
		for _, gen := range guardGens {
			t.Run(name+"/"+gen, func(t *testing.T) {
				home := fixtureHome(t, gen)
				writeLedger(t, home, c.ledger)
				assertRefusedEverywhere(t, home, ExitData, c.why)
			})
		}
	}
	for name, ledger := range map[string]string{
		"stale":      `{"fingerprint": "1:2", "failed_attempts": 9}`,
		"two failed": `{"fingerprint": "FP", "failed_attempts": 2}`,
	} {
		t.Run(name, func(t *testing.T) {
			home := fixtureHome(t, genDB)
			writeLedger(t, home, ledger)
			if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "maintain", "--apply"); code != ExitOK && code != ExitFindings {
				t.Fatalf("maintain --apply: exit %d: %s", code, stderr)
			}
			if len(journals(t, home)) == 0 {
				t.Errorf("nothing was written")
			}
		})
	}
}

// writeLedger writes the runtime's repair ledger beside home's state.db, FP standing for the
// file's current fingerprint.
func writeLedger(t *testing.T, home, ledger string) {
	t.Helper()
	db := filepath.Join(home, "state.db")
	fp, err := statedb.Fingerprint(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statedb.RepairLedgerPath(db), []byte(strings.ReplaceAll(ledger, "FP", fp)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGuardNotWritable: state.db or its directory not writable (the immutable attribute,
// which binds root too) refuses every write with exit 4 before anything is tried; no mode
// is changed.
func TestGuardNotWritable(t *testing.T) {
	for _, target := range []string{"state.db", "."} {
		for _, gen := range guardGens {
			t.Run(target+"/"+gen, func(t *testing.T) {
				home := fixtureHome(t, gen)
				immutable(t, filepath.Join(home, target))
				assertRefusedEverywhere(t, home, ExitData, "is not readable and writable by this user")
			})
		}
	}
}

// TestGuardZeroedStateDB: a state.db whose header is all NUL (the runtime quarantines it on
// its next open) is named as zeroed by every command, exit 4, and left as it is.
func TestGuardZeroedStateDB(t *testing.T) {
	home := fixtureHome(t, genDB)
	db := filepath.Join(home, "state.db")
	st, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, make([]byte, st.Size()), 0o644); err != nil {
		t.Fatal(err)
	}
	before := strictSnapshot(t, home)
	for _, c := range append(writeCmds(ExitData), cliExpect{args: []string{"status"}, want: ExitData}) {
		code, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, c.args...)...)
		if code != ExitData || !strings.Contains(stderr+stdout, "zeroed") {
			t.Errorf("%v: exit %d, want 4 naming the zeroed file\nstdout: %.800s\nstderr: %s", c.args, code, stdout, stderr)
		}
	}
	assertSameSnapshot(t, "zeroed state.db", before, strictSnapshot(t, home))
}

// TestGuardLegacyRoutingKey: with gateway_routing keyed by session_key alone (as before the
// runtime's heal), routing writes are refused (exit 4, "start the gateway once") while the
// state.db repairs still run; maintain skips the routing steps (maintain.step-refused) and
// runs the others.
func TestGuardLegacyRoutingKey(t *testing.T) {
	for _, gen := range guardGens {
		t.Run(gen, func(t *testing.T) { testLegacyRoutingKey(t, gen) })
	}
}

func testLegacyRoutingKey(t *testing.T, gen string) {
	home := fixtureHome(t, gen)
	legacyKey := []string{
		"ALTER TABLE gateway_routing RENAME TO gr_old",
		`CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT PRIMARY KEY,
			entry_json TEXT NOT NULL, updated_at REAL NOT NULL)`,
		"INSERT INTO gateway_routing SELECT scope, session_key, entry_json, updated_at FROM gr_old",
		"DROP TABLE gr_old",
	}
	execSQL(t, filepath.Join(home, "state.db"), legacyKey...)
	before := strictSnapshot(t, home)
	for _, args := range [][]string{{"suspend", keyBoth, "--apply"}, {"resume", "mark", keyBoth, "--apply"}, {"suspend-stuck", "--apply"}, {"repoint", "--apply"}} {
		code, _, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
		if code != ExitData || !strings.Contains(stderr, "start the gateway once") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
		assertErrorLine(t, strings.Join(args, " "), stderr)
		if env := oneEnvelope(t, home, args...); env.ExitCode != ExitData || env.Error == nil || env.Error.Kind != "data" {
			t.Errorf("%v --json: %+v", args, env)
		}
	}
	assertSameSnapshot(t, "routing writes", before, strictSnapshot(t, home))

	routing := dumpHome(t, home)["routing"]
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "maintain", "--apply")
	if code != ExitFindings || !strings.Contains(stdout, "maintain.step-refused") || !strings.Contains(stdout, "start the gateway once") {
		t.Fatalf("maintain --apply: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	after := dumpHome(t, home)
	if fmt.Sprint(after["routing"]) != fmt.Sprint(routing) {
		t.Errorf("maintain changed the routing rows")
	}
	var latched int
	for _, k := range []string{"orphaned_compression_finalize_v1", "ghost_session_prune_v1"} {
		if after["state_meta"].(map[string]any)[k] == "1" {
			latched++
		}
	}
	if latched != 2 {
		t.Errorf("maintain did not run the state.db repairs: state_meta %v", after["state_meta"])
	}
}

// cjkHome is a copy of gen's fixture home with the r0817 CJK index (its tokenizer
// cjk_unicode61, which sessionctl cannot load) and, with cascade, a messages foreign key that
// deletes messages with their session (no runtime schema has one).
func cjkHome(t *testing.T, gen string, cascade bool) string {
	t.Helper()
	home := fixtureHome(t, gen)
	db := filepath.Join(home, "state.db")
	ddl, err := os.ReadFile(filepath.Join("..", "testdata", "sql", "cjk_index.sql"))
	if err != nil {
		t.Fatal(err)
	}
	execSQL(t, db, string(ddl))
	rewrites := [][3]string{{"messages_fts_cjk", "tokenize='unicode61'", "tokenize='cjk_unicode61'"}}
	if cascade {
		rewrites = append(rewrites, [3]string{"messages", "REFERENCES sessions(id)", "REFERENCES sessions(id) ON DELETE CASCADE"})
	}
	stmts := []string{"PRAGMA writable_schema = ON"}
	for _, r := range rewrites {
		stmts = append(stmts, fmt.Sprintf("UPDATE sqlite_master SET sql = replace(sql, '%s', '%s') WHERE name = '%s'",
			strings.ReplaceAll(r[1], "'", "''"), strings.ReplaceAll(r[2], "'", "''"), r[0]))
	}
	stmts = append(stmts, "PRAGMA schema_version = 9000", "PRAGMA writable_schema = OFF")
	execSQL(t, db, stmts...)
	return home
}

// TestGuardCJKTriggers: on a home with the CJK triggers, finalize-orphans (an UPDATE of
// sessions) and prune-ghosts (a DELETE of sessions, which no foreign-key action carries to
// messages) run as on any home and match the runtime's dumps, and their undo too; the CJK
// objects are left as they were. Where a messages foreign key does cascade, prune-ghosts is
// refused (exit 4, nothing written) and maintain skips it with maintain.step-refused.
func TestGuardCJKTriggers(t *testing.T) {
	for _, gen := range guardGens {
		t.Run(gen, func(t *testing.T) { testCJKTriggers(t, gen) })
	}
}

func testCJKTriggers(t *testing.T, gen string) {
	for _, op := range []string{"finalize-orphans", "prune-ghosts"} {
		t.Run(op, func(t *testing.T) {
			home := cjkHome(t, gen, false)
			code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, op, "--apply")
			if code != ExitOK {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, gen, op))
			js := journals(t, home)
			if len(js) != 1 {
				t.Fatalf("journals %v", js)
			}
			if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", js[0], "--apply"); code != ExitOK {
				t.Fatalf("undo: exit %d: %s", code, stderr)
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, gen, "before"))
			assertCJKTriggers(t, home)
		})
	}

	home := cjkHome(t, gen, true)
	before := strictSnapshot(t, home)
	code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "prune-ghosts", "--apply")
	if code != ExitData || !strings.Contains(stderr, "messages_fts_cjk") {
		t.Errorf("prune-ghosts with a cascading messages key: exit %d: %s", code, stderr)
	}
	assertErrorLine(t, "prune-ghosts", stderr)
	assertSameSnapshot(t, "prune-ghosts refused", before, strictSnapshot(t, home))
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "maintain", "--apply")
	if code != ExitFindings || !strings.Contains(stdout, "maintain.step-refused") {
		t.Errorf("maintain --apply: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	meta := dumpHome(t, home)["state_meta"].(map[string]any)
	if meta["orphaned_compression_finalize_v1"] != "1" || meta["ghost_session_prune_v1"] != nil {
		t.Errorf("maintain: state_meta %v, want finalize run and prune skipped", meta)
	}
	assertCJKTriggers(t, home)
}

// assertCJKTriggers fails unless home's state.db still has the three CJK triggers.
func assertCJKTriggers(t *testing.T, home string) {
	t.Helper()
	db := openRaw(t, filepath.Join(home, "state.db"))
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'messages_fts_cjk_%'`).Scan(&n); err != nil || n != 3 {
		t.Errorf("CJK triggers: %d (%v), want 3", n, err)
	}
}

// TestGuardDeleteModeStaysDelete: sessionctl never changes the journal mode. A home in
// rollback-journal (DELETE) mode — the r0817 fixture is (header bytes 18/19 = 1/1), and an
// r0715 copy is made so by those two bytes — stays so through every repair and its undo, and
// is left without a -wal.
func TestGuardDeleteModeStaysDelete(t *testing.T) {
	for _, gen := range []string{genDB, "r0817-481156139"} {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			db := filepath.Join(home, "state.db")
			if gen == genDB {
				setRollbackMode(t, db)
			}
			if mode := headerMode(t, db); mode != [2]byte{1, 1} {
				t.Fatalf("header bytes 18/19 = %v before, want 1/1", mode)
			}
			if !sessionsjson.RulesFor(sessionsjson.GenerationForSchema(schemaVersion(t, db))).WritesAllowed {
				t.Skipf("%s homes are not writable by this sessionctl yet", gen)
			}
			for _, args := range [][]string{{"finalize-orphans", "--apply"}, {"prune-ghosts", "--apply"}, {"suspend", keyBoth, "--apply"}} {
				if code, _, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...); code != ExitOK {
					t.Fatalf("%v: exit %d: %s", args, code, stderr)
				}
				assertRollbackMode(t, home, strings.Join(args, " "))
			}
			js := journals(t, home)
			for i := len(js) - 1; i >= 0; i-- {
				if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", js[i], "--apply"); code != ExitOK {
					t.Fatalf("undo %s: exit %d: %s", js[i], code, stderr)
				}
				assertRollbackMode(t, home, "undo")
			}
			compareDump(t, dumpHome(t, home), loadExpected(t, gen, "before"))
		})
	}
}

// setRollbackMode turns a WAL database without a -wal into a rollback-journal one: header
// bytes 18 and 19 (file format write and read versions) from 2 to 1, as SQLite itself does.
func setRollbackMode(t *testing.T, db string) {
	t.Helper()
	if _, err := os.Lstat(db + "-wal"); err == nil {
		t.Fatalf("%s-wal exists", db)
	}
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{1, 1}, 18); err != nil {
		t.Fatal(err)
	}
}

// headerMode returns header bytes 18 and 19 of db.
func headerMode(t *testing.T, db string) [2]byte {
	t.Helper()
	data, err := os.ReadFile(db)
	if err != nil || len(data) < 20 {
		t.Fatalf("read %s: %v", db, err)
	}
	return [2]byte{data[18], data[19]}
}

// assertRollbackMode fails unless home's state.db is still in rollback-journal mode, with
// no -wal, -shm or -journal left beside it.
func assertRollbackMode(t *testing.T, home, after string) {
	t.Helper()
	db := filepath.Join(home, "state.db")
	if mode := headerMode(t, db); mode != [2]byte{1, 1} {
		t.Errorf("after %s: header bytes 18/19 = %v, want 1/1", after, mode)
	}
	for _, sidecar := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Lstat(db + sidecar); err == nil {
			t.Errorf("after %s: state.db%s exists", after, sidecar)
		}
	}
	raw := openRaw(t, db)
	defer raw.Close()
	var mode string
	if err := raw.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "delete" {
		t.Errorf("after %s: journal_mode %q (%v)", after, mode, err)
	}
}

// schemaVersion reads db's schema_version.
func schemaVersion(t *testing.T, db string) int {
	t.Helper()
	var v int
	raw := openRaw(t, db)
	defer raw.Close()
	if err := raw.QueryRow("SELECT version FROM schema_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// openRaw opens db read-only with the bare driver; the test closes it when it ends.
func openRaw(t *testing.T, db string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", sqliteURI(db, "ro"))
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	t.Cleanup(func() { raw.Close() })
	return raw
}
