package statedb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// The write-safety guards of the r0817 runtime (upstream 481156139) that an outside writer
// must honour (runtime-v26.md §4.9). Each refusal wraps one of these sentinels. The files they
// read exist only where an r0817 or newer runtime made them; on older homes every guard passes.
var (
	// ErrRepairInProgress: another process holds state.db.repair.lock, the flock under which
	// the runtime's repair_state_db_schema (and `hermes sessions repair`) operates on the file
	// (923d86e09, PR #84882). A refusal to retry later, not damage.
	ErrRepairInProgress = errors.New("the runtime is repairing state.db (another process holds state.db.repair.lock)")
	// ErrRepairAbandoned: state.db.repair-attempts.json records MaxRepairAttempts failed
	// repairs of the file as it is now (its fingerprint is the current size:mtime_ns): the
	// runtime has given up repairing it (0d00ebef7, PR #86747).
	ErrRepairAbandoned = errors.New("the runtime gave up repairing this state.db")
	// ErrRepairLedger: state.db.repair-attempts.json exists but cannot be read as the
	// runtime's ledger, so whether the runtime gave up on this file cannot be told.
	ErrRepairLedger = errors.New("unreadable repair ledger")
	// ErrZeroed: state.db starts with NUL bytes where the SQLite header belongs. The runtime
	// moves such a file aside (state.db.zeroed-<time>-<pid>.bak) and starts a new database on
	// its next open (ed5e41ddd, 6048696ed/22e5dac4b #68805); sessionctl touches it in no way.
	// Errors wrapping it wrap ErrCorrupt too.
	ErrZeroed = errors.New("zeroed file")
	// ErrNotWritable: state.db, its -wal or -shm, or its directory lacks read or write
	// permission for this process. The runtime's preflight_db_writability (373632e33) chmods
	// them inside its home; sessionctl never changes a mode, and never deletes a -wal.
	ErrNotWritable = errors.New("not writable")
	// ErrLegacyRoutingKey: gateway_routing's primary key is not (scope, session_key). The
	// runtime rebuilds the table on its next open (_heal_gateway_routing_pk, 76b0ea511, PR
	// #73541); until then a routing write could collide on the old key.
	ErrLegacyRoutingKey = errors.New("gateway_routing has a legacy primary key")
	// ErrMessageTriggers: a trigger on messages writes an FTS index whose tokenizer this
	// SQLite cannot load (the optional CJK index messages_fts_cjk, tokenizer cjk_unicode61
	// from libfts5_cjk.so, f13f84511 PR #65544): any insert, update or delete of messages
	// rows would fail, or, as the runtime does without the tokenizer, need the triggers
	// dropped — a schema change sessionctl never makes.
	ErrMessageTriggers = errors.New("messages triggers need an FTS tokenizer sessionctl cannot load")
)

// MaxRepairAttempts is the runtime's _MAX_PERSISTENT_REPAIR_ATTEMPTS: after this many failed
// repairs of one fingerprint it refuses further automatic repair (0d00ebef7).
const MaxRepairAttempts = 3

// Sidecar names of the runtime's repair machinery, next to state.db.
const (
	repairLockSuffix   = ".repair.lock"
	repairLedgerSuffix = ".repair-attempts.json"
	maxLedgerBytes     = 64 << 10
)

// zeroedProbeBytes is how much of the file the zeroed test reads: the SQLite header.
const zeroedProbeBytes = 100

// RepairLockPath is the runtime's repair lock of the database at dbPath.
func RepairLockPath(dbPath string) string { return dbPath + repairLockSuffix }

// RepairLedgerPath is the runtime's failed-repair ledger of the database at dbPath.
func RepairLedgerPath(dbPath string) string { return dbPath + repairLedgerSuffix }

// CheckWriteSafety applies the file-level guards before a write to the database at dbPath,
// in this order: the repair lock (ErrRepairInProgress), the repair ledger
// (ErrRepairAbandoned, ErrRepairLedger) and the permissions (ErrNotWritable). It creates,
// changes and removes nothing; the repair lock, when present, is opened read-only, locked
// without waiting and released at once. It never opens state.db or its sidecars, so it may run
// while a connection to the database is open (closing a descriptor of the database would drop
// that connection's POSIX locks).
func CheckWriteSafety(dbPath string) error {
	if err := ProbeRepairLock(dbPath); err != nil {
		return err
	}
	if err := CheckRepairLedger(dbPath); err != nil {
		return err
	}
	return CheckWritable(dbPath)
}

