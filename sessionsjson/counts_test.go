package sessionsjson

import (
	"bytes"
	"errors"
	"testing"
)

func TestCountsFixtures(t *testing.T) {
	for _, f := range fixtures(t) {
		data := readFixture(t, f, ".restart_failure_counts")
		c, err := DecodeCounts(data)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.Encode(), data) {
			t.Errorf("%s: Encode = %s", f.name, c.Encode())
		}
		if n, ok := c.Int("agent:main:telegram:group:-1007032299350:762131314"); !ok || n != 5 || c.Len() != 4 {
			t.Errorf("%s: Int = %d %v, Len = %d", f.name, n, ok, c.Len())
		}
	}
}

func TestCounts(t *testing.T) {
	c, err := DecodeCounts([]byte(`{"a": 1, "b": "3", "c": 3.5, "d": true, "a": 4, "é": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	ints := []struct {
		key string
		n   int64
		ok  bool
	}{{"a", 4, true}, {"b", 0, false}, {"c", 0, false}, {"d", 0, false}, {"zz", 0, false}}
	for _, tt := range ints {
		if n, ok := c.Int(tt.key); n != tt.n || ok != tt.ok {
			t.Errorf("Int(%q) = %d %v", tt.key, n, ok)
		}
	}
	if got, want := string(c.Without("b", "c").Encode()), `{"a": 4, "d": true, "\u00e9": 2}`; got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
	if got := string(c.Without(c.Keys...).Encode()); got != "{}" {
		t.Errorf("empty Encode = %s", got)
	}
	for _, bad := range []string{``, `[]`, `3`, `{"a": }`, "\xEF\xBB\xBF{}"} {
		if _, err := DecodeCounts([]byte(bad)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeCounts(%q) = %v", bad, err)
		}
	}
}

func FuzzDecodeCounts(f *testing.F) {
	f.Add([]byte(`{"agent:main:telegram:dm:1": 4, "b": 1}`))
	f.Add([]byte(`{"a": "3", "a": 2.5}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCounts(data)
		if err != nil {
			return
		}
		again, err := DecodeCounts(c.Encode())
		if err != nil || !bytes.Equal(again.Encode(), c.Encode()) || again.Len() != c.Len() {
			t.Fatalf("re-decode of %s: %v", c.Encode(), err)
		}
	})
}
