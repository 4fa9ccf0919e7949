package sessionsjson

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

const validEntry = `{"session_key": "agent:main:telegram:dm:1", "session_id": "20260716_093000_abcdef12",
 "created_at": "2026-07-16T09:00:00", "updated_at": "2026-07-16T09:10:00.5", "platform": "telegram",
 "origin": {"platform": "telegram", "chat_id": 1, "chat_type": "dm"}}`

func TestDecodeCorrupt(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "unexpected end"},
		{"bom", "\xEF\xBB\xBF{}", "BOM"},
		{"invalid utf-8", "{\"a\xff\": 1}", "UTF-8"},
		{"array", `[1, 2]`, "an array, not an object"},
		{"string", `"x"`, "a string, not an object"},
		{"trailing", `{} {}`, "extra data"},
		{"trailing comma", `{"a": 1,}`, "expected a string key"},
		{"lower-case nan", `{"a": nan}`, "expected a value"},
		{"-NaN", `{"a": -NaN}`, "expected a digit"},
		{"+Infinity", `{"a": +Infinity}`, "expected a value"},
		{"Inf", `{"a": Inf}`, "expected a value"},
		{"integer over 4300 digits", `{"a": {"b": ` + strings.Repeat("7", 4301) + `}}`, "Python's json refuses integers of more than 4300 digits"},
		{"control char", "{\"a\": \"x\ny\"}", "control character"},
		{"bad escape", `{"a": "\x"}`, "invalid escape"},
		{"leading zero", `{"a": 01}`, "expected ',' or"},
		{"deep", `{"a": ` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`, "nesting deeper"},
		{"unterminated", `{"a": "x`, "unterminated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in), RulesFor(GenR0703))
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode error = %v, want ErrCorrupt containing %q", err, tt.want)
			}
		})
	}
}

func TestDecodeSkipReasons(t *testing.T) {
	tests := []struct {
		name  string
		gen   Generation
		entry string // JSON with %s-free content
		skip  string
	}{
		{"valid", GenR0703, validEntry, ""},
		{"not object r0703", GenR0703, `[1]`, SkipNotObject},
		{"not object r0525", GenR0525, `"x"`, SkipNotObject + skipTypeErrorSuffix},
		{"missing key", GenR0703, `{"session_id": "a", "created_at": "2026-07-16", "updated_at": "2026-07-16"}`, "missing session_key"},
		{"missing updated", GenR0418, `{"session_key": "k", "session_id": "a", "created_at": "2026-07-16"}`, "missing updated_at"},
		{"created malformed", GenR0703, `{"session_key": "k", "session_id": "a", "created_at": "2026-13-01", "updated_at": "2026-07-16"}`, "created_at malformed"},
		{"created number r0703", GenR0703, `{"session_key": "k", "session_id": "a", "created_at": 5, "updated_at": "2026-07-16"}`, "created_at not a string"},
		{"created number r0506", GenR0506, `{"session_key": "k", "session_id": "a", "created_at": 5, "updated_at": "2026-07-16"}`, "created_at not a string" + skipTypeErrorSuffix},
		{"unknown origin platform", GenR0703, `{"session_key": "k", "session_id": "a", "created_at": "2026-07-16", "updated_at": "2026-07-16", "origin": {"platform": "foo", "chat_id": "1"}}`, SkipOriginPlatform},
		{"origin without chat_id", GenR0703, `{"session_key": "k", "session_id": "a", "created_at": "2026-07-16", "updated_at": "2026-07-16", "origin": {"platform": "slack"}}`, SkipOriginNoChatID},
		{"origin string r0703", GenR0703, `{"session_key": "k", "session_id": "a", "created_at": "2026-07-16", "updated_at": "2026-07-16", "origin": "x"}`, ""},
		{"origin string r0418", GenR0418, `{"session_key": "k", "session_id": "a", "created_at": "2026-07-16", "updated_at": "2026-07-16", "origin": "x"}`, SkipOriginNotObject + skipTypeErrorSuffix},
		{"id unsafe r0703", GenR0703, `{"session_key": "k", "session_id": "../x", "created_at": "2026-07-16", "updated_at": "2026-07-16"}`, `session_id path-unsafe: contains ".."`},
		{"id unsafe r0525", GenR0525, `{"session_key": "k", "session_id": "../x", "created_at": "2026-07-16", "updated_at": "2026-07-16"}`, ""},
		{"key slash r0703", GenR0703, `{"session_key": "a/b", "session_id": "x", "created_at": "2026-07-16", "updated_at": "2026-07-16"}`, `session_key path-unsafe: contains "/"`},
		{"key slash r0715", GenR0715, `{"session_key": "a/b", "session_id": "x", "created_at": "2026-07-16", "updated_at": "2026-07-16"}`, ""},
		{"key drive r0715", GenR0715, `{"session_key": "C:x", "session_id": "x", "created_at": "2026-07-16", "updated_at": "2026-07-16"}`, "session_key path-unsafe: starts with a drive letter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := DecodeEntry("k", []byte(tt.entry), RulesFor(tt.gen))
			if err != nil {
				t.Fatal(err)
			}
			if e.Skip != tt.skip {
				t.Fatalf("Skip = %q, want %q", e.Skip, tt.skip)
			}
		})
	}
}

