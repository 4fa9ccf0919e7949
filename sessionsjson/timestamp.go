package sessionsjson

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Timestamp is a value parsed like Python 3.11 datetime.fromisoformat.
type Timestamp struct {
	// Raw is the text that was parsed.
	Raw string
	// Aware is true when the text carried "Z" or a UTC offset.
	Aware bool
	// Offset is the UTC offset in whole seconds (aware values only).
	Offset int
	// OffsetMicro is the sub-second part of the offset, with the same sign as Offset.
	OffsetMicro int
	// Wall clock fields.
	Year, Month, Day, Hour, Minute, Second, Micro int
}

// ParseISO parses s exactly as Python 3.11 datetime.fromisoformat does (including its
// quirks), returning an ErrInvalid-wrapped error where Python raises ValueError.
func ParseISO(s string) (Timestamp, error) {
	t := Timestamp{Raw: s}
	if !isoParse(s, &t) {
		return Timestamp{}, fmt.Errorf("invalid isoformat string %q: %w", s, ErrInvalid)
	}
	return t, nil
}

// isoBuf reads like a NUL-terminated C string: past the end it yields 0.
type isoBuf string

func (b isoBuf) at(i int) byte {
	if i >= 0 && i < len(b) {
		return b[i]
	}
	return 0
}

// digits parses n digits at p into *v (accumulating, like CPython's parse_digits).
func (b isoBuf) digits(p int, v *int, n int) (int, bool) {
	for i := 0; i < n; i++ {
		c := b.at(p)
		if c < '0' || c > '9' {
			return p, false
		}
		*v = *v*10 + int(c-'0')
		p++
	}
	return p, true
}

func isoParse(s string, t *Timestamp) bool {
	b := isoBuf(s)
	sep := b.separator()
	if sep < 0 || !b.date(sep, t) {
		return false
	}
	if sep < len(s) {
		p := sep + utf8Width(b.at(sep))
		if !b.time(p, t) {
			return false
		}
	}
	return t.valid()
}

