package sessionsjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
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
	SkipNotObject        = "not an object"
	SkipAborted          = "aborted: earlier TypeError (r0418–r0525 loader)"
	SkipOriginPlatform   = "unknown origin platform"
	SkipOriginNoPlatform = "origin missing platform"
	SkipOriginNoChatID   = "origin missing chat_id"
	SkipOriginNotObject  = "origin not an object"
	SkipMetadata         = "metadata not a mapping"
	// SkipInvalidJSON: a gateway_routing row whose entry_json json.loads rejects; the
	// runtime's load skips the row (and imports the sessions.json entry of its key).
	SkipInvalidJSON       = "entry_json is not valid JSON"
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
	fieldMetadata         = "metadata"
	fieldTurnToken        = "active_turn_token"
	fieldTurnStartedAt    = "active_turn_started_at"
	fieldPrevSessionID    = "prev_session_id"
)

// Ranks of the fields the loader reads, in entryFieldOrder (and knownName) numbering.
const (
	rankSessionKey       = 0
	rankSessionID        = 1
	rankCreatedAt        = 2
	rankUpdatedAt        = 3
	rankDisplayName      = 4
	rankPlatform         = 5
	rankChatType         = 6
	rankMetadata         = 7
	rankLastPromptTokens = 13
	rankMemoryFlushed    = 16
	rankExpiryFinalized  = 17
	rankSuspended        = 18
	rankResumePending    = 19
	rankResumeReason     = 20
	rankLastResumeMarked = 21
	rankTurnToken        = 22
	rankTurnStartedAt    = 23
	rankPrevSessionID    = 28
	rankOrigin           = 30
)

// entryFieldOrder is SessionEntry.to_dict output order across all generations; each
// generation writes the subset its Rules.Fields holds.
var entryFieldOrder = [...]string{
	"session_key", "session_id", "created_at", "updated_at", "display_name", "platform",
	"chat_type", fieldMetadata, "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
	"total_tokens", "last_prompt_tokens", "estimated_cost_usd", "cost_status",
	fieldMemoryFlushed, fieldExpiryFinalized, "suspended", "resume_pending", "resume_reason",
	fieldLastResumeMarked, fieldTurnToken, fieldTurnStartedAt, "is_fresh_reset", "was_auto_reset",
	"auto_reset_reason", "reset_had_activity", fieldPrevSessionID, fieldModelOverride, fieldOrigin,
}

// FieldSet is a set of SessionEntry fields, by to_dict rank.
type FieldSet uint64

// fieldSetOf returns the set of the named fields (each must be in entryFieldOrder).
func fieldSetOf(names ...string) FieldSet {
	var s FieldSet
	for _, n := range names {
		s |= 1 << entryFieldRank[n]
	}
	return s
}

// without returns s minus the named fields.
func (s FieldSet) without(names ...string) FieldSet {
	return s &^ fieldSetOf(names...)
}

// has reports whether the set holds the field of to_dict rank r.
func (s FieldSet) has(r int) bool { return r >= 0 && r < 64 && s&(1<<r) != 0 }

// The fields each generation's SessionEntry.to_dict writes (gateway/session.py).
var (
	// fieldsR0817: 481156139 adds metadata (ad4034711), active_turn_token and
	// active_turn_started_at (6774760b6, PR #81264) and prev_session_id (91799405a).
	fieldsR0817 = fieldSetOf(entryFieldOrder[:]...)
	// fieldsR0715: what every generation up to r0715 reads or writes (memory_flushed, r0418's
	// flag, stays a fallback of from_dict later).
	fieldsR0715 = fieldsR0817.without(fieldMetadata, fieldTurnToken, fieldTurnStartedAt, fieldPrevSessionID)
)

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

