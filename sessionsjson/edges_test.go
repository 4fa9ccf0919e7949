package sessionsjson

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The runtime's loader at its edges (issue 17), generation by generation. Every case starts
// from the first entry of the generation's fixture sessions.json and changes one value; the
// expected outcome is read off the upstream code of that generation's commit, cited per table.

// genOrder lists the fixture generations oldest first (the columns of the tables below).
var genOrder = []Generation{GenR0418, GenR0506, GenR0525, GenR0703, GenR0715}

// byGen is one expectation per generation, in genOrder.
type byGen [5]bool

func (b byGen) of(g Generation) bool { return b[slices.Index(genOrder, g)] }

// fixtureBase returns the first entry of the generation's fixture (a telegram, slack or
// discord entry the runtime loads).
func fixtureBase(t *testing.T, f fixture) *Entry {
	t.Helper()
	d, _ := decodeFixture(t, f)
	e := d.Entries()[0]
	if e.Skip != "" || !e.OriginPresent || !e.PlatformKnown {
		t.Fatalf("%s: fixture entry %s: skip %q", f.name, e.Key, e.Skip)
	}
	return e
}

func sortedFixtures(t *testing.T) []fixture {
	fs := fixtures(t)
	sort.Slice(fs, func(i, j int) bool { return slices.Index(genOrder, fs[i].gen) < slices.Index(genOrder, fs[j].gen) })
	return fs
}

