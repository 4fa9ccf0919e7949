package statedb

import (
	"testing"
	"time"
)

// TestWaiterGap: the gap is the sleep of SQLite's default busy handler a writer is in after
// waiting so long: 1 ms at first, 25 ms around 100 ms, 50 ms from 128 ms, 100 ms from 228 ms.
func TestWaiterGap(t *testing.T) {
	for _, c := range []struct{ waited, want time.Duration }{
		{0, 1}, {2, 2}, {40, 20}, {100, 25}, {127, 25}, {128, 50}, {227, 50}, {228, 100}, {5000, 100},
	} {
		if got := WaiterGap(c.waited * time.Millisecond); got != c.want*time.Millisecond {
			t.Errorf("WaiterGap(%d ms) = %v, want %d ms", c.waited, got, c.want)
		}
	}
}