// Entry is one routing entry with the fields the runtime reads, decoded. The entry keeps its
// raw value (a sub-slice of the decoded bytes, never a copy), so Fields, Get, Raw and
// EncodeEntryJSON see every member in order and edits never lose data. The bytes an entry
// was decoded from must not be modified while the entry is in use.
type Entry struct {
	// Key is the top-level key (what the runtime indexes by).
	Key string

	// SessionKey and SessionID are the string values of those fields ("" when not strings).
	SessionKey, SessionID string
	// CreatedAt and UpdatedAt are the parsed timestamps (zero when the entry is skipped for them).
	CreatedAt, UpdatedAt Timestamp
	// LastResumeMarkedAt is nil when null, absent or malformed.
	LastResumeMarkedAt *Timestamp
	// ResumeReason is the string value, nil when null, absent or not a string.
	ResumeReason *string
	// Platform is the platform the runtime loads: the member's value when the generation's
	// Platform(value) resolves the top-level platform (PlatformKnown), else the string as
	// written ("" when not a string); PlatformKnown is false when the runtime loads it as null.
	Platform string
	// OriginPlatform (the member's value, or Python str() of an unknown value) and
	// OriginChatID (Python str() of the value) come from origin.
	OriginPlatform, OriginChatID string
	// ChatType is the chat_type string ("dm" when absent).
	ChatType string
	// DisplayName is the display_name string.
	DisplayName string
	// LastPromptTokens is the raw value (nil when absent).
	LastPromptTokens json.RawMessage
	// UnknownFields are entry members the runtime neither reads nor writes.
	UnknownFields []string
	// UnknownOriginFields are origin members the runtime does not know.
	UnknownOriginFields []string
	// Skip is the reason the runtime would not load this entry, "" when it loads.
	Skip string

	// LastResumeMalformed is true when a truthy value failed to parse (the runtime loads null).
	LastResumeMalformed bool
	// ResumePending and Suspended are the Python truthiness of the flags.
	ResumePending, Suspended bool
	// PlatformKnown: see Platform.
	PlatformKnown bool
	// OriginPresent is true when the runtime parses an origin.
	OriginPresent bool
	// Finalized is expiry_finalized, falling back to memory_flushed (memory_flushed on r0418).
	Finalized bool

	typeError   bool
	unparsed    bool       // raw is not valid JSON (DecodeRow)
	stored      []byte     // DecodeRow: the row's bytes as stored
	turnStarted *Timestamp // the active-turn marker's start (r0817), nil without a valid marker
	raw         []byte     // the value, without surrounding whitespace
	rules       *Rules
}

// rawField is one member of an object as written: the quoted name and the value bytes.
type rawField struct {
	name, value []byte
}

// DecodeEntry decodes one entry, e.g. a gateway_routing.entry_json row. It returns an entry
// with Skip set where the runtime would skip it, and an ErrCorrupt error only for invalid JSON.
// The entry refers to raw (no copy is made): raw must not be modified afterwards.
func DecodeEntry(key string, raw []byte, rules Rules) (*Entry, error) {
	if err := validJSON(raw); err != nil {
		return nil, fmt.Errorf("entry %q: %w", key, err)
	}
	return entryFromRaw(key, raw, sharedRules(rules)), nil
}

// DecodeRow decodes one gateway_routing.entry_json value as the runtime's load takes it: an
// entry, with Skip set where the runtime skips it, invalid JSON included (SkipInvalidJSON:
// the entry then keeps the bytes as they are, for journals and undo, and has no fields).
func DecodeRow(key string, raw []byte, rules Rules) *Entry {
	if validJSON(raw) != nil {
		return &Entry{Key: key, raw: raw, stored: raw, rules: sharedRules(rules), Skip: SkipInvalidJSON, unparsed: true}
	}
	e := entryFromRaw(key, raw, sharedRules(rules))
	e.stored = raw
	return e
}

// Stored returns the bytes as stored of an entry DecodeRow read (a gateway_routing row's
// entry_json, whitespace around the value included), else Text; the caller must not modify
// them.
func (e *Entry) Stored() []byte {
	if e.stored != nil {
		return e.stored
	}
	return e.raw
}

// Unparsed reports an entry whose bytes are not valid JSON (DecodeRow).
func (e *Entry) Unparsed() bool { return e.unparsed }