func mustSet(t *testing.T, e *Entry, field string, value any) *Entry {
	t.Helper()
	out, err := e.Set(field, value)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// withOriginPlatform replaces origin.platform (a raw JSON value) in the entry's origin.
func withOriginPlatform(t *testing.T, e *Entry, platform string) *Entry {
	t.Helper()
	origin, _ := e.Get("origin")
	fields := objectFields(origin, 8)
	for i := range fields {
		if fields[i].Name == "platform" {
			fields[i].Raw = json.RawMessage(platform)
		}
	}
	return mustSet(t, e, "origin", json.RawMessage(appendRawObject(nil, fields)))
}

func quoted(s string) string { return string(appendPyString(nil, s, true)) }

// platformCases: does Platform(value) resolve in each generation? Upstream gateway/config.py
// class Platform at cb4addaca (r0418: the enum only, no _missing_), 3b750715a, 3914089d5,
// 52d0d671e and c2a3b9ce5 (enum plus _missing_: strip, lower, bundled plugin names from
// plugins/platforms/ of that tree, listed with git ls-tree); the canonical value is what the
// runtime's to_dict writes (`self.platform.value`).
var platformCases = []struct {
	value, canonical string
	resolves         byGen
}{
	// item 1: the enum per generation
	{"telegram", "telegram", byGen{true, true, true, true, true}},
	{"qqbot", "qqbot", byGen{true, true, true, true, true}},
	{"yuanbao", "yuanbao", byGen{false, true, true, true, true}},                  // ab6879634
	{"msgraph_webhook", "msgraph_webhook", byGen{false, false, true, true, true}}, // 46a6f3902
	{"whatsapp_cloud", "whatsapp_cloud", byGen{false, false, false, true, true}},  // 984e6cb5b
	{"relay", "relay", byGen{false, false, false, true, true}},                    // b0999c82f
	// item 2: bundled plugin platforms of each tree
	{"irc", "irc", byGen{false, true, true, true, true}},
	{"teams", "teams", byGen{false, true, true, true, true}},
	{"google_chat", "google_chat", byGen{false, false, true, true, true}},
	{"line", "line", byGen{false, false, true, true, true}},
	{"ntfy", "ntfy", byGen{false, false, true, true, true}},
	{"simplex", "simplex", byGen{false, false, true, true, true}},
	{"photon", "photon", byGen{false, false, false, true, true}},
	{"raft", "raft", byGen{false, false, false, true, true}},
	{"my_own_plugin", "", byGen{}}, // a user's plugin: registered at run time, unknown here
	// item 3: _missing_ strips and lower-cases (str.strip, str.lower)
	{"Telegram", "telegram", byGen{false, true, true, true, true}},
	{"slack ", "slack", byGen{false, true, true, true, true}},
	{"\u00a0DISCORD\t", "discord", byGen{false, true, true, true, true}},
	{"IRC", "irc", byGen{false, true, true, true, true}},
	{"Google_Chat", "google_chat", byGen{false, false, true, true, true}},
	{"Slac\u212a", "slack", byGen{false, true, true, true, true}}, // KELVIN SIGN lowers to "k"
	{"\u0130rc", "", byGen{}},                                     // "İ".lower() is "i̇": not irc
	{"tele gram", "", byGen{}},
	{"   ", "", byGen{}},
}

// TestPlatformPerGeneration (items 1–3): an origin whose platform the generation does not
// resolve is skipped (SessionSource.from_dict raises ValueError, which every generation's
// loader catches); a top-level platform it does not resolve loads as null (from_dict catches
// ValueError there). A resolved one loads, and Saved writes the member's value.
func TestPlatformPerGeneration(t *testing.T) {
	for _, f := range sortedFixtures(t) {
		base := fixtureBase(t, f)
		for _, c := range platformCases {
			want := c.resolves.of(f.gen)
			t.Run(f.name+"/"+c.value, func(t *testing.T) {
				e := withOriginPlatform(t, base, quoted(c.value))
				switch {
				case want && (e.Skip != "" || e.OriginPlatform != c.canonical):
					t.Errorf("origin %q: skip %q, platform %q; the runtime loads it as %q", c.value, e.Skip, e.OriginPlatform, c.canonical)
				case !want && e.Skip != SkipOriginPlatform:
					t.Errorf("origin %q: skip %q; the runtime skips it (ValueError)", c.value, e.Skip)
				}
				top := mustSet(t, base, "platform", c.value)
				if top.Skip != "" || top.PlatformKnown != want || want && top.Platform != c.canonical {
					t.Errorf("platform %q: skip %q, known %v (%q); the runtime loads it, known %v", c.value, top.Skip, top.PlatformKnown, top.Platform, want)
				}
				if !want {
					return
				}
				both := withOriginPlatform(t, top, quoted(c.value))
				saved, changed := both.Saved()
				p, _ := saved.Get("platform")
				origin, _ := saved.Get("origin")
				op, _ := DecodeEntry("o", origin, RulesFor(f.gen))
				if string(p) != quoted(c.canonical) || !strings.Contains(string(origin), `"platform":`+quoted(c.canonical)) || op == nil {
					t.Errorf("saved: platform %s, origin %s; the runtime's save writes %q", p, origin, c.canonical)
				}
				if (c.value != c.canonical) != (len(changed) == 2) {
					t.Errorf("saved changed %v", changed)
				}
			})
		}
	}
}

// TestFromDictOwnRules (item 4): SessionEntry.from_dict's acceptance of origin, session_key
// and session_id per generation. Upstream gateway/session.py: r0418–r0525 (cb4addaca,
// 3b750715a, 3914089d5) parse origin only when truthy and check no path; r0703 (52d0d671e)
// parses origin when isinstance(dict) (9c994377e) and checks key and id with _is_path_unsafe
// (4d4ba0831: falsy passes, then str(value): "..", "/", "\", or s[0].isalpha() and s[1]
// == ":"); r0715 (c2a3b9ce5) checks the key with _is_session_key_unsafe (83f14b2f2).
func TestFromDictOwnRules(t *testing.T) {
	const loads = ""
	cases := []struct {
		name, field, value string
		skip               [5]string // per generation, in genOrder
	}{
		{"origin {}", "origin", `{}`, [5]string{loads, loads, loads, SkipOriginNoPlatform, SkipOriginNoPlatform}},
		{"origin null", "origin", `null`, [5]string{}},
		{"origin []", "origin", `[]`, [5]string{}},
		{"empty session_key", "session_key", `""`, [5]string{}},
		{"null session_key", "session_key", `null`, [5]string{}},
		{"numeric session_key", "session_key", `5`, [5]string{}},
		{"float session_key", "session_key", `1.5`, [5]string{}},
		{"false session_key", "session_key", `false`, [5]string{}},
		{"empty session_id", "session_id", `""`, [5]string{}},
		{"null session_id", "session_id", `null`, [5]string{}},
		{"numeric session_id", "session_id", `20260716`, [5]string{}},
		{"zero session_id", "session_id", `0`, [5]string{}},
		{"non-ASCII drive key", "session_key", `"é:agent"`, [5]string{loads, loads, loads,
			"session_key path-unsafe: starts with a drive letter", "session_key path-unsafe: starts with a drive letter"}},
		{"non-ASCII drive id", "session_id", `"Ω:1"`, [5]string{loads, loads, loads,
			"session_id path-unsafe: starts with a drive letter", "session_id path-unsafe: starts with a drive letter"}},
		{"digit colon id", "session_id", `"٣:1"`, [5]string{}},
		{"list id with ..", "session_id", `["..", "x"]`, [5]string{loads, loads, loads,
			`session_id path-unsafe: contains ".."`, `session_id path-unsafe: contains ".."`}},
		{"list key with /", "session_key", `["a/b"]`, [5]string{loads, loads, loads, `session_key path-unsafe: contains "/"`, loads}},
		{"list id with é", "session_id", `["é"]`, [5]string{}}, // repr keeps printable é: no backslash
		{"list id with tab", "session_id", `["\t"]`, [5]string{loads, loads, loads,
			`session_id path-unsafe: contains "\"`, `session_id path-unsafe: contains "\"`}}, // repr writes \t
	}
	for _, f := range sortedFixtures(t) {
		base := fixtureBase(t, f)
		col := slices.Index(genOrder, f.gen)
		for _, c := range cases {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				e := mustSet(t, base, c.field, json.RawMessage(c.value))
				if e.Skip != c.skip[col] {
					t.Errorf("%s = %s: skip %q, the runtime's %q", c.field, c.value, e.Skip, c.skip[col])
				}
				if strings.Contains(e.Skip, "path-unsafe") && e.UpdatedAt.Raw != base.UpdatedAt.Raw {
					t.Errorf("a path-unsafe entry lost its updated_at: %q", e.UpdatedAt.Raw)
				}
			})
		}
	}
}

