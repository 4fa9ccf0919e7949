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