// entryFromRaw builds and evaluates the entry of a valid raw JSON value.
func entryFromRaw(key string, raw []byte, rules *Rules) *Entry {
	s := scanner{data: raw, collectDepth: 1}
	start, end, _ := s.value()
	e := &Entry{}
	e.init(key, raw[start:end], s.collected, rules)
	return e
}

// init sets up and evaluates e for the valid value raw; fields are raw's members when it is
// an object (duplicates included, in file order).
func (e *Entry) init(key string, raw []byte, fields []rawField, rules *Rules) {
	e.Key, e.raw, e.rules = key, raw, rules
	e.evaluate(fields)
}

// rulesCache interns Rules values so entries share one copy.
var rulesCache sync.Map // Rules -> *Rules

func sharedRules(r Rules) *Rules {
	if p, ok := rulesCache.Load(r); ok {
		return p.(*Rules)
	}
	p, _ := rulesCache.LoadOrStore(r, &r)
	return p.(*Rules)
}

// IsObject reports whether the entry's value is a JSON object.
func (e *Entry) IsObject() bool {
	return !e.unparsed && len(e.raw) > 0 && e.raw[0] == '{'
}

// Fields returns the object's members in order (Python dict semantics for duplicates: first
// position, last value), computed from the raw bytes on each call; the caller owns the slice.
// It is nil when the entry is not an object.
func (e *Entry) Fields() []Field {
	if !e.IsObject() {
		return nil
	}
	return dedupeFields(objectFields(e.raw, len(entryFieldOrder)))
}

// AbortsLoad reports whether the entry raises the TypeError that ends the load of the rest
// of the file (r0418–r0525 loaders): the entries after it are skipped (SkipAborted).
func (e *Entry) AbortsLoad() bool { return e.typeError }

// Get returns the raw value of a field and whether it is present.
func (e *Entry) Get(name string) (json.RawMessage, bool) {
	if !e.IsObject() {
		return nil, false
	}
	var out json.RawMessage
	found := false
	visitObject(e.raw, func(k, v []byte) {
		if nameIs(k, name) {
			out, found = v, true
		}
	})
	return out, found
}

// MemberPath returns the raw value at a dotted path of members ("origin.platform") in a
// valid raw JSON object, and whether it is there.
func MemberPath(raw []byte, path string) (json.RawMessage, bool) {
	for name := range strings.SplitSeq(path, ".") {
		if len(raw) == 0 || raw[0] != '{' {
			return nil, false
		}
		var next []byte
		visitObject(raw, func(k, v []byte) {
			if nameIs(k, name) {
				next = v
			}
		})
		if next == nil {
			return nil, false
		}
		raw = next
	}
	return raw, true
}

// nameIs reports whether the raw member name k decodes to name.
func nameIs(k []byte, name string) bool {
	body := k[1 : len(k)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body) == name
	}
	return decodeString(k) == name
}

// Raw returns the entry in canonical compact form (no spaces, ASCII only), for journals and
// comparisons.
func (e *Entry) Raw() json.RawMessage {
	if e.unparsed {
		return bytes.Clone(e.raw)
	}
	return compactPy(e.raw)
}

// Text returns the entry's value as written in the file, whitespace included; the caller
// must not modify it.
func (e *Entry) Text() []byte {
	return e.raw
}

// EncodeEntryJSON encodes the entry like Python json.dumps(entry) with default separators:
// the gateway_routing.entry_json form (the runtime uses asciiOnly = true).
func EncodeEntryJSON(e *Entry, asciiOnly bool) []byte {
	if e.unparsed {
		return bytes.Clone(e.raw)
	}
	return dumpsFormatter(asciiOnly).value(nil, e.raw, 0)
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
	fields := e.Fields()
	if i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == field }); i >= 0 {
		fields[i].Raw = raw
	} else {
		fields = slices.Insert(fields, insertPos(fields, field), Field{Name: field, Raw: raw})
	}
	return entryFromRaw(e.Key, appendRawObject(nil, fields), e.rules), nil
}