// ProbeRepairLock returns an error wrapping ErrRepairInProgress while another process holds
// the flock on state.db.repair.lock. An absent lock file is a free lock and is never created
// (the runtime creates it when it repairs). The file is opened O_RDONLY (flock needs no write
// access; the open never blocks on a named pipe), tried with LOCK_EX|LOCK_NB and released at
// once. A lock file that cannot be probed is reported as held: a repair may be running.
func ProbeRepairLock(dbPath string) error {
	path := RepairLockPath(dbPath)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s cannot be probed (%v): %w", filepath.Base(path), err, ErrRepairInProgress)
	}
	defer f.Close()
	held, err := sessionsjson.TryLock(f)
	if held {
		return fmt.Errorf("%w; try again once it is done", ErrRepairInProgress)
	}
	if err != nil {
		return fmt.Errorf("flock %s (%v): %w", filepath.Base(path), err, ErrRepairInProgress)
	}
	return sessionsjson.Unlock(f)
}

// RepairLedger is state.db.repair-attempts.json as the runtime writes it.
type RepairLedger struct {
	Fingerprint    string // "<size>:<mtime_ns>" of state.db when the repairs failed
	FailedAttempts int64
}

// Fingerprint returns the runtime's fingerprint of the file at path: "<size>:<mtime_ns>"
// (os.stat's st_size and st_mtime_ns).
func Fingerprint(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%d", st.Size(), st.ModTime().UnixNano()), nil
}

// CheckRepairLedger refuses a write when the runtime's ledger records MaxRepairAttempts or
// more failed repairs of state.db as it is now (ErrRepairAbandoned), or exists and cannot be
// read as a ledger (ErrRepairLedger: docs/decisions.md says why that refuses too). A ledger of
// another fingerprint is stale (the file changed since) and does not refuse; neither does an
// absent one (the runtime removes it when a repair succeeds).
func CheckRepairLedger(dbPath string) error {
	path := RepairLedgerPath(dbPath)
	ledger, err := ReadRepairLedger(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	name := filepath.Base(path)
	if err != nil {
		return fmt.Errorf("%s, the runtime's record of failed repairs, cannot be read (%v), so whether the runtime gave up on this state.db is unknown; run `hermes sessions repair`, or remove the ledger once `PRAGMA integrity_check` says ok: %w", name, err, ErrRepairLedger)
	}
	if ledger.FailedAttempts < MaxRepairAttempts {
		return nil
	}
	fp, err := Fingerprint(dbPath)
	if err != nil {
		return fmt.Errorf("stat state.db: %w", err)
	}
	if fp != ledger.Fingerprint {
		return nil
	}
	return fmt.Errorf("%s records %d failed repairs of state.db as it is now (fingerprint %s); it is damaged: restore it from a backup: %w",
		name, ledger.FailedAttempts, fp, ErrRepairAbandoned)
}

// ReadRepairLedger reads and decodes a repair ledger as the runtime's json.loads reads it
// (sessionsjson.LoadJSON: NaN and Infinity load): a JSON object with a string "fingerprint"
// and an integer "failed_attempts" (other members are ignored). A missing file
// wraps fs.ErrNotExist; anything else that is not such a ledger (not a regular file, over
// 64 KiB, not JSON, missing or mistyped members) is an error.
func ReadRepairLedger(path string) (RepairLedger, error) {
	data, err := readSmallRegular(path, maxLedgerBytes)
	if err != nil {
		return RepairLedger{}, err
	}
	v, err := sessionsjson.LoadJSON(data)
	if err != nil {
		return RepairLedger{}, fmt.Errorf("not a JSON object: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return RepairLedger{}, errors.New("not a JSON object")
	}
	fp, fpOK := obj["fingerprint"].(string)
	attempts, attemptsOK := obj["failed_attempts"]
	if !fpOK || !attemptsOK {
		return RepairLedger{}, errors.New(`"fingerprint" (string) and "failed_attempts" (integer) are required`)
	}
	num, _ := attempts.(json.Number)
	n, err := num.Int64() // a JSON integer; a string, a fraction or NaN is not
	if err != nil {
		return RepairLedger{}, fmt.Errorf(`"failed_attempts" is not an integer: %v`, attempts)
	}
	return RepairLedger{Fingerprint: fp, FailedAttempts: n}, nil
}

// readSmallRegular reads a regular file of at most limit bytes without blocking on a named
// pipe; a missing file wraps fs.ErrNotExist.
func readSmallRegular(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v)", st.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over %d bytes", limit)
	}
	return data, nil
}

