package repair

import (
	"context"
	"database/sql"
	"math"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestSizerFollowsMeasuredCost: the first batch takes firstBatchUnits at the default target
// (in proportion at another); later ones as many units as the target holds by the line
// (fixed cost plus cost per unit) fitted through the batches measured, at most batchGrowth
// times the last batch's units, at least one row, each candidate weighing what weight says;
// where the fixed cost dominates a batch takes as much again; a fixed size is kept whatever
// the cost.
func TestSizerFollowsMeasuredCost(t *testing.T) {
	ids := make([]string, 10000)
	for i := range ids {
		ids[i] = string(rune('a'+i%26)) + string(rune(i))
	}
	ms := time.Millisecond
	s := Options{}.sizer(nil)
	step := func(held time.Duration, want int, why string) {
		t.Helper()
		s.measured(held)
		if n := s.size(ids); n < want-1 || n > want { // the fit's rounding may cost a row
			t.Fatalf("%s: %d rows, want %d", why, n, want)
		}
	}
	if n := s.size(ids); n != firstBatchUnits {
		t.Fatalf("first batch %d rows, want %d", n, firstBatchUnits)
	}
	step(20*ms, 4*firstBatchUnits, "one batch measured, 0.2 ms a row: the growth bound")
	step(50*ms, 900, "10 ms + 0.1 ms a row: (100 - 10) / 0.1")

	s = Options{}.sizer(nil)
	s.size(ids)
	step(80*ms, 125, "one batch measured: all of its cost taken as cost per row")
	step(81250*time.Microsecond, 500, "growth bound")
	step(100*ms, 1500, "75 ms fixed + 0.05 ms a row: the fixed cost dominates, 75 ms more")

	s = Options{}.sizer(nil)
	s.size(ids)
	step(100*time.Second, 1, "one row costs more than the target")
	if s.largest != firstBatchUnits {
		t.Errorf("largest %d, want %d", s.largest, firstBatchUnits)
	}

	heavy := Options{BatchTarget: DefaultBatchTarget / 2}.sizer(func(id string) float64 {
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

// TestSizerAmortisesAFixedCost: on a disk where a batch costs 90 ms whatever its size plus
// 2 ms a unit (the fixed cost above half the target), the batches grow, after the first
// two, to the 45 units that fill 90 ms more (as much again as the fixed cost) and stay there,
// each held 180 ms, never more than maxAim by the fitted line. With the fixed cost noisy (30 ms
// plus an exponential delay of mean 60 ms: a disk other processes use) the batches still take
// 40 units or more on average (5 would fill the target alone), and hold, by the true cost,
// at most maxAim on average.
func TestSizerAmortisesAFixedCost(t *testing.T) {
	ids := make([]string, 100000)
	ms := float64(time.Millisecond)
	for _, noisy := range []bool{false, true} {
		rnd := rand.New(rand.NewSource(1))
		s := Options{}.sizer(nil)
		var units float64
		const batches, settled = 300, 3
		for i := range batches {
			n := s.size(ids)
			hold := 90*ms + 2*ms*float64(n)
			if noisy {
				hold = 30*ms + rnd.ExpFloat64()*60*ms + 2*ms*float64(n)
			}
			if i >= settled {
				units += float64(n)
				if !noisy && (n < 44 || n > 45) {
					t.Fatalf("batch %d: %d units, want 45", i, n)
				}
				if fixed, perUnit := s.fit(); fixed+perUnit*float64(n) > float64(maxAim) {
					t.Fatalf("noisy %v, batch %d: %d units, %.1f ms by the fitted line", noisy, i, n, (fixed+perUnit*float64(n))/ms)
				}
			}
			s.measured(time.Duration(hold))
		}
		mean := units / (batches - settled)
		if mean < 40 || 90*ms+2*ms*mean > float64(maxAim) {
			t.Errorf("noisy %v: batches of %.1f units on average, want 40 to 55", noisy, mean)
		}
		if fixed, perUnit := s.fit(); !noisy && (math.Abs(fixed-90*ms) > 0.01*ms || math.Abs(perUnit-2*ms) > 0.001*ms) {
			t.Errorf("fitted %.1f ms + %.2f ms a unit, want 90 + 2", fixed/ms, perUnit/ms)
		}
	}
}

// TestYieldLetsAWaitingWriterIn: a job of write transactions of 150 ms each, one after the
// other for 1.5 s with yield between them, beside a writer that appends every 5 ms with the
// runtime's busy timeout (1 s, SQLite's busy handler): every append lands, none waiting
// near the timeout. Without the yield the appender waits out its timeout (SQLITE_BUSY).
func TestYieldLetsAWaitingWriterIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(1000)&_txlock=immediate")
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