// Saved returns the entry as the runtime's next save would write the values sessionctl
// matches on an entry it edits (docs/decisions.md), and the names of the members it changed
// ("platform", "origin.platform", "origin"): SessionEntry.to_dict writes the platform as the
// member's value (`self.platform.value`), so a value the generation normalised (Rules.
// NormalisePlatform: "Telegram", "slack ") is written lower-case and stripped, at the top
// level and in origin (SessionSource.to_dict); and it writes "origin" only when the entry has
// one (`if self.origin:`), so an origin the runtime loaded as none ({} before r0703, any
// non-dict from r0703) is dropped. A top-level platform the runtime does not resolve is
// written null (`self.platform.value if self.platform else None`, every generation) when the
// entry has an origin the runtime loads (whose platform it resolves); without one the value
// is kept: sessionctl cannot see plugin platforms a user installed. From r0817
// (SaveRewritesValues) the values to_dict rewrites are written its way too (savedValues). An entry the runtime skips is returned as it
// is, and so is one with nothing to change (nil names).
func (e *Entry) Saved() (*Entry, []string) {
	if e.Skip != "" || !e.IsObject() {
		return e, nil
	}
	var changed []string
	fields := e.Fields()
	out := fields[:0]
	for _, f := range fields {
		switch {
		case f.Name == "platform" && e.PlatformKnown && stringValue(f.Raw) != e.Platform:
			f.Raw = appendPyString(nil, e.Platform, true)
			changed = append(changed, "platform")
		case f.Name == "platform" && !e.PlatformKnown && e.OriginPresent && string(f.Raw) != "null":
			f.Raw = json.RawMessage("null") // `self.platform.value if self.platform else None`
			changed = append(changed, "platform")
		case f.Name == fieldOrigin && !e.OriginPresent:
			changed = append(changed, fieldOrigin)
			continue
		case f.Name == fieldOrigin:
			if raw, ok := e.savedOrigin(f.Raw); ok {
				f.Raw = raw
				changed = append(changed, "origin.platform")
			}
		}
		out = append(out, f)
	}
	if e.rules.SaveRewritesValues {
		out, changed = savedValues(out, changed)
	}
	if e.rules.TurnMarkers {
		out, changed = savedTurnFields(out, changed)
	}
	if changed == nil {
		return e, nil
	}
	return entryFromRaw(e.Key, appendRawObject(nil, out), e.rules), changed
}

// savedTurnFields writes the four fields r0817's to_dict always writes (gateway/session.py at
// 481156139): metadata ({} when absent), active_turn_token and active_turn_started_at (both
// null unless the token is a non-empty string, as from_dict nulls a partial or malformed
// pair; a start time ParseISO cannot read is null too) and prev_session_id (null when
// absent). It returns the fields and the changed names.
func savedTurnFields(fields []Field, changed []string) ([]Field, []string) {
	get := func(name string) ([]byte, bool) {
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == name })
		if i < 0 {
			return nil, false
		}
		return fields[i].Raw, true
	}
	set := func(name string, raw []byte) {
		if i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == name }); i >= 0 {
			fields[i].Raw = raw
		} else {
			fields = slices.Insert(fields, insertPos(fields, name), Field{Name: name, Raw: raw})
		}
		changed = append(changed, name)
	}
	null := []byte("null")
	if _, ok := get(fieldMetadata); !ok {
		set(fieldMetadata, []byte("{}"))
	}
	token, hasToken := get(fieldTurnToken)
	started, hasStarted := get(fieldTurnStartedAt)
	validToken := hasToken && len(token) > 2 && token[0] == '"'
	if !hasToken || (!validToken && string(token) != "null") {
		set(fieldTurnToken, null)
	}
	if !hasStarted || (string(started) != "null" && (!validToken || !isoString(started))) {
		set(fieldTurnStartedAt, null)
	}
	if _, ok := get(fieldPrevSessionID); !ok {
		set(fieldPrevSessionID, null)
	}
	return fields, changed
}

