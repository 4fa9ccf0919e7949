package sessionsjson

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Member is one top-level member of sessions.json, in file order.
type Member struct {
	// Key is the decoded key.
	Key string
	// Raw is the value bytes; Start and End are its range [Start, End) in the file.
	Raw        json.RawMessage
	Start, End int
	// Underscore is true for keys starting with "_" (sentinels such as _README).
	Underscore bool
}

// Document is a decoded sessions.json that keeps the original bytes, so that encoding
// rewrites only the members that were edited.
type Document struct {
	data    []byte
	rules   Rules
	members []Member
	fields  [][]Field      // per member: the object's members (nil for non-objects)
	last    map[string]int // key -> index of the member that wins (the last one)
	entries []*Entry       // dict order (first occurrence), value of the last occurrence
	index   map[string]int // key -> position in entries
	edits   map[int][]byte // member index -> replacement value (valid raw JSON)
}

// Decode parses sessions.json under the given rules. The top level must be a JSON object in
// strict UTF-8 without BOM; anything else is an ErrCorrupt error, as the runtime would fail to
// load it. Entries get Skip set wherever the runtime would not load them.
func Decode(data []byte, rules Rules) (*Document, error) {
	if err := checkText(data); err != nil {
		return nil, err
	}
	d := &Document{data: data, rules: rules, last: map[string]int{}}
	s := &scanner{data: data, collectDepth: 2}
	s.ws()
	if s.peek() != '{' {
		return nil, notObject(s)
	}
	err := s.members('}', true, func(k []byte, start, end int) {
		d.addMember(decodeString(k), start, end, s.take())
	})
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	d.buildEntries()
	return d, nil
}

func notObject(s *scanner) error {
	start, _, err := s.value()
	if err != nil {
		return err
	}
	if err := s.end(); err != nil {
		return err
	}
	return fmt.Errorf("top level is %s, not an object: %w", topLevelKind(s.data[start:]), ErrCorrupt)
}

func (d *Document) addMember(key string, start, end int, fields []Field) {
	switch {
	case d.data[start] != '{':
		fields = nil
	case fields == nil:
		fields = []Field{}
	}
	d.fields = append(d.fields, fields)
	d.last[key] = len(d.members)
	d.members = append(d.members, Member{
		Key: key, Raw: d.data[start:end], Start: start, End: end,
		Underscore: strings.HasPrefix(key, "_"),
	})
}

// buildEntries evaluates entries in Python dict order and applies the TypeError abort.
func (d *Document) buildEntries() {
	d.index = make(map[string]int, len(d.last))
	aborted := false
	for _, m := range d.members {
		if _, seen := d.index[m.Key]; seen || m.Underscore && d.rules.SkipUnderscoreKeys {
			continue
		}
		d.index[m.Key] = len(d.entries)
		e := d.entryAt(d.last[m.Key])
		if aborted {
			e.Skip = SkipAborted
		}
		aborted = aborted || e.typeError
		d.entries = append(d.entries, e)
	}
}

func (d *Document) entryAt(i int) *Entry {
	m := d.members[i]
	if d.fields[i] == nil {
		return newEntry(m.Key, m.Raw, nil, d.rules)
	}
	return newEntry(m.Key, nil, d.fields[i], d.rules)
}

// Bytes returns the original file contents.
func (d *Document) Bytes() []byte {
	return d.data
}

// Rules returns the rules the document was decoded with.
func (d *Document) Rules() Rules {
	return d.rules
}

// Members returns every top-level member in file order, duplicates included.
func (d *Document) Members() []Member {
	return d.members
}

// Entries returns the routing entries in the order the runtime iterates them (first
// occurrence of a key, value of its last occurrence), skipped ones included with Skip set.
// "_" keys are left out when the generation skips them.
func (d *Document) Entries() []*Entry {
	return d.entries
}

// Entry returns the entry for key, or nil.
func (d *Document) Entry(key string) *Entry {
	if i, ok := d.index[key]; ok {
		return d.entries[i]
	}
	return nil
}

// FirstKey returns the first top-level key ("" for an empty object).
func (d *Document) FirstKey() string {
	if len(d.members) == 0 {
		return ""
	}
	return d.members[0].Key
}

// Underscore returns the values of the "_" keys (last occurrence wins).
func (d *Document) Underscore() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, m := range d.members {
		if m.Underscore {
			out[m.Key] = m.Raw
		}
	}
	return out
}

// HasREADME reports whether the file has a "_README" key.
func (d *Document) HasREADME() bool {
	_, ok := d.last["_README"]
	return ok
}

// README returns the "_README" string value ("" when absent or not a string).
func (d *Document) README() string {
	i, ok := d.last["_README"]
	if !ok {
		return ""
	}
	return stringValue(d.members[i].Raw)
}

// Replace records an edit: the value of key becomes e. Only the winning (last) member of a
// duplicated key is rewritten. The key must exist.
func (d *Document) Replace(key string, e *Entry) error {
	if !e.IsObject() {
		return d.ReplaceRaw(key, e.value)
	}
	return d.replace(key, compactFormatter.object(nil, e.Fields, 0))
}

// ReplaceRaw records an edit with a raw JSON value, e.g. a journal's before-image on undo.
func (d *Document) ReplaceRaw(key string, raw json.RawMessage) error {
	if err := validJSON(raw); err != nil {
		return fmt.Errorf("replace %q: %w", key, err)
	}
	return d.replace(key, raw)
}

// replace records the edit and re-evaluates the entry (an entry the runtime never reaches
// because of an earlier TypeError stays aborted).
func (d *Document) replace(key string, raw []byte) error {
	i, ok := d.last[key]
	if !ok {
		return fmt.Errorf("replace %q: no such key: %w", key, ErrNotFound)
	}
	if d.edits == nil {
		d.edits = map[int][]byte{}
	}
	d.edits[i] = slices.Clone(raw)
	if j, ok := d.index[key]; ok {
		e := entryFromRaw(key, d.edits[i], d.rules)
		if d.entries[j].Skip == SkipAborted {
			e.Skip = SkipAborted
		}
		d.entries[j] = e
	}
	return nil
}

// Edited reports whether any edit was recorded.
func (d *Document) Edited() bool {
	return len(d.edits) > 0
}

// Encode returns the file with only the edited members' values replaced, each formatted like
// Python json.dump(indent=2, ensure_ascii=asciiOnly) at nesting depth 1. Every other byte is
// the original. Without edits it returns a copy of the original bytes.
func (d *Document) Encode(asciiOnly bool) []byte {
	out := make([]byte, 0, len(d.data)+len(d.edits)*256)
	prev := 0
	f := dumpFormatter(asciiOnly)
	for i, m := range d.members {
		raw, ok := d.edits[i]
		if !ok {
			continue
		}
		out = append(out, d.data[prev:m.Start]...)
		out = f.value(out, raw, 1)
		prev = m.End
	}
	return append(out, d.data[prev:]...)
}

// DetectASCIIOnly reports whether data has no raw non-ASCII bytes, i.e. whether it looks
// written with ensure_ascii=True.
func DetectASCIIOnly(data []byte) bool {
	for _, c := range data {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
