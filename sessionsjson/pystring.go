package sessionsjson

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// codePoints decodes a valid raw JSON string (with quotes) the way Python's json does:
// escaped surrogate pairs are joined, lone surrogates are kept as their code point.
func codePoints(raw []byte) []rune {
	body := raw[1 : len(raw)-1]
	out := make([]rune, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			r, n := utf8.DecodeRune(body[i:])
			out = append(out, r)
			i += n
			continue
		}
		r, n := unescape(body[i:])
		out = append(out, r)
		i += n
	}
	return out
}

// unescape decodes one escape sequence at the start of b and returns the code point and the
// number of bytes consumed.
func unescape(b []byte) (rune, int) {
	switch b[1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		hi := hex4(b[2:6])
		if hi >= 0xD800 && hi <= 0xDBFF && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if lo := hex4(b[8:12]); lo >= 0xDC00 && lo <= 0xDFFF {
				return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), 12
			}
		}
		return hi, 6
	}
	return rune(b[1]), 2 // '"', '\\', '/'
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		r = r<<4 | rune(hexVal(c))
	}
	return r
}

// decodeString returns the Go string of a valid raw JSON string. Lone surrogates become U+FFFD.
func decodeString(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body)
	}
	return string(codePoints(raw))
}

// appendPyString appends s encoded like Python's json (ensure_ascii selects the escaping).
func appendPyString(dst []byte, s string, ascii bool) []byte {
	return appendPyCodePoints(dst, []rune(s), ascii)
}

// appendPyRawString re-encodes a valid raw JSON string like Python's json would write it.
func appendPyRawString(dst, raw []byte, ascii bool) []byte {
	if isCanonicalString(raw[1:len(raw)-1], ascii) {
		return append(dst, raw...)
	}
	return appendPyCodePoints(dst, codePoints(raw), ascii)
}

func isCanonicalString(body []byte, ascii bool) bool {
	for _, c := range body {
		if c == '\\' || ascii && (c < 0x20 || c > 0x7e) {
			return false
		}
	}
	return true
}

const lowerHex = "0123456789abcdef"

func appendPyCodePoints(dst []byte, cps []rune, ascii bool) []byte {
	dst = append(dst, '"')
	for _, r := range cps {
		switch r {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = appendPyRune(dst, r, ascii)
		}
	}
	return append(dst, '"')
}

func appendPyRune(dst []byte, r rune, ascii bool) []byte {
	surrogate := r >= 0xD800 && r <= 0xDFFF
	switch {
	case r >= 0x20 && r <= 0x7e:
		return append(dst, byte(r))
	case !ascii && r >= 0x20 && !surrogate:
		return utf8.AppendRune(dst, r)
	case r >= 0x10000:
		r -= 0x10000
		dst = appendU4(dst, 0xD800+(r>>10))
		return appendU4(dst, 0xDC00+(r&0x3FF))
	}
	// Control characters, and (ascii) everything above '~'. A lone surrogate is escaped
	// even without ensure_ascii: Python would fail to write it at all.
	return appendU4(dst, r)
}

func appendU4(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', lowerHex[r>>12&0xF], lowerHex[r>>8&0xF], lowerHex[r>>4&0xF], lowerHex[r&0xF])
}

// appendPyNumber re-encodes a valid raw JSON number the way Python's json round-trips it:
// integers keep their digits ("-0" becomes "0"), floats use Python's repr, and the constants
// NaN, Infinity and -Infinity stay as they are. A float that overflows (1e999) loads as
// infinity, which Python writes as Infinity.
func appendPyNumber(dst, raw []byte) []byte {
	if !bytes.ContainsAny(raw, ".eE") {
		if string(raw) == "-0" {
			return append(dst, '0')
		}
		return append(dst, raw...)
	}
	f, _ := strconv.ParseFloat(string(raw), 64) // valid JSON: only a range error, with ±Inf
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return append(dst, pyFloatRepr(f)...)
}

// pyFloatRepr formats a finite float like Python's repr(float).
func pyFloatRepr(f float64) string {
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	decpt := x + 1
	if decpt <= -4 || decpt > 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if x < 0 {
			es, x = "-", -x
		}
		return sign + m + "e" + es + pad2(x)
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	}
	return sign + digits[:decpt] + "." + digits[decpt:]
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// pyStr is Python's str() of a decoded JSON value, as used for origin.chat_id and by the
// path checks: a string as it is, a list or a dict as its repr.
func pyStr(raw []byte) string {
	if raw[0] == '"' {
		return decodeString(raw)
	}
	return string(appendPyRepr(nil, raw))
}

// appendPyRepr appends Python's repr() of a decoded JSON value (str() for the scalars other
// than strings): a dict keeps the first position and the last value of a duplicated name.
func appendPyRepr(dst, raw []byte) []byte {
	switch raw[0] {
	case '"':
		return appendPyReprString(dst, codePoints(raw))
	case 'n':
		return append(dst, "None"...)
	case 't':
		return append(dst, "True"...)
	case 'f':
		return append(dst, "False"...)
	case '[':
		dst = append(dst, '[')
		for i, item := range arrayItems(raw) {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyRepr(dst, item)
		}
		return append(dst, ']')
	case '{':
		dst = append(dst, '{')
		for i, f := range dedupeFields(objectFields(raw, 8)) {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendPyReprString(dst, codePoints(f.rawName))
			dst = append(dst, ": "...)
			dst = appendPyRepr(dst, f.Raw)
		}
		return append(dst, '}')
	}
	n := appendPyNumber(nil, raw)
	switch string(n) { // str(float) of the constants
	case "NaN":
		return append(dst, "nan"...)
	case "Infinity":
		return append(dst, "inf"...)
	case "-Infinity":
		return append(dst, "-inf"...)
	}
	return append(dst, n...)
}

// appendPyReprString appends Python's repr() of a str: single quotes unless the text has a
// single quote and no double one; the quote and backslash escaped, \t \n \r, other
// control and non-printable characters as \xhh, \uhhhh or \Uhhhhhhhh (str.isprintable is
// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space).
func appendPyReprString(dst []byte, cps []rune) []byte {
	quote := '\''
	if slices.Contains(cps, '\'') && !slices.Contains(cps, '"') {
		quote = '"'
	}
	dst = append(dst, byte(quote))
	for _, r := range cps {
		switch {
		case r == quote || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r < 0x20 || r == 0x7f:
			dst = append(dst, '\\', 'x', lowerHex[r>>4], lowerHex[r&0xF])
		case r < 0x7f:
			dst = append(dst, byte(r))
		case (r < 0xD800 || r > 0xDFFF) && unicode.IsPrint(r):
			dst = utf8.AppendRune(dst, r)
		case r <= 0xff:
			dst = append(dst, '\\', 'x', lowerHex[r>>4], lowerHex[r&0xF])
		case r <= 0xffff:
			dst = appendU4(dst, r)
		default:
			dst = append(dst, '\\', 'U')
			for shift := 28; shift >= 0; shift -= 4 {
				dst = append(dst, lowerHex[r>>shift&0xF])
			}
		}
	}
	return append(dst, byte(quote))
}

// Truthy is Python truthiness of the value a raw JSON value decodes to.
func Truthy(raw []byte) bool { return truthy(raw) }

// truthy is Python truthiness of a decoded JSON value.
func truthy(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case 'n', 'f':
		return false
	case 't':
		return true
	case '"':
		return len(raw) > 2
	case '{', '[':
		return len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return err != nil || f != 0
}
