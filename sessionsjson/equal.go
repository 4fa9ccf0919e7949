package sessionsjson

import (
	"bytes"
	"math"
	"math/big"
	"slices"
	"strconv"
)

// SameValue reports whether two JSON texts hold the same value as Python's json.loads
// returns it: objects are equal with the same members in any order (a repeated name counts
// with its last value), arrays item by item, strings by their code points (a lone surrogate is its own code point), an integer and a
// float by their exact numeric values (1 == 1.0, as in Python; integers are compared exactly,
// however long). true, false and null equal only themselves. NaN equals NaN here: the same
// text names the same value, which is what a journal's image and the file are compared for.
// A text that is not valid JSON (in the runtime's sense, NaN and Infinity included) equals
// nothing.
func SameValue(a, b []byte) bool {
	if validJSON(a) != nil || validJSON(b) != nil {
		return false
	}
	return sameValue(bytes.Trim(a, jsonSpace), bytes.Trim(b, jsonSpace))
}

// sameValue compares two valid raw JSON values without surrounding whitespace.
func sameValue(a, b []byte) bool {
	ka, kb := valueKind(a), valueKind(b)
	if ka != kb {
		return false
	}
	switch ka {
	case '{':
		fa, fb := dedupeFields(objectFields(a, 0)), dedupeFields(objectFields(b, 0))
		if len(fa) != len(fb) {
			return false
		}
		byName := make(map[string][]byte, len(fb))
		for _, f := range fb {
			byName[f.Name] = f.Raw
		}
		for _, f := range fa {
			other, ok := byName[f.Name]
			if !ok || !sameValue(f.Raw, other) {
				return false
			}
		}
		return true
	case '[':
		ia, ib := arrayItems(a), arrayItems(b)
		if len(ia) != len(ib) {
			return false
		}
		for i := range ia {
			if !sameValue(ia[i], ib[i]) {
				return false
			}
		}
		return true
	case '"':
		return bytes.Equal(a, b) || slices.Equal(codePoints(a), codePoints(b))
	case '0':
		return sameNumber(a, b)
	}
	return bytes.Equal(a, b) // true, false, null
}

// valueKind classes a valid raw value by its first byte: '{', '[', '"', '0' for any number
// (the constants NaN, Infinity and -Infinity included), or the literal's first letter.
func valueKind(raw []byte) byte {
	switch c := raw[0]; c {
	case '{', '[', '"', 't', 'f', 'n':
		return c
	}
	return '0'
}

// sameNumber compares two JSON numbers by value, as Python compares the int or float each
// loads as: integers exactly, floats as float64 (an overflow is ±Inf), an integer and a
// float exactly.
func sameNumber(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ia, aInt := jsonInt(a)
	ib, bInt := jsonInt(b)
	switch {
	case aInt && bInt:
		return ia.Cmp(ib) == 0
	case aInt:
		return intEqualsFloat(ia, jsonFloat(b))
	case bInt:
		return intEqualsFloat(ib, jsonFloat(a))
	}
	fa, fb := jsonFloat(a), jsonFloat(b)
	return fa == fb || math.IsNaN(fa) && math.IsNaN(fb)
}

// jsonInt parses a JSON number that Python loads as an int (no fraction, no exponent).
func jsonInt(raw []byte) (*big.Int, bool) {
	if bytes.ContainsAny(raw, ".eEIN") {
		return nil, false
	}
	n, ok := new(big.Int).SetString(string(raw), 10)
	return n, ok
}

// jsonFloat parses a JSON number or constant as Python's float() does.
func jsonFloat(raw []byte) float64 {
	f, _ := strconv.ParseFloat(string(raw), 64) // "NaN", "Infinity", "-Infinity" included
	return f
}

// intEqualsFloat compares an int and a float exactly, as Python does.
func intEqualsFloat(n *big.Int, f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return false
	}
	g, _ := new(big.Float).SetFloat64(f).Int(nil)
	return n.Cmp(g) == 0
}
