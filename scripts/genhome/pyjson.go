package main

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file writes JSON byte-for-byte like Python's json module with its
// defaults (ensure_ascii=True): json.dump(obj, f, indent=2) for sessions.json
// and json.dumps(obj) (separators ", " and ": ") for entry_json, origin_json
// and .restart_failure_counts. encoding/json cannot be used: it escapes
// <, > and & and sorts map keys.

// field is one key/value pair of an ordered JSON object. Val is one of:
// nil (null), string, bool, int, int64, pyFloat, or []field (an object).
type field struct {
	Key string
	Val any
}

// pyFloat is a float already formatted the way Python's repr writes it.
type pyFloat string

// writePyString appends s as a Python json string with ensure_ascii=True.
func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || (r >= 0x7f && r <= 0xffff):
			writePyString4(b, r)
		case r > 0xffff:
			r -= 0x10000
			writePyString4(b, 0xd800+(r>>10))
			writePyString4(b, 0xdc00+(r&0x3ff))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// writePyString4 appends one \uXXXX escape (lower-case hex, as Python).
func writePyString4(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	b.WriteByte(hex[r>>12&0xf])
	b.WriteByte(hex[r>>8&0xf])
	b.WriteByte(hex[r>>4&0xf])
	b.WriteByte(hex[r&0xf])
}

// writeScalar appends a non-object value.
func writeScalar(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		writePyString(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case pyFloat:
		b.WriteString(string(x))
	default:
		panic("pyjson: unsupported value type")
	}
}

// writeCompact appends v like json.dumps(v) with default separators.
func writeCompact(b *strings.Builder, v any) {
	obj, ok := v.([]field)
	if !ok {
		writeScalar(b, v)
		return
	}
	b.WriteByte('{')
	for i, f := range obj {
		if i > 0 {
			b.WriteString(", ")
		}
		writePyString(b, f.Key)
		b.WriteString(": ")
		writeCompact(b, f.Val)
	}
	b.WriteByte('}')
}

// writeIndented appends v like json.dump(v, f, indent=2) at nesting depth.
func writeIndented(b *strings.Builder, v any, depth int) {
	obj, ok := v.([]field)
	if !ok {
		writeScalar(b, v)
		return
	}
	if len(obj) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteByte('{')
	for i, f := range obj {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", depth+1))
		writePyString(b, f.Key)
		b.WriteString(": ")
		writeIndented(b, f.Val, depth+1)
	}
	b.WriteByte('\n')
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteByte('}')
}

// compactJSON returns json.dumps(v).
func compactJSON(v any) string {
	var b strings.Builder
	writeCompact(&b, v)
	return b.String()
}
