package statedb

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pyFloatDigits is what Python's float(str) accepts besides inf and nan: a decimal number,
// single underscores between digits.
var pyFloatDigits = regexp.MustCompile(`^[-+]?(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:[eE][-+]?[0-9](?:_?[0-9])*)?$`)

// PyFloat is Python's float(s) of a text the runtime reads (a state_meta value, a TEXT time
// of a sessions row): surrounding whitespace ignored, inf, infinity and nan in any case.
func PyFloat(s string) (float64, error) {
	t := strings.TrimSpace(s)
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "inf", "infinity":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	}
	if !pyFloatDigits.MatchString(t) {
		return 0, fmt.Errorf("could not convert string to float: %q", s)
	}
	return strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
}

// PyFloat is Python's float() of v as the runtime's sqlite3 returns it: an INTEGER or a REAL
// as a number, a TEXT as float(str), a BLOB as float(bytes) (the same grammar, on UTF-8
// bytes); ok is false where float() raises (NULL, a text that is no number).
func (v Value) PyFloat() (float64, bool) {
	switch v.Type {
	case TypeInteger, TypeReal:
		return v.Number()
	case TypeText:
		f, err := PyFloat(v.Text)
		return f, err == nil
	case TypeBlob:
		if !utf8.Valid(v.Blob) {
			return 0, false
		}
		f, err := PyFloat(string(v.Blob))
		return f, err == nil
	}
	return 0, false
}
