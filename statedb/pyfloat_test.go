package statedb

import (
	"math"
	"testing"
)

// TestPyFloat parses a text as Python's float() does.
func TestPyFloat(t *testing.T) {
	for s, want := range map[string]float64{"1784086200.25": 1784086200.25, " 1e3\n": 1000, "1_000.5": 1000.5,
		"-inf": math.Inf(-1), "Infinity": math.Inf(1), ".5": 0.5, "5.": 5} {
		if got, err := PyFloat(s); err != nil || got != want {
			t.Errorf("PyFloat(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0x10", "1__0", "_1", "abc", "1e"} {
		if got, err := PyFloat(s); err == nil {
			t.Errorf("PyFloat(%q) = %v, want an error", s, got)
		}
	}
	if f, err := PyFloat("nan"); err != nil || !math.IsNaN(f) {
		t.Errorf("PyFloat(nan) = %v, %v", f, err)
	}
}

// TestValuePyFloat: float() of a value as Python's sqlite3 returns it: numbers as they are,
// a TEXT or a BLOB parsed as float(str) / float(bytes) parse, NULL not at all.
func TestValuePyFloat(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want float64
		ok   bool
	}{{IntValue(7), 7, true}, {RealValue(1.5), 1.5, true}, {TextValue(" 2.5 "), 2.5, true}, {TextValue("recent"), 0, false},
		{BlobValue([]byte("3")), 3, true}, {BlobValue([]byte{0xff}), 0, false}, {NullValue(), 0, false}} {
		if got, ok := c.v.PyFloat(); ok != c.ok || got != c.want {
			t.Errorf("%s: PyFloat() = %v, %v; want %v, %v", c.v.Literal(), got, ok, c.want, c.ok)
		}
	}
}

// TestActiveAt: the recovered entry's updated_at is made as r0817's
// _create_entry_from_recovered_row makes it: float(last_activity_at) unless NULL, else
// float(started_at); a value float() or fromtimestamp() raises on falls back to started_at,
// and a started_at that does to the epoch.
func TestActiveAt(t *testing.T) {
	for _, c := range []struct {
		last, started any
		want          float64
	}{
		{nil, 1784000000.5, 1784000000.5},
		{1784100000.0, 1784000000.5, 1784100000},
		{int64(1784100000), 1784000000.5, 1784100000},
		{"recent", 1784000000.5, 1784000000.5},
		{" 1784100000.25 ", 1784000000.5, 1784100000.25},
		{"inf", 1784000000.5, 1784000000.5},
		{1e300, 1784000000.5, 1784000000.5},
		{[]byte("1784100000"), 1784000000.5, 1784100000},
		{"recent", "last week", 0},
		{nil, "1784000000", 1784000000},
	} {
		if got := activeAt(c.last, c.started); got != c.want {
			t.Errorf("activeAt(%v, %v) = %v, want %v", c.last, c.started, got, c.want)
		}
	}
}
