package statedb

import (
	"context"
	"errors"
	"testing"
)

// TestEachRoutingEntry streams the rows RoutingRows returns, in the same order, and stops at
// the callback's error.
func TestEachRoutingEntry(t *testing.T) {
	db := openRO(t, copyDB(t, "r0715-c2a3b9ce5"))
	ctx := context.Background()
	const scope = "/home/hermes/fixtures/r0715-c2a3b9ce5/home/sessions"
	want, err := db.RoutingRows(ctx, scope)
	if err != nil || len(want) < 2 {
		t.Fatalf("routing rows: %d, %v", len(want), err)
	}
	i := 0
	err = db.EachRoutingEntry(ctx, scope, func(key string, entryJSON []byte) error {
		if i >= len(want) || key != want[i].Key || string(entryJSON) != want[i].EntryJSON {
			t.Errorf("row %d: %q %s", i, key, entryJSON)
		}
		i++
		return nil
	})
	if err != nil || i != len(want) {
		t.Errorf("streamed %d of %d rows: %v", i, len(want), err)
	}
	stop := errors.New("stop")
	calls := 0
	err = db.EachRoutingEntry(ctx, scope, func(string, []byte) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("stop: %d calls, %v", calls, err)
	}
	old := openRO(t, copyDB(t, "r0703-52d0d671e"))
	if err := old.EachRoutingEntry(ctx, scope, func(string, []byte) error { return stop }); err != nil {
		t.Errorf("v17 (no gateway_routing): %v", err)
	}
}