func TestDecodeEntryFields(t *testing.T) {
	raw := `{"session_key": "k", "session_id": "a", "created_at": "2026-07-16", "updated_at": "2026-07-16T10:00:00Z",
	 "platform": "foo", "resume_pending": 1, "resume_reason": "restart_timeout", "last_resume_marked_at": "nope",
	 "memory_flushed": true, "x_extra": [], "chat_type": "group", "origin": {"platform": "slack", "chat_id": null, "weird": 1},
	 "suspended": false, "suspended": "yes"}`
	e, err := DecodeEntry("k", []byte(raw), RulesFor(GenR0506))
	if err != nil || e.Skip != "" {
		t.Fatalf("DecodeEntry: %v %q", err, e.Skip)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"platform", e.Platform, "foo"},
		{"platform known", e.PlatformKnown, false},
		{"resume_pending", e.ResumePending, true},
		{"resume_reason", *e.ResumeReason, "restart_timeout"},
		{"last resume malformed", e.LastResumeMalformed, true},
		{"last resume", e.LastResumeMarkedAt == nil, true},
		{"finalized fallback", e.Finalized, true},
		{"suspended (last dup wins)", e.Suspended, true},
		{"chat type", e.ChatType, "group"},
		{"origin chat_id str(None)", e.OriginChatID, "None"},
		{"unknown", fmt.Sprint(e.UnknownFields), "[x_extra]"},
		{"unknown origin", fmt.Sprint(e.UnknownOriginFields), "[weird]"},
		{"updated aware", e.UpdatedAt.Aware, true},
		{"field count (dups merged)", len(e.Fields()), 13},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestDecodeTypeErrorAborts(t *testing.T) {
	data := []byte(`{"_README": "text", "a": ` + validEntry + `, "b": ` + validEntry + `}`)
	tests := []struct {
		gen       Generation
		entries   int
		skipFirst string
		skipLast  string
	}{
		{GenR0418, 3, SkipNotObject + skipTypeErrorSuffix, SkipAborted},
		{GenR0525, 3, SkipNotObject + skipTypeErrorSuffix, SkipAborted},
		{GenR0703, 2, "", ""},
	}
	for _, tt := range tests {
		d, err := Decode(data, RulesFor(tt.gen))
		if err != nil {
			t.Fatal(err)
		}
		es := d.Entries()
		if len(es) != tt.entries || es[0].Skip != tt.skipFirst || es[len(es)-1].Skip != tt.skipLast {
			t.Errorf("%s: %d entries, first %q last %q", tt.gen, len(es), es[0].Skip, es[len(es)-1].Skip)
		}
	}
}

func TestDecodeDuplicateKeys(t *testing.T) {
	data := []byte("{\n  \"a\": 1,\n  \"b\": " + validEntry + ",\n  \"a\": " + validEntry + "\n}")
	d, err := Decode(data, RulesFor(GenR0715))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Members()) != 3 || len(d.Entries()) != 2 || d.Entries()[0].Key != "a" || d.Entries()[0].Skip != "" {
		t.Fatalf("members %d entries %d first %+v", len(d.Members()), len(d.Entries()), d.Entries()[0])
	}
	e, _ := d.Entry("a").Set("suspended", true)
	if err := d.Replace("a", e); err != nil {
		t.Fatal(err)
	}
	out := d.Encode(true)
	if !bytes.HasPrefix(out, []byte("{\n  \"a\": 1,\n")) {
		t.Fatalf("first duplicate must keep its bytes:\n%s", out)
	}
	d2, err := Decode(out, RulesFor(GenR0715))
	if err != nil || !d2.Entry("a").Suspended {
		t.Fatalf("edit lost: %v", err)
	}
	if err := d.Replace("missing", e); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Replace(missing) = %v", err)
	}
}

