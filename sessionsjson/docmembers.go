package sessionsjson

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// addedMember is a member Add appends.
type addedMember struct {
	key string
	raw []byte
}

// Remove records the removal of key: every member of that name goes (a Python dict holds a
// key once), with the separator before it, the other members keep their bytes. The key must
// exist.
func (d *Document) Remove(key string) error {
	if _, ok := d.last[key]; !ok {
		return fmt.Errorf("remove %q: no such key: %w", key, ErrNotFound)
	}
	if d.removed == nil {
		d.removed = map[int]bool{}
	}
	for i := range d.members {
		m := &d.members[i]
		if m.key != key {
			continue
		}
		d.removed[i] = true
		if m.pos >= 0 {
			d.entries = append(d.entries[:m.pos:m.pos], d.entries[m.pos+1:]...) // a new array: callers may hold the old one
			for j := range d.members {
				if d.members[j].pos > m.pos {
					d.members[j].pos--
				}
			}
			m.pos = -1
		}
	}
	delete(d.last, key)
	return nil
}

// Add records a new member key with the raw value, written after the last member (where the
// runtime's dict puts a key it sets anew). The key must not exist.
func (d *Document) Add(key string, raw json.RawMessage) error {
	if _, ok := d.last[key]; ok {
		return fmt.Errorf("add %q: the key exists: %w", key, ErrInvalid)
	}
	if err := validJSON(raw); err != nil {
		return fmt.Errorf("add %q: %w", key, err)
	}
	d.added = append(d.added, addedMember{key: key, raw: slices.Clone(raw)})
	return nil
}

// encodeMembers writes the document with members removed or added: the text up to "{", each
// member kept (edited ones re-formatted) after its separator as written (the first one written
// after the first member's), the added members in json.dump(indent=2)'s form, then the text
// after the last member.
func (d *Document) encodeMembers(w io.Writer, asciiOnly bool) error {
	f := dumpFormatter(asciiOnly)
	brace := slices.Index(d.data, '{') + 1
	tail := append([]byte("\n"), trimLeading(d.data[brace:])...) // no member: "}" and what follows
	lead := []byte("\n  ")
	if n := len(d.members); n > 0 {
		tail = d.data[d.members[n-1].end:]
		lead = d.data[brace:d.keyStart(brace-1)]
	}
	if err := writeAll(w, d.data[:brace]); err != nil {
		return err
	}
	written := false
	for i, m := range d.members {
		if d.removed[i] {
			continue
		}
		start, sep := d.keyStart(brace-1), lead
		if i > 0 {
			start = d.keyStart(d.members[i-1].end)
			if written {
				sep = d.data[d.members[i-1].end:start]
			}
		}
		value := d.data[m.start:m.end]
		if raw, ok := d.edits[i]; ok {
			value = f.value(nil, raw, 1)
		}
		if err := writeAll(w, sep, d.data[start:m.start], value); err != nil {
			return err
		}
		written = true
	}
	for _, a := range d.added {
		sep := []byte(",\n  ")
		if !written {
			sep = lead
		}
		member := append(appendPyString(slices.Clone(sep), a.key, asciiOnly), ": "...)
		if err := writeAll(w, f.value(member, a.raw, 1)); err != nil {
			return err
		}
		written = true
	}
	return writeAll(w, tail)
}

// keyStart is where the key after position end starts: past a comma if one comes first (end
// is then a member's end), and the space after it. keyStart("{" position) is the first key's.
func (d *Document) keyStart(end int) int {
	i := end
	if d.data[i] != '{' {
		for i < len(d.data) && d.data[i] != ',' {
			i++
		}
	}
	return i + 1 + len(d.data[i+1:]) - len(trimLeading(d.data[i+1:]))
}

func trimLeading(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}
