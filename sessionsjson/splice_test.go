package sessionsjson

import (
	"encoding/json"
	"testing"
)

// pyDump is what Python's json.dump(indent=2) writes for the members, in order.
func pyDump(t *testing.T, members ...string) []byte {
	t.Helper()
	fields := make([]Field, 0, len(members))
	for _, k := range members {
		fields = append(fields, Field{Name: k, Raw: json.RawMessage(`{"session_id": "` + k + `", "n": [1, 2]}`)})
	}
	return dumpFormatter(false).object(nil, fields, 0)
}

// TestRemoveInsertRoundTrip removes members (leading, inner, trailing, runs, all) and puts
// them back with Insert at PrevKey, in reverse order: the file comes back byte for byte, and a removal writes
// what json.dump writes without those members.
func TestRemoveInsertRoundTrip(t *testing.T) {
	all := []string{"_README", "a", "b", "c", "d"}
	for _, gone := range [][]string{{"a"}, {"_README"}, {"_README", "a"}, {"d"}, {"b", "c"}, {"a", "c", "d"}, all} {
		data := pyDump(t, all...)
		d, err := Decode(data, RulesFor(GenR0703))
		if err != nil {
			t.Fatal(err)
		}
		prev := map[string]string{}
		var left []string
		for _, k := range all {
			if contains(gone, k) {
				prev[k] = d.PrevKey(k)
				if err := d.Remove(k); err != nil {
					t.Fatal(err)
				}
			} else {
				left = append(left, k)
			}
		}
		removed := d.Encode(false)
		if want := pyDump(t, left...); string(removed) != string(want) {
			t.Errorf("remove %v:\n got %q\nwant %q", gone, removed, want)
		}
		back, err := Decode(removed, RulesFor(GenR0703))
		if err != nil {
			t.Fatal(err)
		}
		for i := len(gone) - 1; i >= 0; i-- { // the last first: the chain still holds
			k := gone[i]
			if err := back.Insert(k, d.members[indexOf(d, k)].raw(data), prev[k]); err != nil {
				t.Fatal(err)
			}
		}
		if got := back.Encode(false); string(got) != string(data) {
			t.Errorf("remove and insert %v:\n got %q\nwant %q", gone, got, data)
		}
	}
}

func (m member) raw(data []byte) []byte { return data[m.start:m.end] }

func indexOf(d *Document, key string) int {
	for i, m := range d.members {
		if m.key == key {
			return i
		}
	}
	return -1
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
