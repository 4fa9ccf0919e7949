package statedb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"

	"github.com/sessionctl/sessionctl/sessionsjson"
	sqlite "modernc.org/sqlite"
)

// Snapshot writes a consistent copy of the database to dst, a new file (mode 0600, synced),
// and returns its size; what it wrote is read once more into also (a manifest's hash). The
// copy is made with SQLite's online backup API in one step: one read transaction, so the copy
// is the database as one commit left it, WAL content included, in the database's own journal
// mode (the header is copied). The backup API writes the copy without syncing it (nothing
// reads it before Snapshot returns, and a copy that could not be finished is removed);
// Snapshot then syncs it while it reads it into also: on a 1.2 GB home the backup's own syncs
// followed by the read took 2.85 s, the two at once 2.2 s (docs/performance.md). dst must not
// exist.
func (db *DB) Snapshot(ctx context.Context, dst string, also io.Writer) (int64, error) {
	out, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600) // empty: a database of no pages
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return 0, fmt.Errorf("%s exists: %w", dst, fs.ErrExist)
		}
		return 0, err
	}
	err = db.backupTo(ctx, dst)
	var n int64
	if err == nil {
		n, err = syncReading(out, also)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(dst)
		return 0, fmt.Errorf("backup to %s: %w", dst, err)
	}
	return n, nil
}

// backupTo copies the database into the existing empty database file dst with the backup
// API, in one step, over a destination connection that does not sync.
func (db *DB) backupTo(ctx context.Context, dst string) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		b, ok := dc.(interface {
			NewBackup(string) (*sqlite.Backup, error)
		})
		if !ok {
			return errors.New("the SQLite driver has no backup API")
		}
		q := url.Values{}
		q.Set("mode", "rw")
		q.Add("_pragma", "synchronous(OFF)")
		bk, err := b.NewBackup("file:" + (&url.URL{Path: dst}).EscapedPath() + "?" + q.Encode())
		if err != nil {
			return err
		}
		for more := true; more && err == nil; {
			more, err = bk.Step(-1)
		}
		if ferr := bk.Finish(); err == nil {
			err = ferr
		}
		return err
	})
}

// syncReading syncs f while it reads it from the start into w, and returns its size.
func syncReading(f *os.File, w io.Writer) (int64, error) {
	synced := make(chan error, 1)
	go func() { synced <- sessionsjson.Fsync(f) }()
	n, err := io.Copy(w, io.NewSectionReader(f, 0, 1<<62))
	if serr := <-synced; err == nil {
		err = serr
	}
	return n, err
}
