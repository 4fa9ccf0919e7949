package statedb

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Storage classes of a Value, as SQLite's typeof() names them.
const (
	TypeNull    = "null"
	TypeInteger = "integer"
	TypeReal    = "real"
	TypeText    = "text"
	TypeBlob    = "blob"
)

// Value is one SQLite value with its storage class, kept exactly: it JSON-encodes losslessly
// (integers and reals as decimal strings, reals with the shortest round-trip form, blobs and
// non-UTF-8 text in base64).
type Value struct {
	Type string // one of the Type* constants
	Int  int64
	Real float64
	Text string
	Blob []byte
}

// NullValue returns SQL NULL.
func NullValue() Value { return Value{Type: TypeNull} }

// IntValue returns an INTEGER value.
func IntValue(i int64) Value { return Value{Type: TypeInteger, Int: i} }

// RealValue returns a REAL value.
func RealValue(f float64) Value { return Value{Type: TypeReal, Real: f} }

// TextValue returns a TEXT value.
func TextValue(s string) Value { return Value{Type: TypeText, Text: s} }

// BlobValue returns a BLOB value.
func BlobValue(b []byte) Value { return Value{Type: TypeBlob, Blob: b} }

// valueFromDriver converts a value produced by the modernc driver for an expression column
// (no declared type, so no time conversion happens).
func valueFromDriver(v any) (Value, error) {
	switch x := v.(type) {
	case nil:
		return NullValue(), nil
	case int64:
		return IntValue(x), nil
	case float64:
		return RealValue(x), nil
	case string:
		return TextValue(x), nil
	case []byte:
		return BlobValue(append([]byte{}, x...)), nil
	case time.Time:
		return Value{}, fmt.Errorf("unexpected time value %v", x)
	default:
		return Value{}, fmt.Errorf("unexpected driver value of type %T", v)
	}
}

// arg returns v as a query argument of the same storage class.
func (v Value) arg() any {
	switch v.Type {
	case TypeInteger:
		return v.Int
	case TypeReal:
		return v.Real
	case TypeText:
		return v.Text
	case TypeBlob:
		if v.Blob == nil {
			return []byte{}
		}
		return v.Blob
	default:
		return nil
	}
}

// Equal reports whether v and w have the same storage class and the same value (reals
// compared bit for bit).
func (v Value) Equal(w Value) bool {
	if v.Type != w.Type {
		return false
	}
	switch v.Type {
	case TypeInteger:
		return v.Int == w.Int
	case TypeReal:
		return math.Float64bits(v.Real) == math.Float64bits(w.Real)
	case TypeText:
		return v.Text == w.Text
	case TypeBlob:
		return string(v.Blob) == string(w.Blob)
	default:
		return true
	}
}

// valueJSON is the wire form of a Value.
type valueJSON struct {
	Type   string  `json:"type"`
	Value  *string `json:"value,omitempty"`
	Base64 *string `json:"base64,omitempty"`
}

// MarshalJSON encodes v losslessly.
func (v Value) MarshalJSON() ([]byte, error) {
	return v.appendJSON(nil)
}

// appendJSON appends v's wire form ({"type": …, "value" or "base64": …}) to dst.
func (v Value) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, v.Type)
	switch v.Type {
	case TypeNull:
	case TypeInteger:
		dst = append(dst, `,"value":"`...)
		dst = append(strconv.AppendInt(dst, v.Int, 10), '"')
	case TypeReal:
		dst = append(dst, `,"value":"`...)
		dst = append(strconv.AppendFloat(dst, v.Real, 'g', -1, 64), '"')
	case TypeText:
		if utf8.ValidString(v.Text) {
			dst = appendJSONString(append(dst, `,"value":`...), v.Text)
		} else {
			dst = appendBase64(dst, []byte(v.Text))
		}
	case TypeBlob:
		dst = appendBase64(dst, v.Blob)
	default:
		return nil, fmt.Errorf("value of unknown type %q", v.Type)
	}
	return append(dst, '}'), nil
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, `,"base64":"`...)
	return append(base64.StdEncoding.AppendEncode(dst, b), '"')
}

// appendJSONString appends s as a JSON string (invalid UTF-8 is replaced the way
// encoding/json replaces it).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	if !utf8.ValidString(s) {
		b, _ := json.Marshal(s)
		return append(dst, b...)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	return append(append(dst, s[start:]...), '"')
}

// UnmarshalJSON decodes the form MarshalJSON writes.
func (v *Value) UnmarshalJSON(data []byte) error {
	var w valueJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	out, err := w.decode()
	if err != nil {
		return fmt.Errorf("decode %s value: %w", w.Type, err)
	}
	*v = out
	return nil
}

