package statedb

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
)

// journalMagic starts the header of a rollback journal that holds a transaction's
// before-images (SQLite's file format, "The Rollback Journal").
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// hotJournal reports whether path's rollback journal holds a transaction: it exists and
// starts with the journal header's magic (a finished transaction deletes it, truncates it or
// zeroes its header, by journal mode).
func hotJournal(path string) bool {
	head, err := readHead(path+"-journal", len(journalMagic))
	return err == nil && bytes.Equal(head, journalMagic)
}

// settle is called after a write on q failed part-way: a rollback-journal database may then
// hold a hot journal (state.db partly rewritten). A read through q makes SQLite roll it back,
// restoring state.db's bytes; if the journal is still there after that, the failed write
// changed state.db and settle returns ErrInterrupted. A WAL database has nothing to settle:
// a failed commit leaves frames no reader applies.
func settle(ctx context.Context, q *sql.DB, path string) error {
	if !hotJournal(path) {
		return nil
	}
	var n int
	_ = q.QueryRowContext(context.WithoutCancel(ctx), "SELECT count(*) FROM sqlite_master").Scan(&n)
	if hotJournal(path) {
		return ErrInterrupted
	}
	return nil
}

// interruptedOpen is the error of a read-only open that SQLite refused because state.db holds
// a hot journal (only a read-write connection may roll it back): ErrInterrupted, and
// ErrCorrupt to the callers that branch on a database they cannot read.
type interruptedOpen struct{}

func (interruptedOpen) Error() string {
	return ErrInterrupted.Error() + "; until then a read-only open cannot read it"
}

// Is reports ErrInterrupted and ErrCorrupt.
func (interruptedOpen) Is(target error) bool { return target == ErrInterrupted || target == ErrCorrupt }

// Recover rolls back the transaction a failed write left in path's hot rollback journal
// (ErrInterrupted), as SQLite does at any read-write open that reads: the gateway's start
// would do the same. It reports whether it did. It does nothing when there is no hot journal,
// while another process holds the database's write lock (a transaction under way, not one
// left behind: SQLite would not roll it back either), when the schema the file holds (read
// with the journal ignored) is one sessionctl does not write, or when the runtime's write
// guards refuse (CheckWriteSafety). A journal still there afterwards (the fault that stopped
// the write stops its rollback) is ErrInterrupted.
func Recover(ctx context.Context, path string) (bool, error) {
	if !CanRecover(ctx, path) {
		return false, nil
	}
	db, err := OpenWrite(ctx, path)
	if err != nil {
		return false, err
	}
	if err := db.Close(); err != nil {
		return false, err
	}
	if hotJournal(path) {
		return false, ErrInterrupted
	}
	return true, nil
}

// CanRecover reports whether Recover would roll a hot journal of path back: there is one, no
// other process is writing, and sessionctl may write the file. It writes nothing.
func CanRecover(ctx context.Context, path string) bool {
	return hotJournal(path) && !writeLocked(path, 0) && mayRecover(ctx, path)
}

// mayRecover reports whether sessionctl may write the database at path: its schema, read
// as the main file holds it (immutable: the hot journal ignored), is one it writes, and the
// runtime's write guards allow a write.
func mayRecover(ctx context.Context, path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil || CheckWriteSafety(abs) != nil {
		return false
	}
	q, err := sql.Open("sqlite", dsn(abs, false, true))
	if err != nil {
		return false
	}
	defer q.Close()
	s, err := inspect(ctx, q)
	return err == nil && s.Known && !s.Intermediate
}
