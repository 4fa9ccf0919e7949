package sessionsjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FieldKind is the JSON type SessionEntry.to_dict writes in a field (sessionsjson.md §2.2),
// which is what a value set by hand must have for the runtime to read it as its own.
type FieldKind int

// Field kinds.
const (
	KindString    FieldKind = iota // a string
	KindOptString                  // a string or null
	KindBool                       // true or false
	KindInt                        // an integer
	KindNumber                     // a number
	KindTime                       // a naive ISO-8601 string ParseISO reads
	KindOptTime                    // the same, or null
	KindObject                     // an object
	KindOptObject                  // an object or null
)

// fieldKinds maps every field of entryFieldOrder to its kind.
var fieldKinds = map[string]FieldKind{
	"session_key": KindString, "session_id": KindString, "created_at": KindTime, "updated_at": KindTime,
	"display_name": KindOptString, "platform": KindOptString, "chat_type": KindString, fieldMetadata: KindObject,
	"input_tokens": KindInt, "output_tokens": KindInt, "cache_read_tokens": KindInt, "cache_write_tokens": KindInt,
	"total_tokens": KindInt, "last_prompt_tokens": KindInt, "estimated_cost_usd": KindNumber, "cost_status": KindString,
	fieldMemoryFlushed: KindBool, fieldExpiryFinalized: KindBool, "suspended": KindBool, "resume_pending": KindBool,
	"resume_reason": KindOptString, fieldLastResumeMarked: KindOptTime, fieldTurnToken: KindOptString,
	fieldTurnStartedAt: KindOptTime, "is_fresh_reset": KindBool, "was_auto_reset": KindBool,
	"auto_reset_reason": KindOptString, "reset_had_activity": KindBool, fieldPrevSessionID: KindOptString,
	fieldModelOverride: KindOptObject, fieldOrigin: KindOptObject,
}

// ErrUnknownField refuses a field the generation's runtime does not read.
var ErrUnknownField = errors.New("not a field this generation's runtime reads")

// FieldNames lists the fields the generation's to_dict writes, in its order.
func (r Rules) FieldNames() []string {
	var out []string
	for rank, name := range entryFieldOrder {
		if r.Fields.has(rank) {
			out = append(out, name)
		}
	}
	return out
}

// ParseFieldValue turns text given for field into the JSON value the runtime writes there:
// JSON of the field's kind (true, 12, 0.5, null where the field may be null, an object), and
// for a string field also the bare text (a JSON string literal gives a string that reads as
// JSON, such as "null"). A field the generation does not read (ErrUnknownField) and a value
// of another type (ErrInvalid) are refused.
func (r Rules) ParseFieldValue(field, text string) (json.RawMessage, error) {
	rank, known := entryFieldRank[field]
	if !known || !r.Fields.has(rank) {
		return nil, fmt.Errorf("%q: %w (it reads: %s)", field, ErrUnknownField, strings.Join(r.FieldNames(), ", "))
	}
	kind := fieldKinds[field]
	raw := json.RawMessage(strings.TrimSpace(text))
	if !json.Valid(raw) {
		raw = nil
	}
	if raw != nil && string(raw) == "null" && (kind == KindOptString || kind == KindOptTime || kind == KindOptObject) {
		return raw, nil
	}
	if v, ok := kindValue(kind, raw, text); ok {
		return v, nil
	}
	return nil, fmt.Errorf("%s=%s: %w: %s wants %s", field, text, ErrInvalid, field, kindNames[kind])
}

// kindValue returns the JSON value of kind that raw (text as JSON, nil when it is none) or
// text stands for.
func kindValue(kind FieldKind, raw json.RawMessage, text string) (json.RawMessage, bool) {
	switch kind {
	case KindBool:
		return raw, string(raw) == "true" || string(raw) == "false"
	case KindInt:
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return raw, err == nil
	case KindNumber:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return nil, false
		}
		v, err := floatJSON(f)
		return v, err == nil
	case KindObject, KindOptObject:
		return raw, len(raw) > 0 && raw[0] == '{'
	}
	s := text
	if len(raw) > 0 && raw[0] == '"' {
		s = decodeString(raw)
	}
	if kind == KindTime || kind == KindOptTime {
		if t, err := ParseISO(s); err != nil || t.Aware { // an aware time crashes the runtime's comparisons
			return nil, false
		}
	}
	return appendPyString(nil, s, true), true
}

// kindNames words each kind for a refusal.
var kindNames = map[FieldKind]string{
	KindString: "a string", KindOptString: "a string or null", KindBool: "true or false", KindInt: "an integer",
	KindNumber: "a number", KindTime: "a naive ISO-8601 time (2026-07-16T09:30:00)", KindOptTime: "a naive ISO-8601 time or null",
	KindObject: "a JSON object", KindOptObject: "a JSON object or null",
}