// isoString reports whether raw is a JSON string ParseISO reads.
func isoString(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '"' {
		return false
	}
	_, err := ParseISO(decodeString(raw))
	return err == nil
}

// savedOrigin returns the loaded origin object with its platform written as the member's
// value, and whether that differs from raw.
func (e *Entry) savedOrigin(raw []byte) ([]byte, bool) {
	fields := objectFields(raw, 8)
	changed := false
	for i, f := range fields {
		if f.Name == "platform" && stringValue(f.Raw) != e.OriginPlatform {
			fields[i].Raw, changed = appendPyString(nil, e.OriginPlatform, true), true
		}
	}
	if !changed {
		return raw, false
	}
	return appendRawObject(nil, fields), true
}

// appendRawObject writes fields as an object, each name and value byte for byte as given
// (names without a raw form are encoded), so that decoding it yields the same fields.
func appendRawObject(dst []byte, fields []Field) []byte {
	dst = append(dst, '{')
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		if f.rawName != nil {
			dst = append(dst, f.rawName...)
		} else {
			dst = appendPyString(dst, f.Name, true)
		}
		dst = append(dst, ':')
		dst = append(dst, f.Raw...)
	}
	return append(dst, '}')
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
		return slices.Clone(bytes.Trim(x, jsonSpace)), nil
	}
	return nil, fmt.Errorf("unsupported value type %T: %w", v, ErrInvalid)
}

// jsonSpace is the JSON whitespace set.
const jsonSpace = " \t\n\r"

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

// entryRank returns the to_dict rank of a raw member name, or -1 with the decoded name for
// names the runtime neither reads nor writes. Known names do not allocate.
func entryRank(k []byte) (int, string) {
	body := k[1 : len(k)-1]
	name, rank, ok := knownName(body)
	if !ok && bytes.IndexByte(body, '\\') >= 0 {
		name = decodeString(k)
		if _, r, known := knownName([]byte(name)); known {
			rank, ok = r, true
		}
	}
	if ok && rank >= 0 {
		return rank, ""
	}
	if name == "" {
		name = decodeString(k)
	}
	return -1, name
}

// view sorts the members into the known fields (the last duplicate wins) and the unknown
// names (once each, in order of first occurrence).
func (e *Entry) view(fields []rawField, v *entryView) {
	var seen map[string]bool // only for entries with many unknown names
	for _, f := range fields {
		rank, name := entryRank(f.name)
		if rank >= 0 && !e.rules.Fields.has(rank) {
			rank, name = -1, entryFieldOrder[rank]
		}
		switch {
		case rank >= 0:
			v[rank] = f.value
		case seen != nil:
			if !seen[name] {
				seen[name] = true
				e.UnknownFields = append(e.UnknownFields, name)
			}
		case !slices.Contains(e.UnknownFields, name):
			e.UnknownFields = append(e.UnknownFields, name)
			if len(e.UnknownFields) > 32 {
				seen = make(map[string]bool, 2*len(e.UnknownFields))
				for _, n := range e.UnknownFields {
					seen[n] = true
				}
			}
		}
	}
}

// evaluate decodes the runtime-relevant fields and decides Skip like SessionEntry.from_dict.
func (e *Entry) evaluate(fields []rawField) {
	if !e.IsObject() {
		e.skip(SkipNotObject, !e.rules.SkipNonObject)
		return
	}
	var v entryView
	e.view(fields, &v)
	e.plainFields(&v)
	if e.origin(v[rankOrigin]) {
		e.required(&v)
	}
	if e.Skip == "" && !metadataLoads(v[rankMetadata]) {
		e.skip(SkipMetadata, false)
	}
}