func (w valueJSON) decode() (Value, error) {
	switch w.Type {
	case TypeNull:
		return NullValue(), nil
	case TypeInteger:
		i, err := strconv.ParseInt(w.text(), 10, 64)
		return IntValue(i), err
	case TypeReal:
		f, err := strconv.ParseFloat(w.text(), 64)
		return RealValue(f), err
	case TypeText:
		if w.Base64 != nil {
			b, err := base64.StdEncoding.DecodeString(*w.Base64)
			return TextValue(string(b)), err
		}
		return TextValue(w.text()), nil
	case TypeBlob:
		b, err := base64.StdEncoding.DecodeString(w.text64())
		return BlobValue(b), err
	default:
		return Value{}, fmt.Errorf("unknown value type %q", w.Type)
	}
}

func (w valueJSON) text() string {
	if w.Value == nil {
		return ""
	}
	return *w.Value
}

func (w valueJSON) text64() string {
	if w.Base64 == nil {
		return ""
	}
	return *w.Base64
}

// printable escapes the characters of s a terminal would not show (control characters,
// invalid UTF-8) as Go escapes them (\x00, \n …), leaving the rest as it is.
func printable(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[0])
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[size:]
	}
	return b.String()
}

// runePrefix returns the length in bytes of the first n characters of s (an invalid byte
// counting as one).
func runePrefix(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// maxLiteralRunes bounds the text Literal shows of a TEXT or BLOB value.
const maxLiteralRunes = 40

// Literal renders v the way SQL writes it, for messages: NULL, 42, 1.5, 'text' (quotes
// doubled), X'00ff'. Long text and blobs are cut with "…".
func (v Value) Literal() string {
	switch v.Type {
	case TypeInteger:
		return strconv.FormatInt(v.Int, 10)
	case TypeReal:
		return strconv.FormatFloat(v.Real, 'g', -1, 64)
	case TypeText:
		s, cut := v.Text, ""
		if n := runePrefix(s, maxLiteralRunes); n < len(s) {
			s, cut = s[:n], "…"
		}
		return "'" + printable(strings.ReplaceAll(s, "'", "''")) + "'" + cut
	case TypeBlob:
		b, cut := v.Blob, ""
		if len(b) > maxLiteralRunes/2 {
			b, cut = b[:maxLiteralRunes/2], "…"
		}
		return fmt.Sprintf("X'%x'", b) + cut
	default:
		return "NULL"
	}
}

// IsNull reports SQL NULL (the zero Value counts as NULL).
func (v Value) IsNull() bool {
	return v.Type == TypeNull || v.Type == ""
}

// Number returns an INTEGER or REAL value as a float64; ok is false for any other class.
func (v Value) Number() (f float64, ok bool) {
	switch v.Type {
	case TypeInteger:
		return float64(v.Int), true
	case TypeReal:
		return v.Real, true
	}
	return 0, false
}

// IsNumber reports an INTEGER or REAL value.
func (v Value) IsNumber() bool {
	return v.Type == TypeInteger || v.Type == TypeReal
}

// typeRank orders the storage classes as SQLite sorts and compares them: NULL, then numbers
// (INTEGER and REAL together), then TEXT, then BLOB.
func (v Value) typeRank() int {
	switch v.Type {
	case TypeInteger, TypeReal:
		return 1
	case TypeText:
		return 2
	case TypeBlob:
		return 3
	default:
		return 0
	}
}

// Compare orders a and b as SQLite's ORDER BY and comparison operators do on values without
// affinity conversion (BINARY collation): NULL first, then numbers by value (an INTEGER and a
// REAL compared exactly), then TEXT byte by byte, then BLOBs byte by byte. It returns -1, 0
// or 1. So TEXT such as 'yesterday' is greater than every number, which is how the runtime's
// SQL compares a TEXT timestamp with a time.
func Compare(a, b Value) int {
	if ra, rb := a.typeRank(), b.typeRank(); ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch {
	case a.IsNull():
		return 0
	case a.Type == TypeInteger && b.Type == TypeInteger:
		return cmp.Compare(a.Int, b.Int)
	case a.Type == TypeReal && b.Type == TypeReal:
		return cmp.Compare(a.Real, b.Real)
	case a.Type == TypeInteger:
		return compareIntReal(a.Int, b.Real)
	case b.Type == TypeInteger:
		return -compareIntReal(b.Int, a.Real)
	case a.Type == TypeText:
		return strings.Compare(a.Text, b.Text)
	default:
		return bytes.Compare(a.Blob, b.Blob)
	}
}

// compareIntReal compares an integer with a real exactly, as SQLite does (no rounding of the
// integer to a double).
func compareIntReal(i int64, r float64) int {
	switch {
	case math.IsNaN(r): // SQLite stores no NaN; order it first like NULL, to be total
		return 1
	case r < -9223372036854775808.0:
		return 1
	case r >= 9223372036854775808.0:
		return -1
	}
	t := math.Trunc(r)
	if c := cmp.Compare(i, int64(t)); c != 0 {
		return c
	}
	return cmp.Compare(0, r-t)
}
