// Package age reads and writes the durations of the command line: a number with a unit,
// s, m, h, d or w.
package age

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// units are the units of an age, in seconds.
var units = map[byte]float64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 7 * 86400}

// ErrNoUnit is Parse's error for a bare number: an age needs a unit.
var ErrNoUnit = errors.New("a duration needs a unit")

// Parse parses an age into seconds: a number with a unit, s, m, h, d or w ("90m", "7d",
// "0.5d", "2w"), or several such ("1h30m"). A bare number ("7") is refused with ErrNoUnit:
// seconds or days would both be a guess.
func Parse(s string) (float64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty: give a duration like 90m, 12h, 7d or 2w")
	}
	total := 0.0
	for rest := s; rest != ""; {
		n := numberPrefix(rest)
		if n == 0 {
			return 0, fmt.Errorf("%q is not a duration like 90m, 12h, 7d or 2w", s)
		}
		if n == len(rest) {
			return 0, ErrNoUnit
		}
		unit, ok := units[rest[n]]
		if !ok {
			return 0, fmt.Errorf("%q: unknown unit %q (use s, m, h, d or w)", s, rest[n:])
		}
		v, err := strconv.ParseFloat(rest[:n], 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration like 90m, 12h, 7d or 2w", s)
		}
		total += v * unit
		rest = rest[n+1:]
	}
	if math.IsInf(total, 0) {
		return 0, fmt.Errorf("%q is too long", s)
	}
	return total, nil
}

// numberPrefix is the length of the unsigned decimal number (digits, at most one point) that
// starts s, 0 when none does.
func numberPrefix(s string) int {
	digits, point, i := 0, false, 0
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point:
			point = true
		default:
			if digits == 0 {
				return 0
			}
			return i
		}
	}
	if digits == 0 {
		return 0
	}
	return i
}

// Format writes seconds as an age Parse reads back: whole days from two days on as
// "7d", whole hours as "24h", else seconds with "s".
func Format(seconds float64) string {
	switch {
	case seconds >= 2*86400 && math.Mod(seconds, 86400) == 0:
		return strconv.FormatFloat(seconds/86400, 'f', -1, 64) + "d"
	case seconds >= 3600 && math.Mod(seconds, 3600) == 0:
		return strconv.FormatFloat(seconds/3600, 'f', -1, 64) + "h"
	}
	return strconv.FormatFloat(seconds, 'f', -1, 64) + "s"
}
