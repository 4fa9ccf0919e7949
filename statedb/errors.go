package statedb

import (
	"errors"
	"strings"

	"modernc.org/sqlite"
)

// Sentinel errors. Every error returned by this package that matches one of them wraps it, so
// callers test with errors.Is.
var (
	// ErrNotFound reports a missing state.db file or a session id with no row.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt reports a file that is not a readable Hermes state.db.
	ErrCorrupt = errors.New("corrupt or not a Hermes state.db")
	// ErrUnsupportedSchema reports a write refused because the schema is newer than this
	// package knows, or lacks a table or column the operation needs.
	ErrUnsupportedSchema = errors.New("unsupported schema")
	// ErrAmbiguous reports an id prefix that matches more than one session.
	ErrAmbiguous = errors.New("ambiguous session id prefix")
	// ErrConflict reports a restore whose rows no longer hold the expected values.
	ErrConflict = errors.New("rows changed since the change was recorded")
	// ErrBusy reports a write that could not take the database write lock after every retry.
	ErrBusy = errors.New("database stayed locked")
	// ErrReadOnly reports a write attempted through a handle opened with OpenReadOnly.
	ErrReadOnly = errors.New("database opened read-only")
	// ErrCommitted reports a failure after a write transaction committed: the change stands.
	ErrCommitted = errors.New("the change was committed")
	// ErrInterrupted reports a rollback-journal database left holding a hot journal by a write
	// that failed part-way (a COMMIT or VACUUM that could not finish writing state.db) and that
	// could not be rolled back at once: state.db's bytes changed, and SQLite restores them at the
	// next read-write open.
	ErrInterrupted = errors.New("state.db was left mid-transaction: its rollback journal (state.db-journal) is still there and SQLite rolls it back at the next read-write open (the gateway's start, the next sessionctl write, or `sqlite3 state.db 'PRAGMA schema_version'`)")
)

// SQLite primary result codes used for classification.
const (
	codeError   = 1
	codeBusy    = 5
	codeLocked  = 6
	codeCorrupt = 11
	codeIOErr   = 10
	codeFull    = 13
	codeNotADB  = 26
)

// sqliteCode returns the primary SQLite result code carried by err, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// isBusy reports whether err is an SQLite error the runtime retries: SQLITE_BUSY,
// SQLITE_LOCKED, or a message saying "locked" or "busy". Errors that do not come from SQLite
// are never retried.
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case codeBusy, codeLocked:
		return true
	}
	msg := strings.ToLower(se.Error())
	return strings.Contains(msg, "locked") || strings.Contains(msg, "busy")
}

// isCorrupt reports whether err says the file is damaged or not a database. SQLite's own
// words for that are "database disk image is malformed" and "file is not a database"; a
// value a function cannot read ("malformed JSON") is no damage to the file.
func isCorrupt(err error) bool {
	switch sqliteCode(err) {
	case codeCorrupt, codeNotADB:
		return true
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "disk image is malformed") || strings.Contains(msg, "not a database")
}

// isIOFault reports an I/O error or a full disk (SQLITE_IOERR, SQLITE_FULL): the file system
// failed the database, which says nothing about the file's content.
func isIOFault(err error) bool {
	switch sqliteCode(err) {
	case codeIOErr, codeFull:
		return true
	}
	return false
}

// raisesOnData reports an SQL error raised while evaluating a statement on the values it
// reads (SQLITE_ERROR, such as json_extract's "malformed JSON"): Python's sqlite3 raises
// OperationalError for it, and the file itself is sound.
func raisesOnData(err error) bool {
	return sqliteCode(err) == codeError && !isCorrupt(err)
}
