package sessionsjson

import (
	"math"
	"testing"
)

// FuzzParseNow: --now input either fails or gives a finite clock whose float seconds agree
// with its microseconds to within one microsecond.
func FuzzParseNow(f *testing.F) {
	for _, s := range []string{"2026-07-16T09:30:00.250000Z", "1784194200.250000", "1784194200", "2026-07-16T09:30:00+02:00",
		"-1", "1e20", "NaN", "2026-07-16", "2026-13-01T00:00:00Z", "0.0000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseNow(s)
		if err != nil {
			return
		}
		if math.IsNaN(c.Unix) || math.IsInf(c.Unix, 0) {
			t.Fatalf("ParseNow(%q) = %v", s, c.Unix)
		}
		if diff := math.Abs(c.Unix*1e6 - float64(c.UnixMicros)); diff > 1+math.Abs(c.Unix)*1e-9 {
			t.Fatalf("ParseNow(%q): Unix %v and UnixMicros %d disagree", s, c.Unix, c.UnixMicros)
		}
	})
}
