package sessionsjson

import (
	"fmt"
	"slices"
)

// insertion is a member Insert adds after the member or insertion of key after ("" for the
// first place).
type insertion struct {
	key   string
	raw   []byte
	after string
}

// splice replaces data[from:to] with text when the document is encoded.
type splice struct {
	from, to int
	text     []byte
	order    int // among splices at the same from: insertions (0) before cuts and edits (1)
	seq      int
}

// Remove leaves key out of the document: every member of that key goes, with the separator
// and whitespace that led to it, so the rest keeps its bytes (what the runtime's save writes
// when its store dropped the entry: no such key). The key must exist.
func (d *Document) Remove(key string) error {
	if _, ok := d.last[key]; !ok {
		return fmt.Errorf("remove %q: no such key: %w", key, ErrNotFound)
	}
	if d.removed == nil {
		d.removed = map[int]bool{}
	}
	for i, m := range d.members {
		if m.key == key {
			d.removed[i] = true
		}
	}
	delete(d.last, key)
	d.entries = slices.DeleteFunc(d.entries, func(e *Entry) bool { return e.Key == key })
	return nil
}

// PrevKey returns the key of the member before key's first member ("" when it is the first),
// the place Insert puts it back.
func (d *Document) PrevKey(key string) string {
	for i, m := range d.members {
		if m.key == key {
			if i == 0 {
				return ""
			}
			return d.members[i-1].key
		}
	}
	return ""
}

// Insert adds key with the valid raw JSON value raw right after the member of key after (""
// for the first place): after a member the document holds and did not remove, or after a
// member inserted too (so a run of removed members comes back in order whatever order they
// are inserted in), else at the end. It writes the member the way Python's
// json.dump(indent=2) does. The key must not exist. Entry and Entries do not see inserted
// members.
func (d *Document) Insert(key string, raw []byte, after string) error {
	if _, ok := d.last[key]; ok {
		return fmt.Errorf("insert %q: the key exists: %w", key, ErrInvalid)
	}
	if err := validJSON(raw); err != nil {
		return fmt.Errorf("insert %q: %w", key, err)
	}
	d.inserts = append(d.inserts, insertion{key: key, raw: slices.Clone(raw), after: after})
	return nil
}

// placed orders the insertions: by the member each run follows (-1: the first place; an
// anchor neither held nor inserted: the last member left), each run in chain order (an
// insertion right after the one it names), else in the order they were added.
func (d *Document) placed() (order []insertion, base []int) {
	anchored := map[string][]int{} // anchor key -> insertions after it, in the order added
	inserted := map[string]bool{}
	for _, in := range d.inserts {
		inserted[in.key] = true
	}
	var roots []int
	for i, in := range d.inserts {
		_, held := d.last[in.after]
		if held || inserted[in.after] || in.after == "" {
			anchored[in.after] = append(anchored[in.after], i)
		} else {
			roots = append(roots, i) // its anchor is gone: at the end
		}
	}
	seen := map[int]bool{}
	var walk func(i, at int)
	walk = func(i, at int) {
		if seen[i] {
			return
		}
		seen[i] = true
		order, base = append(order, d.inserts[i]), append(base, at)
		for _, j := range anchored[d.inserts[i].key] {
			walk(j, at)
		}
	}
	for _, j := range anchored[""] {
		walk(j, -1)
	}
	for m := range d.members {
		if !d.removed[m] && d.last[d.members[m].key] == m {
			for _, j := range anchored[d.members[m].key] {
				walk(j, m)
			}
		}
	}
	for _, j := range roots {
		walk(j, d.lastKept())
	}
	for i := range d.inserts { // a cycle of insertions naming each other: at the end
		walk(i, d.lastKept())
	}
	return order, base
}

// lastKept is the index of the last member not removed, -1 when none is left.
func (d *Document) lastKept() int {
	for i := len(d.members) - 1; i >= 0; i-- {
		if !d.removed[i] {
			return i
		}
	}
	return -1
}

// firstKept is the index of the first member not removed, -1 when none is left.
func (d *Document) firstKept() int {
	for i := range d.members {
		if !d.removed[i] {
			return i
		}
	}
	return -1
}

// splices lists the byte ranges an encoding replaces, in file order: edited values, removed
// members (from the end of the member before, or from a leading member's key to the next
// key) and inserted members. At least one member is left (else rebuilt writes the file).
func (d *Document) splices(f pyFormatter) []splice {
	var out []splice
	first := d.firstKept()
	for i, m := range d.members {
		switch {
		case d.removed[i] && i < first:
			out = append(out, splice{from: m.keyStart, to: d.members[i+1].keyStart, order: 1})
		case d.removed[i]:
			out = append(out, splice{from: d.members[i-1].end, to: m.end, order: 1})
		case d.edits[i] != nil:
			out = append(out, splice{from: m.start, to: m.end, text: f.value(nil, d.edits[i], 1), order: 1})
		}
	}
	order, base := d.placed()
	for seq, in := range order {
		member := f.value(append(f.name(nil, Field{Name: in.key}), f.key...), in.raw, 1)
		if base[seq] < 0 {
			at := d.members[first].keyStart
			out = append(out, splice{from: at, to: at, text: f.newline(append(member, f.item...), 1), seq: seq})
			continue
		}
		at := d.members[base[seq]].end
		out = append(out, splice{from: at, to: at, text: append(f.newline([]byte(f.item), 1), member...), seq: seq})
	}
	slices.SortStableFunc(out, func(a, b splice) int {
		if a.from != b.from {
			return a.from - b.from
		}
		if a.order != b.order {
			return a.order - b.order
		}
		return a.seq - b.seq
	})
	return out
}

// rebuilt is the whole file when every member was removed: the inserted members, as
// json.dump(indent=2) writes an object ({} when there are none).
func (d *Document) rebuilt(f pyFormatter) []byte {
	order, _ := d.placed()
	fields := make([]Field, len(order))
	for i, in := range order {
		fields[i] = Field{Name: in.key, Raw: in.raw}
	}
	return f.object(nil, fields, 0)
}
