package sessionsjson

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Field is one member of an entry object, in file order.
type Field struct {
	// Name is the decoded member name.
	Name string
	// Raw is the member's value exactly as it appears in the file.
	Raw json.RawMessage

	rawName []byte // the name as written (keeps lone surrogates for re-encoding)
}

// Skip reasons: why the runtime would not load an entry.
const (
	SkipNotObject         = "not an object"
	SkipAborted           = "aborted: earlier TypeError (r0418–r0525 loader)"
	SkipOriginPlatform    = "unknown origin platform"
	SkipOriginNoPlatform  = "origin missing platform"
	SkipOriginNoChatID    = "origin missing chat_id"
	SkipOriginNotObject   = "origin not an object"
	skipTypeErrorSuffix   = " (TypeError: the rest of the file is not loaded)"
	skipMissingPrefix     = "missing "
	skipMalformedSuffix   = " malformed"
	skipNotStringSuffix   = " not a string"
	skipPathUnsafeSuffix  = " path-unsafe: "
	defaultChatType       = "dm"
	fieldOrigin           = "origin"
	fieldModelOverride    = "model_override"
	fieldMemoryFlushed    = "memory_flushed"
	fieldExpiryFinalized  = "expiry_finalized"
	fieldLastResumeMarked = "last_resume_marked_at"
)

// entryFieldOrder is SessionEntry.to_dict output order across all generations.
var entryFieldOrder = [...]string{
	"session_key", "session_id", "created_at", "updated_at", "display_name", "platform",
	"chat_type", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
	"total_tokens", "last_prompt_tokens", "estimated_cost_usd", "cost_status",
	fieldMemoryFlushed, fieldExpiryFinalized, "suspended", "resume_pending", "resume_reason",
	fieldLastResumeMarked, "is_fresh_reset", "was_auto_reset", "auto_reset_reason",
	"reset_had_activity", fieldModelOverride, fieldOrigin,
}

var entryFieldRank = func() map[string]int {
	m := make(map[string]int, len(entryFieldOrder))
	for i, n := range entryFieldOrder {
		m[n] = i
	}
	return m
}()

var originFields = map[string]bool{
	"platform": true, "chat_id": true, "chat_name": true, "chat_type": true, "user_id": true,
	"user_name": true, "thread_id": true, "chat_topic": true, "user_id_alt": true,
	"chat_id_alt": true, "scope_id": true, "guild_id": true, "parent_chat_id": true,
	"message_id": true, "profile": true, "auto_thread_created": true,
	"auto_thread_initial_name": true,
}

// Entry is one routing entry with the fields the runtime reads, decoded, and every member of
// the object kept in order so edits never lose data.
type Entry struct {
	// Key is the top-level key (what the runtime indexes by).
	Key string
	// Fields are the object's members in order (Python dict semantics for duplicates).
	Fields []Field

	// SessionKey and SessionID are the string values of those fields ("" when not strings).
	SessionKey, SessionID string
	// CreatedAt and UpdatedAt are the parsed timestamps (zero when the entry is skipped for them).
	CreatedAt, UpdatedAt Timestamp
	// LastResumeMarkedAt is nil when null, absent or malformed.
	LastResumeMarkedAt *Timestamp
	// LastResumeMalformed is true when a truthy value failed to parse (the runtime loads null).
	LastResumeMalformed bool
	// ResumePending and Suspended are the Python truthiness of the flags.
	ResumePending, Suspended bool
	// ResumeReason is the string value, nil when null, absent or not a string.
	ResumeReason *string
	// Platform is the top-level platform string; PlatformKnown is false when the runtime
	// would load it as null (unknown value).
	Platform      string
	PlatformKnown bool
	// OriginPresent is true when the runtime parses an origin.
	OriginPresent bool
	// OriginPlatform and OriginChatID (Python str() of the value) come from origin.
	OriginPlatform, OriginChatID string
	// ChatType is the chat_type string ("dm" when absent).
	ChatType string
	// DisplayName is the display_name string.
	DisplayName string
	// Finalized is expiry_finalized, falling back to memory_flushed (memory_flushed on r0418).
	Finalized bool
	// LastPromptTokens is the raw value (nil when absent).
	LastPromptTokens json.RawMessage
	// UnknownFields are entry members the runtime neither reads nor writes.
	UnknownFields []string
	// UnknownOriginFields are origin members the runtime does not know.
	UnknownOriginFields []string
	// Skip is the reason the runtime would not load this entry, "" when it loads.
	Skip string

	value     []byte // the raw value when it is not an object
	rules     Rules
	typeError bool
}

// DecodeEntry decodes one entry, e.g. a gateway_routing.entry_json row. It returns an entry
// with Skip set where the runtime would skip it, and an ErrCorrupt error only for invalid JSON.
func DecodeEntry(key string, raw []byte, rules Rules) (*Entry, error) {
	if err := validJSON(raw); err != nil {
		return nil, fmt.Errorf("entry %q: %w", key, err)
	}
	return entryFromRaw(key, raw, rules), nil
}