// TestSavedDropsNoOrigin (item 8): SessionEntry.to_dict writes "origin" only `if
// self.origin:` (every generation). r0418–r0525 load "origin": {} (and null) as no origin,
// so their save drops it; from r0703 an empty dict is skipped (nothing to save) and a non-dict
// origin is ignored and dropped.
func TestSavedDropsNoOrigin(t *testing.T) {
	for _, f := range sortedFixtures(t) {
		base := fixtureBase(t, f)
		modern := RulesFor(f.gen).OriginDictOnly
		for _, c := range []struct {
			origin  string
			dropped bool
		}{{`{}`, !modern}, {`null`, true}, {`""`, true}, {`"x"`, modern}, {`[]`, true}} {
			t.Run(f.name+"/"+c.origin, func(t *testing.T) {
				e := mustSet(t, base, "origin", json.RawMessage(c.origin))
				saved, changed := e.Saved()
				_, has := saved.Get("origin")
				if has == c.dropped || (len(changed) == 1) != c.dropped {
					t.Errorf("origin %s (skip %q): saved keeps origin %v, changed %v; the runtime's save drops it: %v", c.origin, e.Skip, has, changed, c.dropped)
				}
				if c.dropped && (saved.Skip != "" || saved.OriginPresent) {
					t.Errorf("saved entry: skip %q", saved.Skip)
				}
			})
		}
		if saved, changed := base.Saved(); saved != base || changed != nil {
			t.Errorf("%s: a runtime-written entry changes on save: %v", f.name, changed)
		}
	}
}

