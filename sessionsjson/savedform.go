package sessionsjson

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// r0817OriginTruthyOnly are the origin members SessionSource.to_dict writes only when their
// value is truthy (gateway/session.py at 481156139: `if self.user_id_alt: d[...] = ...` and
// the like): a member present with a falsy value is dropped by the runtime's save.
var r0817OriginTruthyOnly = []string{"user_id_alt", "chat_id_alt", "parent_chat_id", "message_id",
	"profile", "auto_thread_created", "auto_thread_initial_name", "prospective_thread_id"}

// savedValues applies SessionEntry.to_dict's value rewrites of r0817 (Rules.SaveRewritesValues,
// 481156139) to the members of an entry being saved: metadata as `dict(data.get("metadata")
// or {})` writes it (a falsy value is {}, a list of pairs the object), and
// active_turn_started_at and last_resume_marked_at as `datetime.isoformat()` writes what
// from_dict parsed ("Z" becomes "+00:00"). It returns the fields and the changed names.
func savedValues(fields []Field, changed []string) ([]Field, []string) {
	for i, f := range fields {
		var raw []byte
		switch f.Name {
		case fieldMetadata:
			raw = savedMetadata(f.Raw)
		case fieldTurnStartedAt, fieldLastResumeMarked:
			raw = savedISO(f.Raw)
		case fieldOrigin:
			raw = savedOriginMembers(f.Raw)
		}
		if raw != nil && string(raw) != string(f.Raw) {
			fields[i].Raw = raw
			changed = append(changed, f.Name)
		}
	}
	return fields, changed
}

// savedMetadata is metadata as to_dict writes it, nil when it is written as it is (an object,
// or a value from_dict rejects, which skips the entry before any save).
func savedMetadata(raw []byte) []byte {
	switch {
	case !truthy(raw):
		return []byte("{}")
	case raw[0] != '[':
		return nil
	}
	var pairs []Field
	ok := true
	s := scanner{data: raw}
	_ = s.members(']', false, func(_ []byte, start, end int) {
		k, v, good := metadataPair(raw[start:end])
		ok = ok && good
		pairs = append(pairs, Field{Name: k, Raw: v})
	})
	if !ok {
		return nil
	}
	return appendRawObject(nil, dedupeFields(pairs))
}

// metadataPair is one item of a metadata list as dict() takes it: a two-item list or a
// two-character string. ok is false for a key json.dumps cannot write as the runtime would
// (a list or an object is unhashable: from_dict raises).
func metadataPair(item []byte) (key string, value []byte, ok bool) {
	if item[0] == '"' {
		s := decodeString(item)
		r0, n := utf8.DecodeRuneInString(s)
		return string(r0), appendPyString(nil, s[n:], true), utf8.RuneCountInString(s) == 2
	}
	var parts [][]byte
	s := scanner{data: item}
	_ = s.members(']', false, func(_ []byte, start, end int) { parts = append(parts, item[start:end]) })
	if len(parts) != 2 {
		return "", nil, false
	}
	k := parts[0]
	switch k[0] {
	case '"':
		return decodeString(k), parts[1], true
	case 't', 'f', 'n':
		return string(k), parts[1], true // json.dumps writes True/False/None keys as true/false/null
	case '[', '{':
		return "", nil, false
	}
	if strings.ContainsAny(string(k), ".eE") || strings.Contains(string(k), "Infinity") || string(k) == "NaN" {
		return "", nil, false // a float key: its repr is not kept here
	}
	return string(k), parts[1], true
}

// savedISO is a timestamp member as to_dict writes it: the isoformat of what from_dict
// parsed, nil when it is written as it is (null, or a value it does not parse: those are
// decided by savedTurnFields).
func savedISO(raw []byte) []byte {
	if len(raw) == 0 || raw[0] != '"' {
		return nil
	}
	t, err := ParseISO(decodeString(raw))
	if err != nil {
		return nil
	}
	return appendPyString(nil, t.ISOFormat(), true)
}

// savedOriginMembers is the origin object without the members SessionSource.to_dict writes
// only when truthy and that hold a falsy value, nil when nothing is dropped.
func savedOriginMembers(raw []byte) []byte {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	fields := objectFields(raw, 12)
	kept := slices.DeleteFunc(slices.Clone(fields), func(f Field) bool {
		return slices.Contains(r0817OriginTruthyOnly, f.Name) && !truthy(f.Raw)
	})
	if len(kept) == len(fields) {
		return nil
	}
	return appendRawObject(nil, kept)
}

// ISOFormat formats t like Python's datetime.isoformat(): the wall time with the fraction
// omitted when zero, then the UTC offset of an aware value as +HH:MM[:SS[.ffffff]].
func (t Timestamp) ISOFormat() string {
	s := FormatNaive(t.WallMicros())
	if !t.Aware {
		return s
	}
	off, micro := t.Offset, t.OffsetMicro
	sign := "+"
	if off < 0 || micro < 0 {
		sign, off, micro = "-", -off, -micro
	}
	s += fmt.Sprintf("%s%02d:%02d", sign, off/3600, off/60%60)
	if off%60 != 0 || micro != 0 {
		s += fmt.Sprintf(":%02d", off%60)
	}
	if micro != 0 {
		s += fmt.Sprintf(".%06d", micro)
	}
	return s
}
