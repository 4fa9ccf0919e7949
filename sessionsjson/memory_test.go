package sessionsjson

import (
	"bytes"
	"runtime"
	"testing"
)

// TestDecodeLiveHeap checks that a decoded document stays compact: the file bytes plus an
// index and the eagerly decoded routing fields, not a copy of every field.
func TestDecodeLiveHeap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Exactly the file bytes (as os.ReadFile gives them), not a buffer with spare capacity.
	data := bytes.Clone(syntheticSessions(20000))
	d, err := Decode(data, RulesFor(GenR0715))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := len(d.Entries()); n != 20000 {
		t.Fatalf("entries = %d", n)
	}
	live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("file %.1f MB, live heap after Decode %.1f MB (%.2f× the file)",
		float64(len(data))/1e6, float64(live)/1e6, float64(live)/float64(len(data)))
	if limit := 2 * int64(len(data)); live > limit {
		t.Errorf("live heap after Decode = %d bytes, want <= %d (2× the %d-byte file)", live, limit, len(data))
	}
	runtime.KeepAlive(d)
	runtime.KeepAlive(data)
}