// TestPyStr: Python's str() of JSON values, as the path checks see them (expected values
// printed by CPython 3.11's str(json.loads(...))).
func TestPyStr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[1, "a/b", null, true, 1.5, 1e400, -0.0]`, `[1, 'a/b', None, True, 1.5, inf, -0.0]`},
		{`{"a": "it's", "b": "say \"hi\"", "a": 2}`, `{'a': 2, 'b': 'say "hi"'}`},
		{`["\u00e9\u00a0\u2028\ud800\ud83d\ude00\t\u0001\u007f\u0085"]`, "['\u00e9\\xa0\\u2028\\ud800\U0001F600\\t\\x01\\x7f\\x85']"},
		{`{}`, `{}`}, {`[]`, `[]`},
		{`["both ' and \""]`, `['both \' and "']`},
		{`[NaN, -Infinity, 12345678901234567890, 0.1]`, `[nan, -inf, 12345678901234567890, 0.1]`},
		{`"plain"`, `plain`}, {`12`, `12`}, {`1E2`, `100.0`}, {`null`, `None`},
	} {
		if got := pyStr([]byte(c.in)); got != c.want {
			t.Errorf("pyStr(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSavedTurnFieldsR0817: an entry sessionctl changes in a v26 home is written as r0817's
// to_dict writes it (gateway/session.py at 481156139): metadata, the active-turn pair and
// prev_session_id in their to_dict places, the pair nulled where from_dict nulls it; unknown
// fields stay; older generations add nothing.
func TestSavedTurnFieldsR0817(t *testing.T) {
	const head = `{"session_key": "k", "session_id": "s", "created_at": "2026-07-16T09:00:00", "updated_at": "2026-07-16T09:00:00", "platform": "telegram", "chat_type": "dm", `
	for _, tt := range []struct {
		name, in, want string
		changed        []string
	}{
		{"r0715-shaped", head + `"suspended": false, "x_unknown": 1, "reset_had_activity": false}`,
			head + `"metadata": {}, "suspended": false, "x_unknown": 1, "active_turn_token": null, "active_turn_started_at": null, "reset_had_activity": false, "prev_session_id": null}`,
			[]string{"metadata", "active_turn_token", "active_turn_started_at", "prev_session_id"}},
		{"empty token nulls the pair", head + `"metadata": {"a": 1}, "active_turn_token": "", "active_turn_started_at": "2026-07-16T09:00:00", "prev_session_id": "p"}`,
			head + `"metadata": {"a": 1}, "active_turn_token": null, "active_turn_started_at": null, "prev_session_id": "p"}`,
			[]string{"active_turn_token", "active_turn_started_at"}},
		{"malformed start", head + `"metadata": {}, "active_turn_token": "abc", "active_turn_started_at": "soon", "prev_session_id": null}`,
			head + `"metadata": {}, "active_turn_token": "abc", "active_turn_started_at": null, "prev_session_id": null}`,
			[]string{"active_turn_started_at"}},
		{"r0817-shaped", head + `"metadata": {}, "active_turn_token": "abc", "active_turn_started_at": "2026-07-16T09:00:00", "prev_session_id": null}`,
			"", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := DecodeEntry("k", []byte(tt.in), RulesFor(GenR0817))
			if err != nil {
				t.Fatal(err)
			}
			saved, changed := e.Saved()
			if !slices.Equal(changed, tt.changed) {
				t.Errorf("changed %v, want %v", changed, tt.changed)
			}
			if tt.want == "" {
				if saved != e {
					t.Errorf("an r0817-shaped entry was rewritten: %s", saved.Text())
				}
				return
			}
			want, _ := DecodeEntry("k", []byte(tt.want), RulesFor(GenR0817))
			if !bytes.Equal(saved.Raw(), want.Raw()) {
				t.Errorf("saved\n%s\nwant\n%s", saved.Raw(), want.Raw())
			}
			old, _ := DecodeEntry("k", []byte(tt.in), RulesFor(GenR0715))
			if s, c := old.Saved(); s != old || c != nil {
				t.Errorf("r0715 rules added %v", c)
			}
		})
	}
}
