// Package statedb reads and repairs the Hermes Agent runtime's SQLite state.db the way the
// Python runtime does: read-only inspection, session reads, compression tips, gateway routing
// rows, and the runtime's two latched repairs (finalize orphaned compression continuations,
// prune empty TUI ghosts), each with before/after row images that RestoreRows can undo.
//
// The package never creates a database (except the copies Snapshot and VacuumInto write),
// never changes its journal mode and never runs schema migrations; it VACUUMs only as the
// runtime's own vacuum() does, for compact (Vacuum).
package statedb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// sqliteHeader is the magic string every SQLite 3 database file starts with.
const sqliteHeader = "SQLite format 3\x00"

// Busy timeouts in milliseconds: 5 s for readers (S30 read pool), 1 s for the writer (runtime).
const (
	readBusyTimeoutMS  = 5000
	writeBusyTimeoutMS = 1000
)

// DB is an open state.db. It holds a single connection; it is safe for use by one goroutine
// at a time per operation, like database/sql with one connection.
type DB struct {
	sql      *sql.DB
	path     string
	writable bool
	schema   Schema
	closed   sync.Once
	stmts    statements
}

// OpenReadOnly opens path read-only (mode=ro) and inspects its schema. A missing file yields
// ErrNotFound and is never created; a directory, an empty file, a file without the SQLite
// header, an unreadable database or one whose schema_version holds NULL yields ErrCorrupt.
// Without a schema_version row the version is read from the layout (Schema.VersionMissing).
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, false)
}

// OpenWrite opens path read-write (mode=rw, never creating it) with foreign keys on, a 1 s
// busy timeout and BEGIN IMMEDIATE transactions, and inspects its schema. It never changes
// the journal mode. Errors are classified as for OpenReadOnly.
func OpenWrite(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, true)
}

func open(ctx context.Context, path string, write bool) (db *DB, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("state.db %s: %w", path, err)
	}
	first := connections.add(abs)
	defer func() {
		if err != nil {
			connections.done(abs)
		}
	}()
	if err := checkFirst(abs, first); err != nil {
		return nil, fmt.Errorf("state.db %s: %w", path, err)
	}
	if err := checkSidecars(abs); err != nil {
		return nil, fmt.Errorf("state.db %s: %w", path, err)
	}
	immutable := !write && first && idleWAL(abs)
	sqldb, err := sql.Open("sqlite", dsn(abs, write, immutable))
	if err != nil {
		return nil, fmt.Errorf("open state.db %s: %w", path, err)
	}
	sqldb.SetMaxOpenConns(1)
	db = &DB{sql: sqldb, path: abs, writable: write}
	// The runtime's open waits out a busy database (8da8a7887); so does a read here: a writer
	// spilling its cache holds the file for a while.
	var slept time.Duration
	err = patiently(ctx, func() (err error) {
		db.schema, err = inspect(ctx, sqldb)
		return err
	}, &slept)
	if err != nil {
		_ = sqldb.Close()
		if !write && hotJournal(abs) && !writeLocked(abs, 1) { // a writer under way is busy, not interrupted
			err = interruptedOpen{}
		}
		return nil, fmt.Errorf("open state.db %s: %w", path, err)
	}
	if immutable {
		db.schema.JournalMode = "wal" // an immutable open reports "delete"; the header says WAL
	}
	return db, nil
}

// checkFile verifies, without any SQLite connection, that path is a non-empty regular file
// starting with the SQLite header. A file whose header is all NUL is reported as zeroed
// (ErrZeroed, which is also ErrCorrupt).
func checkFile(path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no such file: %w", ErrNotFound)
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("not a regular file: %w", ErrCorrupt)
	}
	if st.Size() == 0 {
		return fmt.Errorf("empty file: %w", ErrCorrupt)
	}
	head, err := readHead(path, zeroedProbeBytes)
	if err != nil {
		return err
	}
	if zeroed(head) {
		return fmt.Errorf("%w: its first %d bytes are NUL (the runtime moves it aside as state.db.zeroed-<time>-<pid>.bak and starts a new database on its next open; sessionctl leaves it alone): %w",
			ErrZeroed, len(head), ErrCorrupt)
	}
	if !bytes.HasPrefix(head, []byte(sqliteHeader)) {
		return fmt.Errorf("missing SQLite header: %w", ErrCorrupt)
	}
	return nil
}

