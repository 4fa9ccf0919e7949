package commands

import (
	"math"
	"testing"
)

func TestParseAge(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{"1h", 3600, false},
		{"90m", 5400, false},
		{"7d", 604800, false},
		{"0.5d", 43200, false},
		{"3600", 3600, false},
		{"24h", 86400, false},
		{"", 0, true},
		{"-1h", 0, true},
		{"-2d", 0, true},
		{"soon", 0, true},
		{"d", 0, true},
	}
	for _, tt := range tests {
		got, err := parseAge(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("parseAge(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// FuzzParseAge: any input either fails or yields a finite, non-negative age.
func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"1h", "7d", "90m", "3600", "-1", "1e400d", "NaNd", "Infd", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		age, err := parseAge(s)
		if err == nil && (age < 0 || math.IsNaN(age) || math.IsInf(age, 0)) {
			t.Fatalf("parseAge(%q) = %v", s, age)
		}
	})
}