// metadataLoads reports whether r0817's from_dict loads a metadata value:
// `dict(data.get("metadata") or {})` takes a falsy value as {}, an object as it is and an
// array of two-element arrays or two-character strings as pairs; anything else raises
// ValueError or TypeError and the loader skips the entry (gateway/session.py at 481156139).
// Generations without the field never read it (raw is then nil).
func metadataLoads(raw []byte) bool {
	if raw == nil || !truthy(raw) || raw[0] == '{' {
		return true
	}
	if raw[0] != '[' {
		return false
	}
	ok := true
	s := scanner{data: raw}
	_ = s.members(']', false, func(_ []byte, start, end int) {
		item := raw[start:end]
		switch {
		case item[0] == '"':
			ok = ok && utf8.RuneCountInString(decodeString(item)) == 2
		case item[0] == '[':
			n := 0
			s2 := scanner{data: item}
			_ = s2.members(']', false, func([]byte, int, int) { n++ })
			ok = ok && n == 2
		default:
			ok = false
		}
	})
	return ok
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
	e.SessionKey = e.sessionKey(v[rankSessionKey])
	e.SessionID = stringValue(v[rankSessionID])
	e.DisplayName = stringValue(v[rankDisplayName])
	e.ChatType = defaultChatType
	if v[rankChatType] != nil {
		e.ChatType = internedString(v[rankChatType])
	}
	if p := v[rankPlatform]; truthy(p) {
		if e.Platform, e.PlatformKnown = e.rules.Platforms.Resolve(p, e.rules.NormalisePlatform); !e.PlatformKnown {
			e.Platform = internedString(p)
		}
	}
	e.ResumePending = truthy(v[rankResumePending])
	e.Suspended = truthy(v[rankSuspended])
	if r := v[rankResumeReason]; len(r) > 0 && r[0] == '"' {
		s := internedString(r)
		e.ResumeReason = &s
	}
	e.Finalized = truthy(finalizedRaw(v, e.rules.FinalizedFlag))
	e.LastPromptTokens = v[rankLastPromptTokens]
	e.lastResume(v[rankLastResumeMarked])
	e.turnStarted = turnMarker(v[rankTurnToken], v[rankTurnStartedAt])
}

// sessionKey decodes session_key, sharing Key's string when they are equal (the usual case).
func (e *Entry) sessionKey(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' && string(raw[1:len(raw)-1]) == e.Key {
		return e.Key
	}
	return stringValue(raw)
}

func finalizedRaw(v *entryView, flag string) []byte {
	if v.has(flag) || flag == fieldMemoryFlushed {
		return v.get(flag)
	}
	return v[rankMemoryFlushed]
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

// turnMarker is r0817's from_dict of the active-turn pair: the start time when the token is
// a non-empty string and the time parses, else nil (a partial or malformed pair is nulled).
func turnMarker(token, started []byte) *Timestamp {
	if len(token) <= 2 || token[0] != '"' || !isoString(started) {
		return nil
	}
	ts, _ := ParseISO(decodeString(started))
	return &ts
}

// TurnStartedAt returns the start of the turn the entry's active-turn marker says is running
// (r0817: active_turn_token and active_turn_started_at), and whether it has a valid one.
func (e *Entry) TurnStartedAt() (Timestamp, bool) {
	if e.turnStarted == nil {
		return Timestamp{}, false
	}
	return *e.turnStarted, true
}

func stringValue(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		return decodeString(raw)
	}
	return ""
}

// internedValues are string values shared by many entries (platforms, chat types, resume
// reasons), returned without allocating.
var internedValues = func() map[string]string {
	m := map[string]string{}
	for _, set := range []*PlatformSet{platformsR0418, platformsR0506, platformsR0525, platformsR0703, platformsR0817} {
		for p := range set.builtin {
			m[p] = p
		}
		for p := range set.bundled {
			m[p] = p
		}
	}
	for _, s := range []string{"dm", "group", "channel", "thread", "forum", "private", "supergroup",
		"restart_timeout", "shutdown_timeout", "restart_interrupted", "crash_recovery"} {
		m[s] = s
	}
	return m
}()

// internedValue returns the shared copy of s when it is a common value.
func internedValue(s string) string {
	if v, ok := internedValues[s]; ok {
		return v
	}
	return s
}

