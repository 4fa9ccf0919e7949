package sessionsjson

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestZZProbe(t *testing.T) {
	path := os.Getenv("PROBE_FILE")
	if path == "" {
		t.Skip()
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st := time.Now()
	d, err := Decode(data, RulesFor(GenR0715))
	el := time.Since(st)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("file %.1f MB, entries %d, decode %v, live heap delta %.1f MB (HeapAlloc %.1f MB)", float64(len(data))/1e6, len(d.Entries()), el, float64(m1.HeapAlloc-m0.HeapAlloc)/1e6, float64(m1.HeapAlloc)/1e6)
	runtime.KeepAlive(d)
}
