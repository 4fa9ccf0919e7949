package sessionsjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
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
// rewrites only the members that were edited. It holds the bytes plus a compact index of the
// members; entries refer to the bytes rather than copying them.
type Document struct {
	data    []byte
	rules   *Rules
	members []member
	last    map[string]int // key -> index of the member that wins (the last one)
	entries []*Entry       // dict order (first occurrence), value of the last occurrence
	edits   map[int][]byte // member index -> replacement value (valid raw JSON)
	removed map[int]bool   // member index -> the member is left out (Remove)
	inserts []insertion    // members added (Insert), in the order they were added
}

// member is the index record of one top-level member.
type member struct {
	key        string
	keyStart   int    // where the key starts (its opening quote)
	start, end int    // value range in data
	entry      *Entry // the member's entry (nil for "_" keys the generation skips)
	pos        int    // position of the key's entry in entries, on the winning member; else -1
}

// maxEntryChunk bounds how many entries are allocated at once while decoding; chunks grow
// with the document so that small files do not pay for a large one.
const maxEntryChunk = 128

// Decode parses sessions.json under the given rules. The top level must be a JSON object in
// strict UTF-8 without BOM; anything else is an ErrCorrupt error, as the runtime would fail to
// load it. Entries get Skip set wherever the runtime would not load them. The document refers
// to data (no copy is made): data must not be modified afterwards.
func Decode(data []byte, rules Rules) (*Document, error) {
	if err := checkText(data); err != nil {
		return nil, err
	}
	d := &Document{data: data, rules: sharedRules(rules), last: map[string]int{}}
	s := &scanner{data: data, collectDepth: 2}
	s.ws()
	if s.peek() != '{' {
		return nil, notObject(s)
	}
	var chunk []Entry
	err := s.members('}', true, func(k []byte, start, end int) {
		key := decodeString(k)
		m := member{key: key, keyStart: s.keyStart, start: start, end: end, pos: -1}
		if !strings.HasPrefix(key, "_") || !d.rules.SkipUnderscoreKeys {
			if len(chunk) == 0 {
				chunk = make([]Entry, min(maxEntryChunk, max(8, len(d.members))))
			}
			m.entry, chunk = &chunk[0], chunk[1:]
			m.entry.init(key, data[start:end], s.collected, d.rules)
		}
		s.collected = s.collected[:0]
		d.last[key] = len(d.members)
		d.members = append(d.members, m)
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

// eachKey calls fn with the key of each entry of sessions.json in the file's order (a
// duplicate key each time it appears; "_" keys left out where the generation skips them) and
// checks the file as Decode does, decoding no entry: for a reader that needs only which keys
// the file holds (the mirror of a db-primary home, whose entries come from gateway_routing).
// It fails where Decode fails, after calling fn for the keys before the fault. As it moves
// on it tells release that the bytes of data before an offset will not be read again in this
// pass (a mapped file lets their pages go); it makes two passes, the text check and the scan.
func eachKey(data []byte, rules Rules, fn func(key string), release func(upTo int)) error {
	if err := checkTextReleasing(data, release); err != nil {
		return err
	}
	s := &scanner{data: data}
	s.ws()
	if s.peek() != '{' {
		return notObject(s)
	}
	err := s.members('}', true, func(k []byte, _, end int) {
		if key := decodeString(k); !strings.HasPrefix(key, "_") || !rules.SkipUnderscoreKeys {
			fn(key)
		}
		release(end)
	})
	if err != nil {
		return err
	}
	return s.end()
}

func notObject(s *scanner) error {
	start, _, err := s.value()
	if err != nil {
		return err
	}
	if err := s.end(); err != nil {
		return err
	}
	kind := topLevelKind(s.data[start:])
	return &FormatError{Problem: ProblemNotObject, Detail: "top level is " + kind + ", not an object", Found: kind}
}

// buildEntries orders entries in Python dict order and applies the TypeError abort.
func (d *Document) buildEntries() {
	n := 0
	for i, m := range d.members {
		if m.entry != nil && d.last[m.key] == i {
			n++
		}
	}
	d.entries = make([]*Entry, 0, n)
	aborted := false
	for _, m := range d.members {
		w := &d.members[d.last[m.key]]
		if w.entry == nil || w.pos >= 0 {
			continue
		}
		w.pos = len(d.entries)
		e := w.entry
		if aborted {
			e.Skip = SkipAborted
		}
		aborted = aborted || e.typeError
		d.entries = append(d.entries, e)
	}
}

// Bytes returns the original file contents.
func (d *Document) Bytes() []byte {
	return d.data
}

// Rules returns the rules the document was decoded with.
func (d *Document) Rules() Rules {
	return *d.rules
}

// Members returns every top-level member in file order, duplicates included. The slice is
// built on each call.
func (d *Document) Members() []Member {
	out := make([]Member, len(d.members))
	for i, m := range d.members {
		out[i] = Member{
			Key: m.key, Raw: d.data[m.start:m.end], Start: m.start, End: m.end,
			Underscore: strings.HasPrefix(m.key, "_"),
		}
	}
	return out
}

// Entries returns the routing entries in the order the runtime iterates them (first
// occurrence of a key, value of its last occurrence), skipped ones included with Skip set.
// "_" keys are left out when the generation skips them.
func (d *Document) Entries() []*Entry {
	return d.entries
}

// Entry returns the entry for key, or nil.
func (d *Document) Entry(key string) *Entry {
	if i, ok := d.last[key]; ok {
		return d.members[i].entry
	}
	return nil
}

// Underscore returns the values of the "_" keys (last occurrence wins).
func (d *Document) Underscore() map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for _, m := range d.members {
		if strings.HasPrefix(m.key, "_") {
			out[m.key] = d.data[m.start:m.end]
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
	m := d.members[i]
	return stringValue(d.data[m.start:m.end])
}

// Replace records an edit: the value of key becomes e. Only the winning (last) member of a
// duplicated key is rewritten. The key must exist.
func (d *Document) Replace(key string, e *Entry) error {
	if !e.IsObject() {
		return d.ReplaceRaw(key, e.raw)
	}
	return d.replace(key, e.Raw())
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
	m := &d.members[i]
	if m.entry != nil {
		e := entryFromRaw(key, d.edits[i], d.rules)
		if m.entry.Skip == SkipAborted {
			e.Skip = SkipAborted
		}
		m.entry = e
		d.entries[m.pos] = e
	}
	return nil
}

// Edited reports whether any edit was recorded.
func (d *Document) Edited() bool {
	return len(d.edits) > 0 || len(d.removed) > 0 || len(d.inserts) > 0
}

// Encode returns the file with only the edited members' values replaced, the removed members
// left out and the inserted ones added, each formatted like Python json.dump(indent=2,
// ensure_ascii=asciiOnly) at nesting depth 1. Every other byte is the original. Without edits
// it returns a copy of the original bytes.
func (d *Document) Encode(asciiOnly bool) []byte {
	var out bytes.Buffer
	out.Grow(len(d.data) + len(d.edits)*256)
	_ = d.EncodeTo(&out, asciiOnly) // a bytes.Buffer does not fail
	return out.Bytes()
}

// EncodeTo writes what Encode returns to w, streaming the unchanged stretches of the file
// between edited members without building the whole document in memory.
func (d *Document) EncodeTo(w io.Writer, asciiOnly bool) error {
	f := dumpFormatter(asciiOnly)
	if d.firstKept() < 0 && (len(d.removed) > 0 || len(d.inserts) > 0) {
		return writeAll(w, d.rebuilt(f)) // no member is left to splice around
	}
	prev := 0
	for _, sp := range d.splices(f) {
		if err := writeAll(w, d.data[prev:sp.from], sp.text); err != nil {
			return err
		}
		prev = sp.to
	}
	return writeAll(w, d.data[prev:])
}

func writeAll(w io.Writer, parts ...[]byte) error {
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// DetectASCIIOnly reports whether data has no raw non-ASCII bytes, i.e. whether it looks
// written with ensure_ascii=True.
func DetectASCIIOnly(data []byte) bool {
	const high = 0x8080808080808080
	for len(data) >= 8 {
		if binary.LittleEndian.Uint64(data)&high != 0 {
			return false
		}
		data = data[8:]
	}
	for _, c := range data {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
