package sessionsjson

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// fixture is one runtime-written home under testdata/fixtures.
type fixture struct {
	name string
	gen  Generation
	dir  string
}

func fixtures(t testing.TB) []fixture {
	t.Helper()
	gens := map[string]Generation{
		"r0418-cb4addaca": GenR0418, "r0506-3b750715a": GenR0506, "r0525-3914089d5": GenR0525,
		"r0703-52d0d671e": GenR0703, "r0715-c2a3b9ce5": GenR0715,
	}
	var out []fixture
	for name, g := range gens {
		dir := filepath.Join("..", "testdata", "fixtures", name, "home")
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("fixture %s: %v", name, err)
		}
		out = append(out, fixture{name: name, gen: g, dir: dir})
	}
	return out
}

func readFixture(t testing.TB, f fixture, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decodeFixture(t testing.TB, f fixture) (*Document, []byte) {
	t.Helper()
	data := readFixture(t, f, "sessions/sessions.json")
	d, err := Decode(data, RulesFor(f.gen))
	if err != nil {
		t.Fatalf("%s: Decode: %v", f.name, err)
	}
	return d, data
}

func TestFixturesRoundTrip(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			d, data := decodeFixture(t, f)
			if got := d.Encode(true); !bytes.Equal(got, data) {
				t.Fatal("Encode without edits changed the bytes")
			}
			if len(d.Entries()) != 18 {
				t.Fatalf("entries = %d, want 18", len(d.Entries()))
			}
			for _, e := range d.Entries() {
				if e.Skip != "" || len(e.UnknownFields) > 0 || len(e.UnknownOriginFields) > 0 {
					t.Errorf("%s: skip %q unknown %v %v", e.Key, e.Skip, e.UnknownFields, e.UnknownOriginFields)
				}
				if e.SessionKey != e.Key || !e.PlatformKnown || e.OriginChatID == "" {
					t.Errorf("%s: decoded %+v", e.Key, e)
				}
				if err := d.Replace(e.Key, e); err != nil {
					t.Fatal(err)
				}
			}
			// Re-formatting every entry must reproduce the runtime's own bytes.
			if got := d.Encode(true); !bytes.Equal(got, data) {
				t.Fatalf("re-encoding every entry differs from the runtime's file:\n%s", firstDiff(got, data))
			}
		})
	}
}

func TestFixturesREADME(t *testing.T) {
	for _, f := range fixtures(t) {
		d, _ := decodeFixture(t, f)
		rules := RulesFor(f.gen)
		if got := d.README(); got != rules.README {
			t.Errorf("%s: README %q, rules say %q", f.name, got, rules.README)
		}
		if got := GenerationFromREADME(d.README()); rules.README != "" && got != f.gen {
			t.Errorf("%s: GenerationFromREADME = %s", f.name, got)
		}
		wantFirst := ""
		if rules.README != "" {
			wantFirst = "_README"
		}
		if (d.FirstKey() == "_README") != (wantFirst != "") {
			t.Errorf("%s: first key %q", f.name, d.FirstKey())
		}
	}
}

func TestFixturesEditOneField(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			d, data := decodeFixture(t, f)
			target := d.Entries()[3]
			edited, err := target.Set("suspended", true)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Replace(target.Key, edited); err != nil {
				t.Fatal(err)
			}
			got := d.Encode(true)
			d2, err := Decode(got, RulesFor(f.gen))
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range d.Members() {
				m2 := d2.Members()[i]
				if m.Key != m2.Key {
					t.Fatalf("member %d key %q -> %q", i, m.Key, m2.Key)
				}
				if m.Key != target.Key && !bytes.Equal(m.Raw, m2.Raw) {
					t.Errorf("member %q changed", m.Key)
				}
			}
			var before, after map[string]map[string]any
			mustUnmarshalEntries(t, data, &before)
			mustUnmarshalEntries(t, got, &after)
			if after[target.Key]["suspended"] != true || !d2.Entry(target.Key).Suspended {
				t.Fatal("edit not applied")
			}
			after[target.Key]["suspended"] = before[target.Key]["suspended"]
			if !reflect.DeepEqual(before, after) {
				t.Fatal("values other than the edited field changed")
			}
			// Exactly what the runtime would write: only that value differs.
			m := d.Members()[d.last[target.Key]]
			val := bytes.Replace(data[m.Start:m.End], []byte(`"suspended": false`), []byte(`"suspended": true`), 1)
			want := append(append(append([]byte{}, data[:m.Start]...), val...), data[m.End:]...)
			if !bytes.Equal(got, want) {
				t.Fatalf("edited file differs from the expected bytes:\n%s", firstDiff(got, want))
			}
		})
	}
}

func mustUnmarshalEntries(t *testing.T, data []byte, v *map[string]map[string]any) {
	t.Helper()
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	*v = map[string]map[string]any{}
	for k, raw := range all {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			(*v)[k] = m
		}
	}
}

func firstDiff(a, b []byte) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			lo := max(0, i-80)
			return "got:  " + string(a[lo:min(len(a), i+80)]) + "\nwant: " + string(b[lo:min(len(b), i+80)])
		}
	}
	return "lengths differ"
}

// FirstKey returns (for the tests) the first top-level key ("" for an empty object).
func (d *Document) FirstKey() string {
	if len(d.members) == 0 {
		return ""
	}
	return d.members[0].key
}
