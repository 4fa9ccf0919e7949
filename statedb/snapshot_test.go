package statedb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// TestSnapshot: a snapshot of a WAL database whose last commits are still in the WAL holds
// them, keeps the journal mode, is read whole into the hash, and is mode 0600; of a
// rollback-journal database, it is the file byte for byte but the header's counters.
func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	for _, gen := range []string{"r0715-c2a3b9ce5", "r0817-481156139"} {
		t.Run(gen, func(t *testing.T) {
			src := copyDB(t, gen)
			writer := rawDB(t, src)
			mustExec(t, writer, "PRAGMA wal_autocheckpoint=0")
			mustExec(t, writer, "UPDATE sessions SET title = 'after the snapshot''s commit' WHERE id = (SELECT min(id) FROM sessions)")
			db := openRO(t, src)
			dst := filepath.Join(t.TempDir(), "copy.db")
			sum := sha256.New()
			n, err := db.Snapshot(ctx, dst, sum)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(data)) != n || !bytes.Equal(sum.Sum(nil), sha256Of(data)) {
				t.Errorf("size %d and hash %x given, file of %d bytes with hash %x", n, sum.Sum(nil), len(data), sha256Of(data))
			}
			if fi, err := os.Stat(dst); runtime.GOOS != "windows" && (err != nil || fi.Mode().Perm() != 0o600) {
				t.Errorf("mode %v (%v), want 0600", fi.Mode(), err)
			}
			head, _ := os.ReadFile(src)
			if !bytes.Equal(data[18:20], head[18:20]) {
				t.Errorf("journal mode bytes %x, the database's %x", data[18:20], head[18:20])
			}
			if wal := src + "-wal"; head[18] == 2 {
				if fi, err := os.Stat(wal); err != nil || fi.Size() == 0 {
					t.Fatalf("the commit is not in the WAL (%v)", err)
				}
			} else if !sameBeyondCounters(data, head) {
				t.Error("a rollback-journal database's snapshot differs from its file beyond the header's counters")
			}
			var title string
			copied := rawDB(t, dst)
			if err := copied.QueryRow("SELECT title FROM sessions ORDER BY id LIMIT 1").Scan(&title); err != nil || title != "after the snapshot's commit" {
				t.Errorf("the copy's title %q (%v): the WAL's commit is missing", title, err)
			}
			var check string
			if err := copied.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
				t.Errorf("integrity_check of the copy: %q %v", check, err)
			}
		})
	}
}

// sameBeyondCounters reports whether two database images are the same but for the header
// fields the backup API sets for the copy: the change counter (offset 24), the schema cookie
// (40), version-valid-for (92) and the SQLite version (96).
func sameBeyondCounters(a, b []byte) bool {
	if len(a) != len(b) || len(a) < 100 {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	for _, off := range []int{24, 40, 92, 96} {
		copy(a[off:off+4], make([]byte, 4))
		copy(b[off:off+4], make([]byte, 4))
	}
	return bytes.Equal(a, b)
}

func sha256Of(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// TestSnapshotRefusesOrCleansUp: an existing dst is left alone (fs.ErrExist); a copy whose
// writes fail is removed.
func TestSnapshotRefusesOrCleansUp(t *testing.T) {
	ctx := context.Background()
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	dst := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(dst, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Snapshot(ctx, dst, &bytes.Buffer{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("existing dst: %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(dst); string(got) != "mine" {
		t.Errorf("existing dst changed: %q", got)
	}
	dir := t.TempDir()
	dst = filepath.Join(dir, "copy.db")
	if _, err := db.Snapshot(ctx, dst, &failingWriter{after: 64 << 10}); err == nil || !errors.Is(err, errWriteFails) {
		t.Errorf("failing write: %v", err)
	}
	assertEmptyDir(t, "after a failed copy", dir)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.Snapshot(cancelled, dst, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	assertEmptyDir(t, "after a cancelled copy", dir)
}

// assertEmptyDir fails unless dir holds nothing (no copy, no -journal).
func assertEmptyDir(t *testing.T, what, dir string) {
	t.Helper()
	if left, err := os.ReadDir(dir); err != nil || len(left) > 0 {
		t.Errorf("%s: %v left (%v)", what, left, err)
	}
}

var errWriteFails = errors.New("injected write failure")

// failingWriter accepts after bytes, then fails.
type failingWriter struct{ after int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after -= len(p); w.after < 0 {
		return 0, errWriteFails
	}
	return len(p), nil
}

// TestSnapshotWhileWritten: snapshots taken while another connection commits are each one
// commit's state (a counter row that every commit keeps equal to the row count).
func TestSnapshotWhileWritten(t *testing.T) {
	ctx := context.Background()
	src := copyDB(t, "r0715-c2a3b9ce5") // WAL
	w := rawDB(t, src)
	mustExec(t, w, "CREATE TABLE t (k INTEGER PRIMARY KEY, pad BLOB)")
	mustExec(t, w, "CREATE TABLE n (c INTEGER)")
	mustExec(t, w, "INSERT INTO n VALUES (0)")
	db := openRO(t, src)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Exec(`BEGIN; INSERT INTO t (pad) SELECT randomblob(3000) FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3);
				UPDATE n SET c = (SELECT count(*) FROM t); COMMIT`); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	seen := map[int]bool{}
	for i := range 6 {
		dst := filepath.Join(t.TempDir(), "copy.db")
		if _, err := db.Snapshot(ctx, dst, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		var rows, counter int
		copied := rawDB(t, dst)
		if err := copied.QueryRow("SELECT (SELECT count(*) FROM t), (SELECT c FROM n)").Scan(&rows, &counter); err != nil || rows != counter {
			t.Errorf("snapshot %d: %d rows, counter %d (%v)", i, rows, counter, err)
		}
		seen[counter] = true
		var check string
		if err := copied.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Errorf("snapshot %d: integrity_check %q %v", i, check, err)
		}
	}
	close(stop)
	wg.Wait()
	if len(seen) < 2 {
		t.Errorf("the snapshots saw %d states: the writer did not commit between them", len(seen))
	}
}

// TestHotJournal: a rollback journal that starts with the header's magic holds a transaction;
// none, an empty one or one whose header was zeroed (journal_mode PERSIST) does not.
func TestHotJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	for _, tt := range []struct {
		journal []byte // nil: no journal file
		hot     bool
	}{
		{nil, false},
		{[]byte{}, false},
		{make([]byte, 512), false},
		{append(append([]byte{}, journalMagic...), make([]byte, 504)...), true},
	} {
		_ = os.Remove(path + "-journal")
		if tt.journal != nil {
			if err := os.WriteFile(path+"-journal", tt.journal, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if got := hotJournal(path); got != tt.hot {
			t.Errorf("journal %d bytes (magic %v): hot %v, want %v", len(tt.journal), tt.hot, got, tt.hot)
		}
	}
}
