package repair

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestSizerFollowsMeasuredCost: the first batch takes firstBatchUnits at the default target
// (in proportion at another); later ones as many units as the target holds at the cost the
// last batch measured, at most batchGrowth times its units, at least one row, each candidate
// weighing what weight says; a fixed size is kept whatever the cost.
func TestSizerFollowsMeasuredCost(t *testing.T) {
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = string(rune('a'+i%26)) + string(rune(i))
	}
	s := Options{}.sizer(nil)
	if n := s.size(ids); n != firstBatchUnits {
		t.Fatalf("first batch %d rows, want %d", n, firstBatchUnits)
	}
	s.measured(10 * time.Millisecond) // 0.1 ms a row: the target holds 1,000, growth allows 400
	if n := s.size(ids); n != batchGrowth*firstBatchUnits {
		t.Fatalf("second batch %d rows, want %d (growth bound)", n, batchGrowth*firstBatchUnits)
	}
	s.measured(200 * time.Millisecond) // 0.5 ms a row: 200 rows hold the target
	if n := s.size(ids); n != 200 {
		t.Fatalf("third batch %d rows, want 200", n)
	}
	s.measured(100 * time.Second) // one row costs more than the target: still one row a batch
	if n := s.size(ids); n != 1 {
		t.Fatalf("fourth batch %d rows, want 1", n)
	}
	if s.largest != 400 {
		t.Errorf("largest %d, want 400", s.largest)
	}

	heavy := Options{BatchTarget: 50 * time.Millisecond}.sizer(func(id string) float64 {
		if id == ids[1] {
			return 40
		}
		return 1
	})
	if n := heavy.size(ids); n != 11 { // 50 units at half the default target: 1 + 40 + 9
		t.Fatalf("weighted first batch %d rows, want 11", n)
	}
	fixed := Options{BatchRows: 7}.sizer(nil)
	fixed.measured(time.Hour)
	if n := fixed.size(ids); n != 7 {
		t.Errorf("fixed size %d, want 7", n)
	}
	if n := fixed.size(ids[:3]); n != 3 {
		t.Errorf("fixed size of 3 left: %d", n)
	}
}

// TestYieldLetsAWaitingWriterIn: a job of write transactions of 150 ms each, one after the
// other for 1.5 s with yield between them, beside a writer that appends every 5 ms with the
// runtime's busy timeout (1 s, SQLite's busy handler): every append lands, none waiting
// near the timeout. Without the yield the appender waits out its timeout (SQLITE_BUSY).
func TestYieldLetsAWaitingWriterIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(1000)&_pragma=journal_mode(wal)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	job, appender := open(), open()
	if _, err := job.Exec(`CREATE TABLE messages (id INTEGER PRIMARY KEY, content TEXT)`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		n       int
		longest time.Duration
		err     error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		for ctx.Err() == nil {
			start := time.Now()
			tx, err := appender.Begin()
			if err == nil {
				_, err = tx.Exec(`INSERT INTO messages (content) VALUES ('append')`)
				if err == nil {
					err = tx.Commit()
				} else {
					_ = tx.Rollback()
				}
			}
			if err != nil {
				r.err = err
				break
			}
			r.n, r.longest = r.n+1, max(r.longest, time.Since(start))
			time.Sleep(5 * time.Millisecond)
		}
		done <- r
	}()
	const hold = 150 * time.Millisecond
	for range 10 {
		tx, err := job.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO messages (content) VALUES ('batch')`); err != nil {
			t.Fatal(err)
		}
		time.Sleep(hold)
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := yield(ctx, hold); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatalf("the appender failed after %d appends: %v", r.n, r.err)
	}
	if r.n < 10 || r.longest > 900*time.Millisecond {
		t.Errorf("%d appends, the longest waited %v", r.n, r.longest)
	}
}