func entryFromRaw(key string, raw []byte, rules Rules) *Entry {
	s := scanner{data: raw}
	s.ws()
	if s.peek() != '{' {
		start, end, _ := s.value()
		return newEntry(key, raw[start:end], nil, rules)
	}
	return newEntry(key, nil, objectFields(raw[s.pos:], len(entryFieldOrder)), rules)
}

// newEntry builds and evaluates an entry; fields == nil with value != nil means a non-object.
func newEntry(key string, value []byte, fields []Field, rules Rules) *Entry {
	e := &Entry{Key: key, value: value, rules: rules}
	if value == nil {
		e.Fields = dedupeFields(fields)
		if e.Fields == nil {
			e.Fields = []Field{}
		}
	}
	e.evaluate()
	return e
}

// IsObject reports whether the entry's value is a JSON object.
func (e *Entry) IsObject() bool {
	return e.value == nil
}

// Get returns the raw value of a field and whether it is present.
func (e *Entry) Get(name string) (json.RawMessage, bool) {
	for _, f := range e.Fields {
		if f.Name == name {
			return f.Raw, true
		}
	}
	return nil, false
}

// Raw returns the entry in canonical compact form (no spaces, ASCII only), for journals and
// comparisons.
func (e *Entry) Raw() json.RawMessage {
	if !e.IsObject() {
		return compactPy(e.value)
	}
	return compactFormatter.object(nil, e.Fields, 0)
}

// EncodeEntryJSON encodes the entry like Python json.dumps(entry) with default separators:
// the gateway_routing.entry_json form (the runtime uses asciiOnly = true).
func EncodeEntryJSON(e *Entry, asciiOnly bool) []byte {
	f := dumpsFormatter(asciiOnly)
	if !e.IsObject() {
		return f.value(nil, e.value, 0)
	}
	return f.object(nil, e.Fields, 0)
}

// Set returns a copy of the entry with field set to value (bool, string, nil, int, int64,
// float64 or json.RawMessage), replaced in place or, when absent, inserted where
// SessionEntry.to_dict would put it. The copy is re-evaluated under the same rules.
func (e *Entry) Set(field string, value any) (*Entry, error) {
	if !e.IsObject() {
		return nil, fmt.Errorf("set %s on %q: entry is not an object: %w", field, e.Key, ErrInvalid)
	}
	raw, err := valueJSON(value)
	if err != nil {
		return nil, fmt.Errorf("set %s on %q: %w", field, e.Key, err)
	}
	fields := slices.Clone(e.Fields)
	if i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == field }); i >= 0 {
		fields[i].Raw = raw
	} else {
		fields = slices.Insert(fields, insertPos(fields, field), Field{Name: field, Raw: raw})
	}
	return newEntry(e.Key, nil, fields, e.rules), nil
}

func valueJSON(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case bool:
		return json.RawMessage(strconv.FormatBool(x)), nil
	case string:
		return appendPyString(nil, x, true), nil
	case int:
		return json.RawMessage(strconv.Itoa(x)), nil
	case int64:
		return json.RawMessage(strconv.FormatInt(x, 10)), nil
	case float64:
		return floatJSON(x)
	case json.RawMessage:
		if err := validJSON(x); err != nil {
			return nil, err
		}
		return slices.Clone(x), nil
	}
	return nil, fmt.Errorf("unsupported value type %T: %w", v, ErrInvalid)
}

func floatJSON(f float64) (json.RawMessage, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("non-finite float: %w", ErrInvalid)
	}
	return json.RawMessage(pyFloatRepr(f)), nil
}

// insertPos is where to_dict would place a missing field: before the first present field
// that to_dict writes later; unknown fields go before model_override/origin.
func insertPos(fields []Field, name string) int {
	rank, known := entryFieldRank[name]
	if !known {
		rank = entryFieldRank[fieldModelOverride]
	}
	for i, f := range fields {
		if r, ok := entryFieldRank[f.Name]; ok && r >= rank && f.Name != name {
			return i
		}
	}
	return len(fields)
}

// entryView holds the raw value of each known field (nil when absent), by to_dict rank.
type entryView [len(entryFieldOrder)][]byte

func (v *entryView) get(name string) []byte {
	return v[entryFieldRank[name]]
}

func (v *entryView) has(name string) bool {
	return v.get(name) != nil
}

func (e *Entry) view() *entryView {
	var v entryView
	for _, f := range e.Fields {
		if r, ok := entryFieldRank[f.Name]; ok {
			v[r] = f.Raw
		} else {
			e.UnknownFields = append(e.UnknownFields, f.Name)
		}
	}
	return &v
}

// evaluate decodes the runtime-relevant fields and decides Skip like SessionEntry.from_dict.
func (e *Entry) evaluate() {
	if !e.IsObject() {
		e.skip(SkipNotObject, !e.rules.SkipNonObject)
		return
	}
	v := e.view()
	e.plainFields(v)
	if e.origin(v.get("origin")) && e.required(v) {
		e.pathSafety(v)
	}
}