// The mode bits of access(2).
const (
	accessR = 4 // R_OK
	accessW = 2 // W_OK
	accessX = 1 // X_OK
)

// CheckDirWritable reports whether this process may create and remove entries in dir, as
// access(2) decides it (an immutable directory or a read-only mount fails, root included).
func CheckDirWritable(dir string) error {
	if err := access(dir, accessW|accessX); err != nil {
		return fmt.Errorf("%s cannot be written by this user: %w", dir, err)
	}
	return nil
}

// Unmovable splits paths (files a write is to move into a journal's stash) into those it may
// move and those it leaves: anything but a regular file (a symbolic link, a named pipe, a
// directory: undo refuses to put such a thing back) and a file whose immutable or
// append-only attribute would make the move fail (read on Linux), so that a run reports
// those kept instead of finding out after its report.
func Unmovable(paths []string) (movable, pinnedFiles []string) {
	for _, p := range paths {
		if unmovable(p) {
			pinnedFiles = append(pinnedFiles, p)
		} else {
			movable = append(movable, p)
		}
	}
	return movable, pinnedFiles
}

// notRegular reports whether path (not followed) exists and is not a regular file.
func notRegular(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && !fi.Mode().IsRegular()
}

// CheckWritable refuses a write (ErrNotWritable) unless this process may read and write
// state.db, its -wal and -shm (those present) and enter, read and write their directory, as
// access(2) decides it: the runtime's preflight_db_writability asks the same (os.access), so
// root passes where the runtime's root passes, and an immutable file or a read-only mount
// fails for both. Nothing is opened.
func CheckWritable(dbPath string) error {
	const r, w, x = accessR, accessW, accessX
	dir := filepath.Dir(dbPath)
	checks := []struct {
		path string
		mode uint32
		what string
	}{
		{dir, r | w | x, "its directory " + dir},
		{dbPath, r | w, "state.db"},
		{dbPath + "-wal", r | w, "state.db-wal"},
		{dbPath + "-shm", r | w, "state.db-shm"},
	}
	for i, c := range checks {
		if i >= 2 {
			if _, err := os.Lstat(c.path); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		if err := access(c.path, c.mode); err != nil {
			return fmt.Errorf("%s is not readable and writable by this user (%v); sessionctl never changes modes and never deletes a -wal: fix the permissions (the runtime chmods them on its next start inside its home): %w",
				c.what, err, ErrNotWritable)
		}
	}
	return nil
}

// zeroed reports whether head, the first bytes of a non-empty file, are all NUL.
func zeroed(head []byte) bool {
	return len(head) > 0 && bytes.Count(head, []byte{0}) == len(head)
}

// CheckRoutingKey refuses a gateway_routing write (ErrLegacyRoutingKey) while the table's
// primary key is not (scope, session_key), as PRAGMA table_info numbers its key columns. No
// table, nothing to refuse.
func (db *DB) CheckRoutingKey(ctx context.Context) error {
	if !db.schema.HasGatewayRouting {
		return nil
	}
	pk, err := db.primaryKey(ctx, "gateway_routing")
	if err != nil {
		return err
	}
	if slices.Equal(pk, legacyKeys[0].pk) {
		return nil
	}
	key := "none"
	if len(pk) > 0 {
		key = "(" + strings.Join(pk, ", ") + ")"
	}
	return fmt.Errorf("gateway_routing's primary key is %s, not (scope, session_key): start the gateway once (it rebuilds the table with the new key on open), stop it, and run this again: %w",
		key, ErrLegacyRoutingKey)
}

// CheckMessageWrites refuses a write that inserts, updates or deletes messages rows
// (ErrMessageTriggers) while a trigger on messages feeds a virtual table this SQLite cannot
// open: the r0817 CJK index messages_fts_cjk, whose cjk_unicode61 tokenizer lives in a
// loadable extension sessionctl does not load. Each virtual table a messages trigger names is
// opened with an empty SELECT to find out; without such triggers (none, or the runtime dropped
// them and set fts_cjk_stale) messages writes are fine.
func (db *DB) CheckMessageWrites(ctx context.Context) error {
	triggers, err := queryStrings(ctx, db.sql, `SELECT name || char(10) || sql FROM sqlite_master
		WHERE type = 'trigger' AND tbl_name = 'messages' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		return classify("read the triggers on messages", err, false)
	}
	if len(triggers) == 0 {
		return nil
	}
	vtabs, err := queryStrings(ctx, db.sql, `SELECT name FROM sqlite_master
		WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`)
	if err != nil {
		return classify("read the virtual tables", err, false)
	}
	fts5, err := queryStrings(ctx, db.sql, `SELECT name FROM sqlite_master
		WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING%fts5%' ORDER BY name`)
	if err != nil {
		return classify("read the virtual tables", err, false)
	}
	for _, t := range triggers {
		name, body, _ := strings.Cut(t, "\n")
		for _, vt := range vtabs {
			if !strings.Contains(strings.ToLower(body), strings.ToLower(vt)) {
				continue
			}
			// FTS5 loads its tokenizer only when it first tokenizes: a MATCH does, a plain
			// read of the index does not.
			probe := "SELECT 1 FROM " + quoteIdent(vt) + " LIMIT 0"
			if slices.Contains(fts5, vt) {
				probe = "SELECT 1 FROM " + quoteIdent(vt) + " WHERE " + quoteIdent(vt) + " MATCH 'sessionctl' LIMIT 1"
			}
			if _, err := queryStrings(ctx, db.sql, probe); err != nil {
				return fmt.Errorf("trigger %s on messages writes %s, which this sessionctl cannot open (%v; the CJK index needs the runtime's libfts5_cjk.so): refusing an operation that changes messages rows; the runtime does it, or drops the CJK triggers when it cannot load the tokenizer: %w",
					name, vt, err, ErrMessageTriggers)
			}
		}
	}
	return nil
}

// CheckSessionDeletes refuses deleting sessions rows when a foreign-key action (ON DELETE
// CASCADE, SET NULL or SET DEFAULT, followed from table to table) would change messages rows
// and CheckMessageWrites refuses those. In every runtime schema messages.session_id references
// sessions with no action (the delete is refused while messages name the row, and a ghost has
// none), so deleting sessions never reaches the messages triggers there.
func (db *DB) CheckSessionDeletes(ctx context.Context) error {
	reached, err := db.actionReach(ctx, "sessions")
	if err != nil {
		return err
	}
	if !reached["messages"] {
		return nil
	}
	return db.CheckMessageWrites(ctx)
}

// actionReach returns the tables whose rows the ON DELETE actions of deleting from table
// change, following them through every table they reach.
func (db *DB) actionReach(ctx context.Context, table string) (map[string]bool, error) {
	edges, err := queryStrings(ctx, db.sql, `SELECT m.name || char(10) || f."table" FROM sqlite_master m,
		pragma_foreign_key_list(m.name) f
		WHERE m.type = 'table' AND upper(f.on_delete) IN ('CASCADE', 'SET NULL', 'SET DEFAULT')`)
	if err != nil {
		return nil, classify("read foreign keys", err, false)
	}
	children := map[string][]string{}
	for _, e := range edges {
		child, parent, _ := strings.Cut(e, "\n")
		children[strings.ToLower(parent)] = append(children[strings.ToLower(parent)], strings.ToLower(child))
	}
	reached := map[string]bool{}
	todo := []string{strings.ToLower(table)}
	for len(todo) > 0 {
		t := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, c := range children[t] {
			if !reached[c] {
				reached[c] = true
				todo = append(todo, c)
			}
		}
	}
	return reached, nil
}
