package commands

import (
	"bytes"
	"math"
	"testing"
	"unicode/utf8"
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

// FuzzReadmeText: never panics; whatever it returns is valid UTF-8 (invalid bytes become
// U+FFFD, so it can be longer than its input) and came from a JSON object.
func FuzzReadmeText(f *testing.F) {
	for _, s := range []string{`{"_README": "x", "k": {}}`, `{"k": 1}`, `[]`, `{"_README": 3}`, ``, `{"_README"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := readmeText(data)
		if got != "" && (!utf8.ValidString(got) || !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))) {
			t.Fatalf("readmeText(%q) = %q", data, got)
		}
	})
}

func TestWALResetBug(t *testing.T) {
	tests := []struct {
		version string
		bug     bool
	}{
		{"3.6.23", false}, {"3.7.0", true}, {"3.40.1", true}, {"3.44.6", false}, {"3.50.7", false},
		{"3.51.2", true}, {"3.51.3", false}, {"3.54.1", false}, {"4.0.0", false}, {"junk", false},
	}
	for _, tt := range tests {
		if got := walResetBug(tt.version); got != tt.bug {
			t.Errorf("walResetBug(%q) = %v, want %v", tt.version, got, tt.bug)
		}
	}
}