// skip records the runtime's reason to skip; typeError marks reasons raised as TypeError,
// which abort the whole load on generations whose loader does not catch it.
func (e *Entry) skip(reason string, typeError bool) {
	typeError = typeError && e.rules.TypeErrorAborts
	if typeError {
		reason += skipTypeErrorSuffix
	}
	e.Skip, e.typeError = reason, typeError
}

func (e *Entry) plainFields(v *entryView) {
	e.SessionKey = stringValue(v.get("session_key"))
	e.SessionID = stringValue(v.get("session_id"))
	e.DisplayName = stringValue(v.get("display_name"))
	e.ChatType = defaultChatType
	if v.has("chat_type") {
		e.ChatType = stringValue(v.get("chat_type"))
	}
	if p := v.get("platform"); truthy(p) {
		e.Platform = stringValue(p)
		e.PlatformKnown = IsKnownPlatform(e.Platform)
	}
	e.ResumePending = truthy(v.get("resume_pending"))
	e.Suspended = truthy(v.get("suspended"))
	if r := v.get("resume_reason"); len(r) > 0 && r[0] == '"' {
		s := decodeString(r)
		e.ResumeReason = &s
	}
	e.Finalized = truthy(finalizedRaw(v, e.rules.FinalizedFlag))
	e.LastPromptTokens = v.get("last_prompt_tokens")
	e.lastResume(v.get(fieldLastResumeMarked))
}

func finalizedRaw(v *entryView, flag string) []byte {
	if v.has(flag) || flag == fieldMemoryFlushed {
		return v.get(flag)
	}
	return v.get(fieldMemoryFlushed)
}

func (e *Entry) lastResume(raw []byte) {
	if !truthy(raw) {
		return
	}
	if raw[0] == '"' {
		if ts, err := ParseISO(decodeString(raw)); err == nil {
			e.LastResumeMarkedAt = &ts
			return
		}
	}
	e.LastResumeMalformed = true
}

func stringValue(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		return decodeString(raw)
	}
	return ""
}

// origin applies SessionSource.from_dict; false means the entry is skipped.
func (e *Entry) origin(raw []byte) bool {
	if !truthy(raw) {
		return true
	}
	if raw[0] != '{' {
		if e.rules.IgnoreNonObjectOrigin {
			return true
		}
		e.skip(SkipOriginNotObject, true)
		return false
	}
	e.OriginPresent = true
	var platform, chatID []byte
	visitObject(raw, func(k, v []byte) {
		switch name := internName(k); {
		case name == "platform":
			platform = v
		case name == "chat_id":
			chatID = v
		case !originFields[name] && !slices.Contains(e.UnknownOriginFields, name):
			e.UnknownOriginFields = append(e.UnknownOriginFields, name)
		}
	})
	return e.originPlatform(platform, chatID)
}

func (e *Entry) originPlatform(platform, chatID []byte) bool {
	switch {
	case platform == nil:
		e.skip(SkipOriginNoPlatform, false)
		return false
	case !IsKnownPlatform(stringValue(platform)) || platform[0] != '"':
		e.OriginPlatform = pyStr(platform)
		e.skip(SkipOriginPlatform, false)
		return false
	case chatID == nil:
		e.OriginPlatform = stringValue(platform)
		e.skip(SkipOriginNoChatID, false)
		return false
	}
	e.OriginPlatform = stringValue(platform)
	e.OriginChatID = pyStr(chatID)
	return true
}

// required checks the four required fields in from_dict order.
func (e *Entry) required(v *entryView) bool {
	for _, name := range []string{"session_key", "session_id"} {
		if !v.has(name) {
			e.skip(skipMissingPrefix+name, false)
			return false
		}
	}
	var ok bool
	if e.CreatedAt, ok = e.timestamp(v, "created_at"); !ok {
		return false
	}
	e.UpdatedAt, ok = e.timestamp(v, "updated_at")
	return ok
}

func (e *Entry) timestamp(v *entryView, name string) (Timestamp, bool) {
	raw := v.get(name)
	switch {
	case raw == nil:
		e.skip(skipMissingPrefix+name, false)
		return Timestamp{}, false
	case raw[0] != '"':
		e.skip(name+skipNotStringSuffix, true)
		return Timestamp{}, false
	}
	ts, err := ParseISO(decodeString(raw))
	if err != nil {
		e.skip(name+skipMalformedSuffix, false)
		return Timestamp{}, false
	}
	return ts, true
}

// pathSafety applies the 06-21+ key and id checks.
func (e *Entry) pathSafety(v *entryView) {
	if e.rules.PathSafety == PathSafetyNone {
		return
	}
	interior := e.rules.PathSafety == PathSafetyInteriorSlash
	checks := []struct {
		name    string
		problem func(string) string
	}{
		{"session_key", func(s string) string { return SessionKeyProblem(s, interior) }},
		{"session_id", SessionIDProblem},
	}
	for _, c := range checks {
		raw := v.get(c.name)
		if raw[0] != '"' {
			e.skip(c.name+skipNotStringSuffix, false)
			return
		}
		if p := c.problem(decodeString(raw)); p != "" {
			e.skip(c.name+skipPathUnsafeSuffix+p, false)
			return
		}
	}
}