func utf8Width(c byte) int {
	switch {
	case c&0x80 == 0:
		return 1
	case c&0xF0 == 0xE0:
		return 3
	case c&0xF0 == 0xF0:
		return 4
	}
	return 2
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// separator ports _find_isoformat_datetime_separator.
func (b isoBuf) separator() int {
	n := len(b)
	if n == 7 {
		return 7
	}
	if b.at(4) == '-' {
		if b.at(5) != 'W' {
			return 10
		}
		if n < 8 {
			return -1
		}
		if n > 8 && b.at(8) == '-' {
			if n == 9 {
				return -1
			}
			if n > 10 && isDigit(b.at(10)) {
				return 8
			}
			return 10
		}
		return 8
	}
	if b.at(4) != 'W' {
		return 8
	}
	idx := 7
	for idx < n && isDigit(b.at(idx)) {
		idx++
	}
	if idx < 9 {
		return idx
	}
	if idx%2 == 0 {
		return 7
	}
	return 8
}

// date ports parse_isoformat_date over the first n bytes.
func (b isoBuf) date(n int, t *Timestamp) bool {
	p, ok := b.digits(0, &t.Year, 4)
	if !ok {
		return false
	}
	sep := b.at(p) == '-'
	if sep {
		p++
	}
	if b.at(p) == 'W' {
		return b.weekDate(p+1, n, sep, t)
	}
	if p, ok = b.digits(p, &t.Month, 2); !ok {
		return false
	}
	if sep {
		if b.at(p) != '-' {
			return false
		}
		p++
	}
	_, ok = b.digits(p, &t.Day, 2)
	return ok
}

func (b isoBuf) weekDate(p, n int, sep bool, t *Timestamp) bool {
	week, day := 0, 0
	p, ok := b.digits(p, &week, 2)
	if !ok {
		return false
	}
	if p < n {
		if sep {
			if b.at(p) != '-' {
				return false
			}
			p++
		}
		if _, ok = b.digits(p, &day, 1); !ok {
			return false
		}
	} else {
		day = 1
	}
	return isoToYMD(t.Year, week, day, t)
}

// isoToYMD ports iso_to_ymd.
func isoToYMD(year, week, day int, t *Timestamp) bool {
	if year < 1 || year > 9999 {
		return false
	}
	if week <= 0 || week >= 53 {
		first := weekday(daysFromCivil(year, 1, 1))
		if week != 53 || !(first == 3 || first == 2 && isLeap(year)) {
			return false
		}
	}
	if day <= 0 || day >= 8 {
		return false
	}
	jan4 := daysFromCivil(year, 1, 4)
	monday := jan4 - weekday(jan4)
	t.Year, t.Month, t.Day = civilFromDays(monday + int64((week-1)*7+day-1))
	return true
}

// weekday returns the ISO weekday of a day number, Monday = 0.
func weekday(days int64) int64 {
	return ((days+3)%7 + 7) % 7
}

// time ports parse_isoformat_time starting at p (the byte after the separator).
func (b isoBuf) time(p int, t *Timestamp) bool {
	end := len(b)
	tz := p
	for {
		if c := b.at(tz); c == 'Z' || c == '+' || c == '-' {
			break
		}
		tz++
		if tz >= end {
			break
		}
	}
	rv := b.hhmmss(p, tz, &t.Hour, &t.Minute, &t.Second, &t.Micro)
	switch {
	case rv < 0:
		return false
	case tz == end:
		return rv != 1
	case b.at(tz) == 'Z':
		t.Aware = true
		return b.at(tz+1) == 0
	}
	sign := 1
	if b.at(tz) == '-' {
		sign = -1
	}
	var h, m, sec, us int
	if b.hhmmss(tz+1, end, &h, &m, &sec, &us) != 0 {
		return false
	}
	t.Aware = true
	t.Offset = sign * (h*3600 + m*60 + sec)
	t.OffsetMicro = sign * us
	return true
}

// hhmmss ports parse_hh_mm_ss_ff: -1 on error, 1 when text remains, 0 at the end.
func (b isoBuf) hhmmss(p, end int, vals ...*int) int {
	hasSep := true
	for i := 0; i < 3; i++ {
		var ok bool
		if p, ok = b.digits(p, vals[i], 2); !ok {
			return -1
		}
		c := b.at(p)
		p++
		if i == 0 {
			hasSep = c == ':'
		}
		switch {
		case p >= end:
			if c != 0 {
				return 1
			}
			return 0
		case hasSep && c == ':':
			continue
		case c == '.' || c == ',':
		case !hasSep:
			p--
			continue
		default:
			return -1
		}
		break
	}
	return b.fraction(p, end, vals[3])
}

func (b isoBuf) fraction(p, end int, us *int) int {
	n := min(end-p, 6)
	p, ok := b.digits(p, us, n)
	if !ok {
		return -1
	}
	for i := n; i < 6; i++ {
		*us *= 10
	}
	for isDigit(b.at(p)) {
		p++
	}
	if b.at(p) != 0 {
		return 1
	}
	return 0
}

// valid applies datetime's range checks.
func (t *Timestamp) valid() bool {
	if t.Year < 1 || t.Year > 9999 || t.Month < 1 || t.Month > 12 {
		return false
	}
	if t.Day < 1 || t.Day > daysIn(t.Year, t.Month) {
		return false
	}
	if t.Hour > 23 || t.Minute > 59 || t.Second > 59 {
		return false
	}
	off := int64(t.Offset)*1e6 + int64(t.OffsetMicro)
	return off > -86400e6 && off < 86400e6
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns days since 1970-01-01 of a proleptic Gregorian date.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := int64(y) / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := int64(y) - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int((mp+2)%12 + 1)
	y = int(yoe + era*400)
	if m <= 2 {
		y++
	}
	return y, m, d
}

const (
	microsPerDay = 86400 * 1e6
	// epochOffsetDays is the number of days from 0001-01-01 to 1970-01-01.
	epochOffsetDays = 719162
)

// WallMicros returns the wall-clock fields as microseconds since 0001-01-01T00:00:00,
// ignoring any offset: the comparison value of a Python naive datetime.
func (t Timestamp) WallMicros() int64 {
	days := daysFromCivil(t.Year, t.Month, t.Day) + epochOffsetDays
	secs := int64(t.Hour*3600 + t.Minute*60 + t.Second)
	return days*microsPerDay + secs*1e6 + int64(t.Micro)
}

// FormatNaive formats wall microseconds (WallMicros scale) like Python's naive
// datetime.isoformat(): YYYY-MM-DDTHH:MM:SS[.ffffff], the fraction omitted when zero.
func FormatNaive(wallMicros int64) string {
	days := floorDiv(wallMicros, microsPerDay)
	rem := wallMicros - days*microsPerDay
	y, m, d := civilFromDays(days - epochOffsetDays)
	secs, us := rem/1e6, rem%1e6
	s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", y, m, d, secs/3600, secs/60%60, secs%60)
	if us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Clock is the evaluation time ("now") of a run.
type Clock struct {
	// UnixMicros is now in integer microseconds since the Unix epoch.
	UnixMicros int64
	// Unix is now as Python's float time.time() value, exactly as the runtime computes it.
	Unix float64
}

// ParseNow parses a --now value: RFC 3339 with an offset (at most microsecond precision), or
// Unix seconds with an optional fraction. Unix is computed with a correctly rounded decimal
// parse, never through nanosecond durations.
func ParseNow(s string) (Clock, error) {
	if isUnixSeconds(s) {
		return parseUnixSeconds(s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Clock{}, fmt.Errorf("parse time %q (want RFC 3339 or Unix seconds): %w", s, ErrInvalid)
	}
	if t.Nanosecond()%1000 != 0 {
		return Clock{}, fmt.Errorf("parse time %q: finer than microseconds: %w", s, ErrInvalid)
	}
	return clockFromMicros(t.UnixMicro()), nil
}

func isUnixSeconds(s string) bool {
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasDot := strings.Cut(s, ".")
	return intPart != "" && allDigits(intPart) && (!hasDot || frac != "" && allDigits(frac))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseUnixSeconds mirrors Python: the float is float(s); the microseconds are what
// datetime.fromtimestamp derives from that float (round half to even).
func parseUnixSeconds(s string) (Clock, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Abs(f) > 253402300800 {
		return Clock{}, fmt.Errorf("parse time %q: out of range: %w", s, ErrInvalid)
	}
	return ClockFromUnix(f), nil
}

// ClockFromUnix returns the Clock of a Unix time in float seconds (a state.db REAL), with the
// microseconds datetime.fromtimestamp derives from it (round half to even). f must be within
// the years 1–9999.
func ClockFromUnix(f float64) Clock {
	whole, frac := math.Modf(f)
	us := math.RoundToEven(frac * 1e6)
	return Clock{UnixMicros: int64(whole)*1e6 + int64(us), Unix: f}
}

func clockFromMicros(us int64) Clock {
	sign := ""
	a := us
	if a < 0 {
		sign, a = "-", -a
	}
	f, _ := strconv.ParseFloat(fmt.Sprintf("%s%d.%06d", sign, a/1e6, a%1e6), 64)
	return Clock{UnixMicros: us, Unix: f}
}

// ClockFromTime returns the Clock of t, truncated to microseconds.
func ClockFromTime(t time.Time) Clock {
	return clockFromMicros(t.UnixMicro())
}

// Time returns the clock as a time.Time.
func (c Clock) Time() time.Time {
	return time.UnixMicro(c.UnixMicros)
}

// NaiveLocalMicros returns now as naive wall time in loc, on the WallMicros scale: the value
// Python's datetime.now() has in a process whose local zone is loc.
func (c Clock) NaiveLocalMicros(loc *time.Location) int64 {
	t := c.Time().In(loc)
	_, off := t.Zone()
	return c.UnixMicros + int64(off)*1e6 + epochOffsetDays*microsPerDay
}
