package age

import (
	"errors"
	"math"
	"strconv"
	"testing"
)

// TestParse: ages with units, alone or several; bare numbers, signs, unknown units and
// numbers Go parses but the flag does not (Inf, NaN, hex, underscores) fail.
func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{"1h", 3600, false},
		{"90m", 5400, false},
		{"90s", 90, false},
		{"7d", 604800, false},
		{"0.5d", 43200, false},
		{".5h", 1800, false},
		{"2w", 1209600, false},
		{"24h", 86400, false},
		{"1h30m", 5400, false},
		{"0s", 0, false},
		{"3600", 0, true}, // a bare number: seconds or days would be a guess
		{"7", 0, true},
		{"0.5", 0, true},
		{"", 0, true},
		{"-1h", 0, true},
		{"-2d", 0, true},
		{"soon", 0, true},
		{"d", 0, true},
		{"1y", 0, true},
		{"90ms", 0, true},
		{"1h 30m", 0, true},
		{"1..5d", 0, true},
		{"Infd", 0, true},
		{"NaNh", 0, true},
		{"1e400d", 0, true},
		{"0x10h", 0, true},
		{"1_000s", 0, true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// FuzzParse: any input either fails or yields a finite, non-negative age, and a bare
// number always fails with ErrNoUnit.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1h", "7d", "90m", "2w", "0.5d", "1h30m", "3600", "-1", "1e400d", "NaNd", "Infd", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		age, err := Parse(s)
		if err == nil && (age < 0 || math.IsNaN(age) || math.IsInf(age, 0)) {
			t.Fatalf("Parse(%q) = %v", s, age)
		}
		if n, perr := strconv.ParseFloat(s, 64); perr == nil && n >= 0 && numberPrefix(s) == len(s) && !errors.Is(err, ErrNoUnit) {
			t.Fatalf("Parse(%q) = %v, %v; want ErrNoUnit", s, age, err)
		}
	})
}