// internedString is stringValue that does not allocate for common values.
func internedString(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		if s, ok := internedValues[string(raw[1:len(raw)-1])]; ok {
			return s
		}
	}
	return stringValue(raw)
}

// origin applies SessionSource.from_dict where SessionEntry.from_dict calls it (see
// Rules.OriginDictOnly); false means the entry is skipped.
func (e *Entry) origin(raw []byte) bool {
	switch {
	case raw == nil:
		return true
	case e.rules.OriginDictOnly && raw[0] != '{', !e.rules.OriginDictOnly && !truthy(raw):
		return true // no origin
	case raw[0] != '{':
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
	if platform == nil {
		e.skip(SkipOriginNoPlatform, false)
		return false
	}
	p, ok := e.rules.Platforms.Resolve(platform, e.rules.NormalisePlatform)
	if !ok && !e.rules.Verified() {
		// a newer generation's platforms are not known: no skip is claimed for one sessionctl
		// cannot resolve (its runtime may well load it), and the entry is read as it stands
		p, ok = pyStr(platform), true
	}
	switch {
	case !ok:
		e.OriginPlatform = pyStr(platform)
		e.skip(SkipOriginPlatform, false)
		return false
	case chatID == nil:
		e.OriginPlatform = p
		e.skip(SkipOriginNoChatID, false)
		return false
	}
	e.OriginPlatform = p
	e.OriginChatID = pyStr(chatID)
	return true
}

// required checks the four required fields in from_dict order: session_key and session_id
// present (KeyError), their path safety (r0703+, ValueError), then the two timestamps.
func (e *Entry) required(v *entryView) bool {
	for _, name := range []string{"session_key", "session_id"} {
		if !v.has(name) {
			e.skip(skipMissingPrefix+name, false)
			return false
		}
	}
	if !e.pathSafety(v) {
		// skipped before its timestamps are read; they are still shown
		e.CreatedAt, e.UpdatedAt = quietTimestamp(v[rankCreatedAt]), quietTimestamp(v[rankUpdatedAt])
		return false
	}
	var ok bool
	if e.CreatedAt, ok = e.timestamp(v[rankCreatedAt], "created_at"); !ok {
		return false
	}
	e.UpdatedAt, ok = e.timestamp(v[rankUpdatedAt], "updated_at")
	return ok
}

// quietTimestamp is the parsed timestamp of a string value, zero when it is not one.
func quietTimestamp(raw []byte) Timestamp {
	if len(raw) == 0 || raw[0] != '"' {
		return Timestamp{}
	}
	ts, _ := ParseISO(decodeString(raw))
	return ts
}

func (e *Entry) timestamp(raw []byte, name string) (Timestamp, bool) {
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

// pathSafety applies the r0703+ key and id checks (gateway/session.py _is_path_unsafe,
// 4d4ba0831; _is_session_key_unsafe for the key from 83f14b2f2): a falsy value (null, "",
// 0, false, [], {}) passes, any other is checked as Python's str() of it, so a number loads.
// r0703 checks the key first, r0715 the id first. false means the entry is skipped.
func (e *Entry) pathSafety(v *entryView) bool {
	if e.rules.PathSafety == PathSafetyNone {
		return true
	}
	interior := e.rules.PathSafety == PathSafetyInteriorSlash
	key := func() bool {
		if p := SessionKeyProblem(pathValue(v[rankSessionKey]), interior); p != "" {
			e.skip("session_key"+skipPathUnsafeSuffix+p, false)
			return false
		}
		return true
	}
	id := func() bool {
		if p := SessionIDProblem(pathValue(v[rankSessionID])); p != "" {
			e.skip("session_id"+skipPathUnsafeSuffix+p, false)
			return false
		}
		return true
	}
	if interior {
		return id() && key()
	}
	return key() && id()
}

// pathValue is what the path checks look at: "" for a falsy value (it passes), else Python's
// str() of the value.
func pathValue(raw []byte) string {
	if !truthy(raw) {
		return ""
	}
	return pyStr(raw)
}