// checkSidecars refuses a state.db whose rollback journal, WAL or shared-memory file exists
// as anything but a regular file (not followed: a symbolic link is refused too): SQLite opens
// them without a second look, and a named pipe there would hang the open for good.
func checkSidecars(path string) error {
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		fi, err := os.Lstat(path + suffix)
		if err == nil && !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is %s: %w", filepath.Base(path+suffix), sessionsjson.FileKind(fi.Mode()), sessionsjson.ErrNotRegular)
		}
	}
	return nil
}

// readHead returns up to n leading bytes of path. It runs before any SQLite connection to the
// file exists, so closing the descriptor cannot drop SQLite's POSIX locks.
func readHead(path string, n int) ([]byte, error) {
	f, err := sessionsjson.OpenRegularFile(path) // never blocks on a named pipe
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	got, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:got], nil
}

// idleWAL reports a WAL-mode database that no process has open: its header says WAL and
// neither state.db-wal nor state.db-shm exists. A read-only open of such a file would create
// both sidecars (and leave them behind), so reads use immutable=1 instead: nothing is
// created, and nothing is writing the file at that moment.
func idleWAL(abs string) bool {
	head, err := readHead(abs, 20)
	if err != nil || len(head) < 20 || head[18] != 2 {
		return false
	}
	for _, sidecar := range []string{abs + "-wal", abs + "-shm"} {
		if _, err := os.Lstat(sidecar); !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}

// dsn builds a file: URI so that SQLite honours mode=ro/rw (a plain path would be created).
// immutable asks SQLite to skip locking and change detection (see idleWAL). Writers keep
// temporary data (the statement journal of a multi-row DELETE under foreign keys, sorts) in
// memory: deleting 500 sessions journals about 8 MB of index pages there, which a temporary
// file in /var/tmp would write (and the kernel zero) page by page while the lock is held.
func dsn(abs string, write, immutable bool) string {
	q := url.Values{}
	if immutable {
		q.Set("immutable", "1")
	}
	if write {
		q.Set("mode", "rw")
		q.Set("_txlock", "immediate")
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", writeBusyTimeoutMS))
		q.Add("_pragma", "foreign_keys(1)")
		q.Add("_pragma", "temp_store(2)")
	} else {
		q.Set("mode", "ro")
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", readBusyTimeoutMS))
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
}

// Close closes the connection.
func (db *DB) Close() error {
	db.stmts.close()
	err := db.sql.Close()
	db.closed.Do(func() { connections.done(db.path) }) // once: a second Close is a no-op
	return err
}

// connections counts this process's open connections to each database file. POSIX locks
// belong to the process and the file, not to a descriptor: closing any descriptor of a file
// drops every lock the process holds on it, SQLite's included. A connection that lost its
// SHARED lock lets another process's last close checkpoint and unlink the WAL under it, and
// this process then commits into a deleted file (runtime-v26.md §4.6; found by a helper's
// concurrency audit: writes reported applied were lost, and state.db was left corrupt). So
// state.db's own bytes are read (its header checked, checkFile, idleWAL) only while no
// connection of this process has it open.
var connections = openCounts{n: map[string]int{}}

type openCounts struct {
	mu sync.Mutex
	n  map[string]int
}

// add counts a connection to path about to open and reports whether it is the only one.
func (c *openCounts) add(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[path]++
	return c.n[path] == 1
}

// count is how many connections to path this process counts.
func (c *openCounts) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[path]
}

// done counts a connection to path closed (or never opened).
func (c *openCounts) done(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[path]--; c.n[path] <= 0 {
		delete(c.n, path)
	}
}

// checkFirst runs checkFile on path for the first connection to it; a later one would drop
// the locks of those open (connections), and the file was checked when the first opened.
func checkFirst(path string, first bool) error {
	if !first {
		return nil
	}
	return checkFile(path)
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string {
	return db.path
}

// Schema returns what Inspect found when the database was opened.
func (db *DB) Schema() Schema {
	return db.schema
}