func TestEntrySetInsertOrder(t *testing.T) {
	raw := `{"session_key": "k", "session_id": "a", "created_at": "2026-07-16", "updated_at": "2026-07-16",
	 "suspended": false, "resume_pending": false, "origin": {"platform": "slack", "chat_id": "1"}}`
	e, _ := DecodeEntry("k", []byte(raw), RulesFor(GenR0703))
	tests := []struct {
		field string
		value any
		after string // field expected just before the new one
	}{
		{"resume_reason", "restart_timeout", "resume_pending"},
		{"last_resume_marked_at", "2026-07-16T09:30:00.250000", "resume_pending"},
		{"x_custom", 3, "resume_pending"},
		{"display_name", nil, "updated_at"},
	}
	for _, tt := range tests {
		got, err := e.Set(tt.field, tt.value)
		if err != nil {
			t.Fatal(err)
		}
		fields := got.Fields()
		for i, f := range fields {
			if f.Name == tt.field && fields[i-1].Name != tt.after {
				t.Errorf("%s inserted after %s, want after %s", tt.field, fields[i-1].Name, tt.after)
			}
		}
	}
	if _, err := e.Set("x", struct{}{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Set(struct) = %v", err)
	}
	bad, _ := e.Set("session_id", "../x")
	if bad.Skip == "" || e.Skip != "" {
		t.Errorf("Set must re-evaluate the copy only: %q %q", bad.Skip, e.Skip)
	}
}

func TestEncodeEntryJSONAndRaw(t *testing.T) {
	raw := `{"b":"é😀","a":[],"o":{},"n":0.0,"m":1E2,"z":-0}`
	e, err := DecodeEntry("k", []byte(raw), RulesFor(GenR0715))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(EncodeEntryJSON(e, true)), `{"b": "\u00e9\ud83d\ude00", "a": [], "o": {}, "n": 0.0, "m": 100.0, "z": 0}`; got != want {
		t.Errorf("EncodeEntryJSON = %s, want %s", got, want)
	}
	if got, want := string(EncodeEntryJSON(e, false)), `{"b": "é😀", "a": [], "o": {}, "n": 0.0, "m": 100.0, "z": 0}`; got != want {
		t.Errorf("EncodeEntryJSON(utf8) = %s, want %s", got, want)
	}
	if got, want := string(e.Raw()), `{"b":"\u00e9\ud83d\ude00","a":[],"o":{},"n":0.0,"m":100.0,"z":0}`; got != want {
		t.Errorf("Raw = %s, want %s", got, want)
	}
	if _, err := DecodeEntry("k", []byte(`{`), RulesFor(GenR0715)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("DecodeEntry(invalid) = %v", err)
	}
}

func TestEncodeNonASCII(t *testing.T) {
	data := []byte("{\n  \"k\": {\n    \"display_name\": \"Zoë\",\n    \"suspended\": false\n  }\n}")
	if DetectASCIIOnly(data) {
		t.Fatal("DetectASCIIOnly = true")
	}
	d, err := Decode(data, RulesFor(GenR0703))
	if err != nil {
		t.Fatal(err)
	}
	e, _ := d.Entry("k").Set("suspended", true)
	_ = d.Replace("k", e)
	want := bytes.Replace(data, []byte("false"), []byte("true"), 1)
	if got := d.Encode(false); !bytes.Equal(got, want) {
		t.Errorf("Encode(false) =\n%s", got)
	}
	if got := d.Encode(true); !bytes.Contains(got, []byte(`Zo\u00eb`)) {
		t.Errorf("Encode(true) =\n%s", got)
	}
}

func TestReplaceRaw(t *testing.T) {
	data := []byte("{\n  \"k\": " + validEntry + "\n}")
	d, _ := Decode(data, RulesFor(GenR0703))
	if err := d.ReplaceRaw("k", []byte(`{"x": [1, {"y": null}]}`)); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"k\": {\n    \"x\": [\n      1,\n      {\n        \"y\": null\n      }\n    ]\n  }\n}"
	if got := string(d.Encode(true)); got != want {
		t.Errorf("Encode =\n%s\nwant\n%s", got, want)
	}
	if d.Entry("k").Skip != "missing session_key" {
		t.Errorf("entry not re-evaluated: %q", d.Entry("k").Skip)
	}
	if err := d.ReplaceRaw("k", []byte(`{`)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ReplaceRaw(invalid) = %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("{\n  \"_README\": \"x\",\n  \"k\": " + validEntry + "\n}"))
	f.Add([]byte(`{"a": {"b": [1, 2.50, "\u00e9\ud800"], "c": {}}, "a": 1}`))
	f.Add([]byte(`{"k": {"session_key": "k", "session_id": "../x", "created_at": 1}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte("\xEF\xBB\xBF{}"))
	f.Add([]byte(`{"k": {"session_key": "k", "n": NaN, "i": [Infinity, -Infinity, 1e999]}, "x": -Infinity}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, g := range []Generation{GenR0418, GenR0715} {
			fuzzDecodeOne(t, data, RulesFor(g))
		}
	})
}

// keysOf returns the keys eachKey reads, each where it first appears (the runtime's dict
// order).
func keysOf(data []byte, rules Rules) ([]string, error) {
	seen := map[string]bool{}
	var keys []string
	err := eachKey(data, rules, func(key string) {
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}, func(int) {})
	if err != nil {
		return nil, err
	}
	return keys, nil
}

func fuzzDecodeOne(t *testing.T, data []byte, rules Rules) {
	keys, kerr := keysOf(data, rules)
	d, err := Decode(data, rules)
	if (kerr == nil) != (err == nil) {
		t.Fatalf("eachKey: %v, Decode: %v", kerr, err)
	}
	if err != nil {
		return
	}
	var want []string
	for _, e := range d.Entries() {
		want = append(want, e.Key)
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("eachKey keys %q, Decode's entries %q", keys, want)
	}
	if !bytes.Equal(d.Encode(true), data) {
		t.Fatal("Encode without edits changed the bytes")
	}
	for _, e := range d.Entries() {
		if !e.IsObject() {
			continue
		}
		edited, err := e.Set("suspended", true)
		if err != nil {
			t.Fatal(err)
		}
		d2, _ := Decode(data, rules)
		if err := d2.Replace(e.Key, edited); err != nil {
			t.Fatal(err)
		}
		checkEdited(t, d, d2.Encode(DetectASCIIOnly(data)), e.Key, rules)
	}
}

// checkEdited re-decodes an edited file: every other entry has the same value, and the
// edited one differs only in "suspended".
func checkEdited(t *testing.T, orig *Document, out []byte, key string, rules Rules) {
	d, err := Decode(out, rules)
	if err != nil {
		t.Fatalf("re-decode: %v\n%s", err, out)
	}
	if len(d.Entries()) != len(orig.Entries()) {
		t.Fatalf("entries %d -> %d", len(orig.Entries()), len(d.Entries()))
	}
	for i, e := range orig.Entries() {
		got := d.Entries()[i]
		if e.Key != key {
			if !bytes.Equal(e.Raw(), got.Raw()) {
				t.Fatalf("entry %q changed: %s -> %s", e.Key, e.Raw(), got.Raw())
			}
			continue
		}
		back, _ := got.Set("suspended", false)
		want, _ := e.Set("suspended", false)
		if !got.Suspended || !bytes.Equal(back.Raw(), want.Raw()) {
			t.Fatalf("edited entry %q: %s -> %s", key, e.Raw(), got.Raw())
		}
	}
}

func TestDetectASCIIOnly(t *testing.T) {
	base := bytes.Repeat([]byte("a"), 37)
	if !DetectASCIIOnly(base) || !DetectASCIIOnly(nil) {
		t.Fatal("ASCII input reported non-ASCII")
	}
	for i := range base {
		data := bytes.Clone(base)
		data[i] = 0xc3
		if DetectASCIIOnly(data) {
			t.Errorf("high byte at %d not found", i)
		}
	}
}

// TestEncodeToMatchesEncode: streaming the document gives the bytes Encode builds.
func TestEncodeToMatchesEncode(t *testing.T) {
	for _, f := range fixtures(t) {
		d, _ := decodeFixture(t, f)
		for _, e := range d.Entries()[:2] {
			edited, err := e.Set("suspended", true)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Replace(e.Key, edited); err != nil {
				t.Fatal(err)
			}
		}
		var streamed bytes.Buffer
		if err := d.EncodeTo(&streamed, false); err != nil {
			t.Fatal(err)
		}
		encoded := d.Encode(false)
		if !bytes.Equal(streamed.Bytes(), encoded) || !bytes.Contains(encoded, []byte(`"suspended": true`)) {
			t.Errorf("%s: EncodeTo and Encode differ, or the edit is missing", f.name)
		}
	}
}

// TestEachKey: the keys eachKey reads are those of Decode's entries, in the same order once a
// duplicate is taken where it first appears; "_" keys are left out where the generation skips
// them (r0703+), and a file Decode refuses is refused.
func TestEachKey(t *testing.T) {
	tests := []struct {
		name, data string
		gen        Generation
		want       []string
		fails      bool
	}{
		{"duplicate first", `{"a": 1, "b": ` + validEntry + `, "a": ` + validEntry + `}`, GenR0715, []string{"a", "b"}, false},
		{"underscore skipped", `{"_README": "x", "k": ` + validEntry + `}`, GenR0715, []string{"k"}, false},
		{"underscore kept", `{"_README": "x", "k": ` + validEntry + `}`, GenR0418, []string{"_README", "k"}, false},
		{"empty", `{}`, GenR0715, nil, false},
		{"not an object", `[]`, GenR0715, nil, true},
		{"truncated", `{"a": {`, GenR0715, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := keysOf([]byte(tt.data), RulesFor(tt.gen))
			if (err != nil) != tt.fails {
				t.Fatalf("eachKey error %v, want failure %v", err, tt.fails)
			}
			if !slices.Equal(keys, tt.want) {
				t.Errorf("eachKey keys %q, want %q", keys, tt.want)
			}
			fuzzDecodeOne(t, []byte(tt.data), RulesFor(tt.gen))
		})
	}
}
