package sessionsjson

import (
	"bytes"
	"strings"
	"testing"
)

// TestDecodePythonConstants: NaN, Infinity and -Infinity load in Python's json (and the
// runtime writes them back), so they are values, not corruption, wherever a value may be: the
// entry loads, the file round-trips byte for byte, an edited entry keeps them as Python's
// json.dump writes them (a float that overflows, 1e999, is written as Infinity), and origin's
// chat_id is their str().
func TestDecodePythonConstants(t *testing.T) {
	data := []byte(`{
  "k": {
    "session_key": "k",
    "session_id": "s1",
    "created_at": "2026-07-16T09:00:00",
    "updated_at": "2026-07-16T09:00:00",
    "platform": "telegram",
    "input_tokens": NaN,
    "estimated_cost_usd": Infinity,
    "x_list": [-Infinity, NaN, 1e999, -1e999, 1.5],
    "suspended": false,
    "origin": {"platform": "telegram", "chat_id": NaN}
  },
  "inf": Infinity,
  "j": {"session_key": "j", "session_id": "s2", "created_at": "2026-07-16T09:00:00", "updated_at": "2026-07-16T09:00:00", "platform": "telegram", "origin": {"platform": "telegram", "chat_id": -Infinity}}
}`)
	d, err := Decode(data, RulesFor(GenR0703))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if !bytes.Equal(d.Encode(false), data) {
		t.Errorf("unedited Encode changed the file")
	}
	k := d.Entry("k")
	if k.Skip != "" || k.OriginChatID != "nan" || d.Entry("j").OriginChatID != "-inf" {
		t.Errorf("k: skip %q, chat_id %q; j: chat_id %q", k.Skip, k.OriginChatID, d.Entry("j").OriginChatID)
	}
	if inf := d.Entry("inf"); inf == nil || inf.Skip != SkipNotObject {
		t.Errorf("a top-level Infinity member: %+v", inf)
	}
	e, err := k.Set("suspended", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Replace("k", e); err != nil {
		t.Fatal(err)
	}
	out := string(d.Encode(false))
	for _, want := range []string{`"input_tokens": NaN,`, `"estimated_cost_usd": Infinity,`,
		"-Infinity,\n      NaN,\n      Infinity,\n      -Infinity,\n      1.5", `"chat_id": NaN`, `"suspended": true`} {
		if !strings.Contains(out, want) {
			t.Errorf("edited file lacks %q:\n%s", want, out)
		}
	}
	if _, err := Decode([]byte(out), RulesFor(GenR0703)); err != nil {
		t.Errorf("edited file does not decode: %v", err)
	}
	if got := string(EncodeEntryJSON(e, true)); !strings.Contains(got, `"x_list": [-Infinity, NaN, Infinity, -Infinity, 1.5]`) {
		t.Errorf("EncodeEntryJSON = %s", got)
	}
	if c, err := DecodeCounts([]byte(`{"a": NaN, "b": Infinity, "c": -Infinity}`)); err != nil || c.Len() != 3 {
		t.Errorf("DecodeCounts: %v", err)
	}
}

// TestSameValue: values compare as Python compares what json.loads returns (NaN aside, which
// equals itself here): member order and whitespace do not matter, a repeated name counts with
// its last value, 1 == 1.0 and integers compare exactly, strings by their text.
func TestSameValue(t *testing.T) {
	big := strings.Repeat("9", 400)
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a": 1, "b": [true, null]}`, `{"b":[true,null],"a":1}`, true},
		{`{"a": 1, "a": 2}`, `{"a": 2}`, true},
		{`{"a": 1, "a": 2}`, `{"a": 1}`, false},
		{`{"a": 1}`, `{"a": 1, "b": 1}`, false},
		{`[1, 2]`, `[2, 1]`, false},
		{`1`, `1.0`, true},
		{`100`, `1E2`, true},
		{`-0`, `0`, true},
		{`0.1`, `0.10000000000000001`, true},
		{`9007199254740993`, `9007199254740992.0`, false},
		{big, big + ".0", false},
		{"[" + big + "]", "[ " + big + " ]", true},
		{big, "1" + big[1:], false},
		{`1e999`, `Infinity`, true},
		{`-1e999`, `-Infinity`, true},
		{`Infinity`, `-Infinity`, false},
		{`NaN`, `NaN`, true},
		{`[NaN]`, `[0]`, false},
		{`"é"`, `"\u00e9"`, true},
		{`"\ud800"`, `"\ufffd"`, false},
		{`true`, `1`, false},
		{`null`, `0`, false},
		{`"1"`, `1`, false},
		{`{`, `{`, false},
		{`{"a": nan}`, `{"a": nan}`, false},
	}
	for _, tt := range tests {
		if got := SameValue([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("SameValue(%.40s, %.40s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := SameValue([]byte(tt.b), []byte(tt.a)); got != tt.want {
			t.Errorf("SameValue(%.40s, %.40s) = %v, want %v (reversed)", tt.b, tt.a, got, tt.want)
		}
	}
}
