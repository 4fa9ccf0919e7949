package statedb

import "time"

// busyDelays and busyTotals are SQLite's default busy handler (sqliteDefaultBusyCallback,
// main.c, built with HAVE_USLEEP as the runtime's Python sqlite3 and modernc.org/sqlite are):
// a connection that finds the database locked sleeps delays[i] ms before its i-th retry,
// totals[i] ms having passed, and 100 ms between every retry after the table.
var (
	busyDelays = [...]time.Duration{1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100}
	busyTotals = [...]time.Duration{0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228}
)

// WaiterGap is the longest a writer that has waited for the lock for waited (in its busy
// timeout) sleeps before it tries again: a transaction that ends and leaves the lock free for
// at least this long lets such a writer in before it starts the next one.
func WaiterGap(waited time.Duration) time.Duration {
	ms := waited / time.Millisecond
	for i, total := range busyTotals {
		if ms < total+busyDelays[i] {
			return busyDelays[i] * time.Millisecond
		}
	}
	return busyDelays[len(busyDelays)-1] * time.Millisecond
}
