package sessionsjson

import (
	"encoding/json"
	"errors"
	"testing"
)

// noAnchor names no member: Insert puts a member after it at the end.
const noAnchor = "\x00none"

// TestRemoveAdd: a removed member goes with its separator and every other byte stays; one
// inserted after no member is appended in json.dump(indent=2)'s form; removing then adding
// gives valid JSON holding the same members.
func TestRemoveAdd(t *testing.T) {
	const three = "{\n  \"_README\": \"x\",\n  \"a\": {\"v\": 1},\n  \"b\": {\"v\": 2},\n  \"b\": {\"v\": 3}\n}\n"
	cases := []struct {
		name, data string
		remove     []string
		add        map[string]string
		want       string
	}{
		{"middle", three, []string{"a"}, nil, "{\n  \"_README\": \"x\",\n  \"b\": {\"v\": 2},\n  \"b\": {\"v\": 3}\n}\n"},
		{"duplicated last", three, []string{"b"}, nil, "{\n  \"_README\": \"x\",\n  \"a\": {\"v\": 1}\n}\n"},
		{"first", three, []string{"_README"}, nil, "{\n  \"a\": {\"v\": 1},\n  \"b\": {\"v\": 2},\n  \"b\": {\"v\": 3}\n}\n"},
		{"all", "{\n  \"a\": 1\n}", []string{"a"}, nil, "{}"}, // json.dumps({}, indent=2)
		{"add", "{\n  \"a\": 1\n}", nil, map[string]string{"c": `{"v":4}`}, "{\n  \"a\": 1,\n  \"c\": {\n    \"v\": 4\n  }\n}"},
		{"add to empty", "{}", nil, map[string]string{"c": `1`}, "{\n  \"c\": 1\n}"},
		{"remove and add", "{\n  \"a\": 1,\n  \"b\": 2\n}", []string{"a"}, map[string]string{"a": `1`}, "{\n  \"b\": 2,\n  \"a\": 1\n}"},
		{"remove all, add", "{\n  \"a\": 1\n}", []string{"a"}, map[string]string{"c": `2`}, "{\n  \"c\": 2\n}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Decode([]byte(c.data), RulesFor(GenR0418))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range c.remove {
				if err := d.Remove(k); err != nil {
					t.Fatal(err)
				}
			}
			for k, v := range c.add {
				if err := d.Insert(k, json.RawMessage(v), noAnchor); err != nil {
					t.Fatal(err)
				}
			}
			got := d.Encode(true)
			if string(got) != c.want {
				t.Errorf("Encode =\n%q\nwant\n%q", got, c.want)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %q", got)
			}
		})
	}
}

func TestRemoveAddRefusals(t *testing.T) {
	d, _ := Decode([]byte(`{"a": 1}`), RulesFor(GenR0418))
	if err := d.Remove("x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Remove(missing) = %v", err)
	}
	if err := d.Insert("a", json.RawMessage(`1`), noAnchor); !errors.Is(err, ErrInvalid) {
		t.Errorf("Insert(existing) = %v", err)
	}
	if err := d.Remove("a"); err != nil || d.Entry("a") != nil || len(d.Entries()) != 0 {
		t.Errorf("Remove(a) = %v, entry %v, entries %d", err, d.Entry("a"), len(d.Entries()))
	}
}
