package commands

// The runtime's loader at its edges (issue 17, items 1–4, 7, 8), generation by generation,
// on copies of the fixture homes: each case puts one entry where the runtime of that
// generation keeps its routing index, then sessionctl lists it, suspends it and the stored
// entry is compared with what the runtime does. The expected outcome of every case is read off
// the upstream code of the generation's commit, cited per table.

import (
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// edgeGens are the fixture generations oldest first: the columns of the tables below.
var edgeGens = []string{"r0418", "r0506", "r0525", "r0703", "r0715", "r0817"}

// edgeCol returns the column of generation directory gen in edgeGens.
func edgeCol(t *testing.T, gen string) int {
	for i, g := range edgeGens {
		if strings.HasPrefix(gen, g) {
			return i
		}
	}
	t.Fatalf("generation %s is not in the edge tables", gen)
	return -1
}

// dbPrimary reports whether the fixture generation keeps its routing index in gateway_routing.
func dbPrimary(gen string) bool {
	return strings.HasPrefix(gen, "r0715") || strings.HasPrefix(gen, "r0817")
}

// baseEntry returns a copy of the first routing entry of the fixture's sessions.json, as a
// JSON object the runtime of that generation wrote and loads.
func baseEntry(t *testing.T, gen string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixturesRoot, gen, "home", "sessions", "sessions.json"))
	if err != nil {
		t.Fatal(err)
	}
	keys, all, err := decodeOrderedObject(data)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(all[firstEntryKey(keys)])
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// placement says where putEntry writes an entry.
type placement int

const (
	// inIndex: where the generation's runtime keeps it (sessions.json, or a gateway_routing
	// row of this home's scope and its mirror copy).
	inIndex placement = iota
	// mirrorOnly: in sessions.json only (a legacy entry on a db-primary home).
	mirrorOnly
	// rowOnly: a gateway_routing row of this scope only (db-primary).
	rowOnly
)

// putEntry adds the entry under key to the home.
func putEntry(t *testing.T, home, gen, key string, entry any, where placement) {
	t.Helper()
	raw, err := json.Marshal(entry)
	if err != nil {
		t.Fatal(err)
	}
	if where != rowOnly || !dbPrimary(gen) {
		path := sessionsJSONPath(home)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		end := strings.LastIndexByte(string(data), '}')
		k, _ := json.Marshal(key)
		out := string(data[:end]) + ",\n  " + string(k) + ": " + string(raw) + "\n}\n"
		if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if dbPrimary(gen) && where != mirrorOnly {
		db := openDB(t, home, "rw")
		defer db.Close()
		if _, err := db.Exec(`INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at) VALUES (?, ?, ?, 1784194000)`,
			resolvedSessionsDir(home), key, string(raw)); err != nil {
			t.Fatal(err)
		}
	}
}

func openDB(t *testing.T, home, mode string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteURI(filepath.Join(home, "state.db"), mode))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// storedEntry returns the entry under key in sessions.json (mirror false on db-primary homes:
// the gateway_routing row of this scope), nil when absent.
func storedEntry(t *testing.T, home, gen, key string, mirror bool) map[string]any {
	t.Helper()
	var raw []byte
	if dbPrimary(gen) && !mirror {
		db := openDB(t, home, "ro")
		defer db.Close()
		err := db.QueryRow(`SELECT entry_json FROM gateway_routing WHERE scope = ? AND session_key = ?`, resolvedSessionsDir(home), key).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			t.Fatal(err)
		}
	} else {
		data, err := os.ReadFile(sessionsJSONPath(home))
		if err != nil {
			t.Fatal(err)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(data, &all); err != nil {
			t.Fatal(err)
		}
		if raw = all[key]; raw == nil {
			return nil
		}
	}
	var e map[string]any
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// listed is one row of `entries list --json`.
type listed struct {
	Key      string `json:"key"`
	Platform string `json:"platform"`
	Skip     string `json:"skipped_by_runtime"`
	Legacy   bool   `json:"legacy"`
}

// listEntry returns key's row of `entries list --json` (ok false when it is not listed).
func listEntry(t *testing.T, home, key string) (listed, bool) {
	t.Helper()
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "entries", "list")
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("entries list: exit %d\n%s", code, stderr)
	}
	var env struct {
		Data struct {
			Entries []listed `json:"entries"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(env.Data.Entries, func(l listed) bool { return l.Key == key })
	if i < 0 {
		return listed{}, false
	}
	return env.Data.Entries[i], true
}

// suspendJSON runs `suspend KEY --apply --json` and returns its exit code and envelope.
func suspendJSON(t *testing.T, home, key string) (int, envelopeResult) {
	t.Helper()
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "suspend", key, "--apply")
	var env envelopeResult
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatalf("suspend: %v\n%s\n%s", err, stdout, stderr)
	}
	return code, env
}

type envelopeResult struct {
	Applied  bool `json:"applied"`
	Findings []struct {
		Check string `json:"check"`
	} `json:"findings"`
	Changes []struct {
		Store, Target, Op string
	} `json:"changes"`
	Journal string `json:"journal"`
}

// edgeCase is one entry put into a home, and what the runtime of each generation does with it.
type edgeCase struct {
	name  string
	edit  func(e map[string]any) // applied to a copy of baseEntry
	skips [6]string              // per generation: the skip reason, "" when the runtime loads it
	// saved checks the stored entry after sessionctl suspended it (loaded cases only).
	saved func(t *testing.T, col int, e map[string]any)
}

func setOriginPlatform(p string) func(map[string]any) {
	return func(e map[string]any) {
		e["origin"].(map[string]any)["platform"] = p
		e["platform"] = p
	}
}

// platformSaved: the runtime's save writes the member's value at the top level and in origin
// (SessionEntry.to_dict / SessionSource.to_dict: `self.platform.value`).
func platformSaved(canonical string) func(*testing.T, int, map[string]any) {
	return func(t *testing.T, _ int, e map[string]any) {
		if e["platform"] != canonical || e["origin"].(map[string]any)["platform"] != canonical {
			t.Errorf("saved platform %v, origin.platform %v; the runtime's save writes %q", e["platform"], e["origin"].(map[string]any)["platform"], canonical)
		}
	}
}

const unknownOrigin = "unknown origin platform"

// platformEdgeCases (items 1–3). Upstream gateway/config.py class Platform at cb4addaca (enum
// only), 3b750715a (+ yuanbao; _missing_ with irc, teams), 3914089d5 (+ msgraph_webhook;
// google_chat, line, ntfy, simplex), 52d0d671e and c2a3b9ce5 (+ whatsapp_cloud, relay; photon,
// raft), 481156139 (r0817: the same enum; + a2a, buzz): SessionSource.from_dict's Platform(...) raises ValueError for a name the generation
// lacks and every generation's loader skips the entry; _missing_ (r0506+) strips and
// lower-cases the value first.
func platformEdgeCases() []edgeCase {
	u := unknownOrigin
	return []edgeCase{
		{"yuanbao", setOriginPlatform("yuanbao"), [6]string{u, "", "", "", "", ""}, platformSaved("yuanbao")},
		{"msgraph_webhook", setOriginPlatform("msgraph_webhook"), [6]string{u, u, "", "", "", ""}, platformSaved("msgraph_webhook")},
		{"whatsapp_cloud", setOriginPlatform("whatsapp_cloud"), [6]string{u, u, u, "", "", ""}, platformSaved("whatsapp_cloud")},
		{"relay", setOriginPlatform("relay"), [6]string{u, u, u, "", "", ""}, platformSaved("relay")},
		{"irc", setOriginPlatform("irc"), [6]string{u, "", "", "", "", ""}, platformSaved("irc")},
		{"teams", setOriginPlatform("teams"), [6]string{u, "", "", "", "", ""}, platformSaved("teams")},
		{"google_chat", setOriginPlatform("google_chat"), [6]string{u, u, "", "", "", ""}, platformSaved("google_chat")},
		{"line", setOriginPlatform("line"), [6]string{u, u, "", "", "", ""}, platformSaved("line")},
		{"ntfy", setOriginPlatform("ntfy"), [6]string{u, u, "", "", "", ""}, platformSaved("ntfy")},
		{"simplex", setOriginPlatform("simplex"), [6]string{u, u, "", "", "", ""}, platformSaved("simplex")},
		{"photon", setOriginPlatform("photon"), [6]string{u, u, u, "", "", ""}, platformSaved("photon")},
		{"raft", setOriginPlatform("raft"), [6]string{u, u, u, "", "", ""}, platformSaved("raft")},
		{"a2a", setOriginPlatform("a2a"), [6]string{u, u, u, u, u, ""}, platformSaved("a2a")},
		{"buzz", setOriginPlatform("buzz"), [6]string{u, u, u, u, u, ""}, platformSaved("buzz")},
		{"a user's plugin", setOriginPlatform("my_plugin"), [6]string{u, u, u, u, u, u}, nil},
		{"Telegram", setOriginPlatform("Telegram"), [6]string{u, "", "", "", "", ""}, platformSaved("telegram")},
		{"slack+space", setOriginPlatform("slack "), [6]string{u, "", "", "", "", ""}, platformSaved("slack")},
		{"IRC", setOriginPlatform("IRC"), [6]string{u, "", "", "", "", ""}, platformSaved("irc")},
	}
}

// fromDictEdgeCases (items 4 and 8). Upstream gateway/session.py SessionEntry.from_dict:
// r0418–r0525 (cb4addaca, 3b750715a, 3914089d5) parse origin only when it is truthy and check
// no path; r0703 (52d0d671e) parses it when it is a dict (9c994377e: {} then raises KeyError
// 'platform', caught, skipped) and checks session_key and session_id with _is_path_unsafe
// (4d4ba0831: `if not value: return False`, then str(value), s[0].isalpha()); r0715
// (c2a3b9ce5) checks the key with _is_session_key_unsafe (83f14b2f2); r0817 (481156139)
// loads metadata through dict(value or {}), which raises on a string. to_dict writes origin
// only `if self.origin:` (every generation).
func fromDictEdgeCases() []edgeCase {
	const noPlatform = "origin missing platform"
	drive := "session_key path-unsafe: starts with a drive letter"
	originDropped := func(t *testing.T, _ int, e map[string]any) {
		if _, ok := e["origin"]; ok {
			t.Errorf("saved entry keeps origin %v; the runtime's save drops an origin it loaded as none", e["origin"])
		}
	}
	set := func(field string, value any) func(map[string]any) {
		return func(e map[string]any) { e[field] = value }
	}
	return []edgeCase{
		{"origin {}", set("origin", map[string]any{}), [6]string{"", "", "", noPlatform, noPlatform, noPlatform}, originDropped},
		{"origin null", set("origin", nil), [6]string{}, originDropped},
		{"empty session_key", set("session_key", ""), [6]string{}, nil},
		{"null session_key", set("session_key", nil), [6]string{}, nil},
		{"numeric session_key", set("session_key", 5), [6]string{}, nil},
		{"empty session_id", set("session_id", ""), [6]string{}, nil},
		{"null session_id", set("session_id", nil), [6]string{}, nil},
		{"numeric session_id", set("session_id", 20260716), [6]string{}, nil},
		{"metadata a string", set("metadata", "ab"), [6]string{"", "", "", "", "", "metadata not a mapping"}, nil},
		{"metadata pairs", set("metadata", []any{[]any{"a", 1}}), [6]string{}, nil},
		{"é: session_key", set("session_key", "é:agent"), [6]string{"", "", "", drive, drive, drive}, nil},
	}
}

// savedMember asserts a stored entry's member: want per generation column (absent: the
// member is not there; nil: null).
type savedWant struct {
	value  any
	absent bool
}

func savedMember(path []string, wants [6]savedWant) func(*testing.T, int, map[string]any) {
	return func(t *testing.T, col int, e map[string]any) {
		t.Helper()
		m := e
		for _, p := range path[:len(path)-1] {
			m, _ = m[p].(map[string]any)
		}
		got, ok := m[path[len(path)-1]]
		want := wants[col]
		if ok == want.absent || ok && !jsonEqual(got, want.value) {
			t.Errorf("saved %s = %v (present %v); the runtime's save writes %v (absent %v)", strings.Join(path, "."), got, ok, want.value, want.absent)
		}
	}
}

// saveFormEdgeCases (issue 29 item 3): an entry sessionctl edits is written as the runtime's
// save writes it. SessionEntry.to_dict at 481156139 (r0817) writes `metadata` as from_dict's
// `dict(data.get("metadata") or {})` made it, active_turn_started_at as isoformat() of what
// fromisoformat read ("Z" → "+00:00"), and SessionSource.to_dict writes
// prospective_thread_id only when truthy; every generation's to_dict writes the top-level
// platform `self.platform.value if self.platform else None` (cb4addaca … 481156139), so a
// name the generation does not resolve is written null (the origin, slack, loads). Before
// r0817 metadata and the origin member are fields the runtime does not know: kept.
func saveFormEdgeCases() []edgeCase {
	set := func(field string, value any) func(map[string]any) {
		return func(e map[string]any) { e[field] = value }
	}
	keep := func(v any) [6]savedWant {
		return [6]savedWant{{value: v}, {value: v}, {value: v}, {value: v}, {value: v}, {value: v}}
	}
	r0817 := func(old, v any) [6]savedWant {
		w := keep(old)
		w[5] = savedWant{value: v}
		return w
	}
	pairs := []any{[]any{"thread_ts", "1784.5"}, []any{"a", 1}}
	thread := r0817(nil, nil)
	for i := range thread {
		thread[i] = savedWant{value: ""}
	}
	thread[5] = savedWant{absent: true}
	return []edgeCase{
		{"save form: metadata pairs", set("metadata", pairs), [6]string{}, savedMember([]string{"metadata"}, r0817(pairs, map[string]any{"thread_ts": "1784.5", "a": 1}))},
		{"save form: metadata null", set("metadata", nil), [6]string{}, savedMember([]string{"metadata"}, r0817(nil, map[string]any{}))},
		{"save form: metadata empty string", set("metadata", ""), [6]string{}, savedMember([]string{"metadata"}, r0817("", map[string]any{}))},
		{"save form: turn start with Z", func(e map[string]any) {
			e["active_turn_token"], e["active_turn_started_at"] = "tok-1", "2026-07-16T09:00:00.5Z"
		}, [6]string{}, savedMember([]string{"active_turn_started_at"}, r0817("2026-07-16T09:00:00.5Z", "2026-07-16T09:00:00.500000+00:00"))},
		{"save form: empty prospective_thread_id", func(e map[string]any) {
			e["origin"].(map[string]any)["prospective_thread_id"] = ""
		}, [6]string{}, savedMember([]string{"origin", "prospective_thread_id"}, thread)},
		{"save form: unknown top-level platform", set("platform", "zulip"), [6]string{}, savedMember([]string{"platform"}, keep(nil))},
	}
}

// TestEdgeLoadAndRepair (items 1–4, 8): per generation and case, sessionctl lists the entry
// as loaded or skipped exactly as the runtime loads or skips it; a loaded one is suspended
// and stored in the runtime's save form, a skipped one is left byte for byte as it is.
func TestEdgeLoadAndRepair(t *testing.T) {
	cases := append(platformEdgeCases(), fromDictEdgeCases()...)
	cases = append(cases, saveFormEdgeCases()...)
	for _, gen := range requireGenerations(t) {
		col := edgeCol(t, gen)
		for _, c := range cases {
			t.Run(gen+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, gen)
				const key = "agent:main:edge:dm:1"
				e := baseEntry(t, gen)
				c.edit(e)
				putEntry(t, home, gen, key, e, inIndex)
				l, ok := listEntry(t, home, key)
				if want := c.skips[col]; !ok || l.Skip != want {
					t.Fatalf("entries list: listed %v, skipped %q; the runtime: skipped %q", ok, l.Skip, want)
				}
				before := snapshotHome(t, home)
				code, env := suspendJSON(t, home, key)
				if c.skips[col] != "" {
					if code != ExitOK || env.Applied || len(env.Findings) == 0 || env.Findings[0].Check != "entry.skipped" {
						t.Fatalf("suspend of a skipped entry: exit %d, %+v", code, env)
					}
					assertSameSnapshot(t, "suspend of a skipped entry", before, snapshotHome(t, home))
					return
				}
				if code != ExitOK || !env.Applied {
					t.Fatalf("suspend: exit %d, %+v", code, env)
				}
				for _, mirror := range []bool{false, true} {
					saved := storedEntry(t, home, gen, key, mirror)
					if saved["suspended"] != true {
						t.Fatalf("stored entry (mirror %v) not suspended: %v", mirror, saved)
					}
					if c.saved != nil {
						c.saved(t, col, saved)
					}
				}
				if l, _ := listEntry(t, home, key); l.Skip != "" {
					t.Fatalf("after the edit the entry is skipped: %q", l.Skip)
				}
			})
		}
	}
}

// TestEdgeLegacyEntries (issue 29 items 1 and 2; also r0715): on a v19+ home whose
// gateway_routing holds rows of this scope, the runtime also imports the sessions.json entries
// of keys it did not load from the table (gateway/session.py _ensure_loaded_locked at
// c2a3b9ce5 and 481156139: "Only fills keys the DB didn't provide"; a row from_dict rejects,
// or whose entry_json json.loads rejects, does not count) and acts on them; its save then
// writes a gateway_routing row with the change. sessionctl lists them as legacy and writes
// their edit as that save would: the row (replacing the one the load skipped) and the
// mirror's copy; undo puts the row back as it was (none, or the skipped row's bytes). On the
// json-primary generations the same entry is simply an entry of sessions.json.
func TestEdgeLegacyEntries(t *testing.T) {
	type legacyCase struct {
		name     string
		row      func(map[string]any) // the gateway_routing row of the key, nil for none
		rowRaw   string               // or its entry_json as written
		mirror   func(map[string]any) // the sessions.json entry
		skip     string               // the runtime's verdict on the key (r0715)
		legacyDB bool                 // r0715: listed as legacy
	}
	keep := func(map[string]any) {}
	cases := []legacyCase{
		{"only in sessions.json", nil, "", keep, "", true},
		{"only in sessions.json, skipped there", nil, "", func(e map[string]any) { e["origin"] = map[string]any{} }, "origin missing platform", true},
		{"row skipped, sessions.json loads", func(e map[string]any) { e["origin"] = map[string]any{} }, "", keep, "", true},
		{"row not JSON, sessions.json loads", nil, `{"session_key": `, keep, "", true},
		{"row not an object, sessions.json loads", nil, `[]`, keep, "", true},
		{"row padded, not an object", nil, " [] ", keep, "", true},
	}
	for _, gen := range requireGenerations(t) {
		for _, c := range cases {
			t.Run(gen+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, gen)
				const key = "agent:main:telegram:dm:990001"
				e := baseEntry(t, gen)
				c.mirror(e)
				hasRow := c.row != nil || c.rowRaw != ""
				if dbPrimary(gen) && c.row != nil {
					row := baseEntry(t, gen)
					c.row(row)
					putEntry(t, home, gen, key, row, rowOnly)
				}
				if dbPrimary(gen) && c.rowRaw != "" {
					putRawRow(t, home, key, c.rowRaw)
				}
				putEntry(t, home, gen, key, e, mirrorOnly)
				wantSkip, wantLegacy := c.skip, c.legacyDB && dbPrimary(gen)
				if !dbPrimary(gen) && hasRow {
					wantSkip = "" // json-primary: sessions.json is the index; its entry loads
				}
				if strings.HasPrefix(gen, "r04") || strings.HasPrefix(gen, "r05") {
					wantSkip = "" // r0418–r0525 load "origin": {} as no origin
				}
				l, ok := listEntry(t, home, key)
				if !ok || l.Skip != wantSkip || l.Legacy != wantLegacy {
					t.Fatalf("entries list: listed %v %+v; want skipped %q, legacy %v", ok, l, wantSkip, wantLegacy)
				}
				rowBefore := rawRow(t, home, gen, key)
				code, env := suspendJSON(t, home, key)
				if wantSkip != "" {
					if code != ExitOK || env.Applied {
						t.Fatalf("suspend of a skipped legacy entry: exit %d %+v", code, env)
					}
					return
				}
				if code != ExitOK || !env.Applied {
					t.Fatalf("suspend: exit %d %+v", code, env)
				}
				if got := storedEntry(t, home, gen, key, true); got["suspended"] != true {
					t.Fatalf("sessions.json entry not suspended: %v", got)
				}
				if dbPrimary(gen) {
					if got := storedEntry(t, home, gen, key, false); got["suspended"] != true || got["session_id"] != e["session_id"] {
						t.Fatalf("gateway_routing row not written from the imported entry: %v", got)
					}
					if env.Changes[0].Store != "gateway_routing" {
						t.Errorf("change store %q", env.Changes[0].Store)
					}
				}
				code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "undo", env.Journal, "--apply")
				if code != ExitOK {
					t.Fatalf("undo: exit %d %s", code, stderr)
				}
				var undone struct{ Journal string }
				if err := json.Unmarshal([]byte(stdout), &undone); err != nil || undone.Journal == "" {
					t.Fatalf("undo's journal: %v %s", err, stdout)
				}
				if got := storedEntry(t, home, gen, key, true); got["suspended"] != false {
					t.Fatalf("undo: sessions.json entry %v", got["suspended"])
				}
				if got := rawRow(t, home, gen, key); dbPrimary(gen) && (got == nil) != (rowBefore == nil) || got != nil && *got != *rowBefore {
					t.Fatalf("undo: gateway_routing row %s, was %s", rowText(got), rowText(rowBefore))
				}
				// the undo again finds nothing left to do; the undo of the undo puts the edit back
				if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", env.Journal, "--apply"); code != ExitOK {
					t.Fatalf("undo again: exit %d %s", code, stderr)
				}
				if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", undone.Journal, "--apply"); code != ExitOK {
					t.Fatalf("redo: exit %d %s", code, stderr)
				}
				if got := storedEntry(t, home, gen, key, !dbPrimary(gen)); got["suspended"] != true {
					t.Fatalf("redo: entry %v", got)
				}
			})
		}
	}
}

// putRawRow inserts a gateway_routing row of key holding entryJSON as written.
func putRawRow(t *testing.T, home, key, entryJSON string) {
	t.Helper()
	db := openDB(t, home, "rw")
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at) VALUES (?, ?, ?, 1784194000)`,
		resolvedSessionsDir(home), key, entryJSON); err != nil {
		t.Fatal(err)
	}
}

// rawRow is the entry_json of key's gateway_routing row as stored, nil without one (or on a
// json-primary generation).
func rawRow(t *testing.T, home, gen, key string) *string {
	t.Helper()
	if !dbPrimary(gen) {
		return nil
	}
	db := openDB(t, home, "ro")
	defer db.Close()
	var raw string
	err := db.QueryRow(`SELECT entry_json FROM gateway_routing WHERE scope = ? AND session_key = ?`, resolvedSessionsDir(home), key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return &raw
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestEdgeNotImportedWritesSessionsJSON (item 8): on a v19+ home whose gateway_routing holds
// no row at all, the runtime imports every sessions.json entry at load and its next save
// writes them all into the table (replace_gateway_routing_entries, c2a3b9ce5). sessionctl
// writes only sessions.json (docs/decisions.md): the runtime's next load imports the edited
// entry from there, so it acts on the same value either way.
func TestEdgeNotImportedWritesSessionsJSON(t *testing.T) {
	for _, gen := range requireGenerations(t) {
		if !dbPrimary(gen) {
			continue
		}
		home := fixtureHome(t, gen)
		execSQL(t, filepath.Join(home, "state.db"), "DELETE FROM gateway_routing")
		const key = "agent:main:slack:dm:D043095675"
		code, env := suspendJSON(t, home, key)
		if code != ExitOK || !env.Applied || env.Changes[0].Store != "sessions.json" {
			t.Fatalf("suspend: exit %d %+v", code, env)
		}
		if got := storedEntry(t, home, gen, key, true); got["suspended"] != true {
			t.Fatalf("sessions.json entry not suspended")
		}
		db := openDB(t, home, "ro")
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM gateway_routing`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("gateway_routing rows: %d %v", n, err)
		}
		db.Close()
	}
}

// TestEdgeLegacyOrder (item 7): the runtime's dict holds the rows it loaded, then the imports
// in sessions.json order (checked by running _ensure_loaded_locked of c2a3b9ce5 on such a
// home); a row it skips is not among them. entries list has the same order.
func TestEdgeLegacyOrder(t *testing.T) {
	for _, gen := range requireGenerations(t) {
		if !dbPrimary(gen) {
			continue
		}
		home := fixtureHome(t, gen)
		data, err := os.ReadFile(sessionsJSONPath(home))
		if err != nil {
			t.Fatal(err)
		}
		keys, _, err := decodeOrderedObject(data)
		if err != nil {
			t.Fatal(err)
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return strings.HasPrefix(k, "_") })
		a, b := keys[1], keys[2] // a: no row; b: a row the runtime skips ("origin": {})
		execSQL(t, filepath.Join(home, "state.db"),
			"DELETE FROM gateway_routing WHERE session_key = '"+a+"'",
			`UPDATE gateway_routing SET entry_json = json_set(entry_json, '$.origin', json('{}')) WHERE session_key = '`+b+"'")
		code, stdout, _ := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "entries", "list")
		var env struct {
			Data struct {
				Entries []listed `json:"entries"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(stdout), &env); err != nil || code != ExitOK {
			t.Fatalf("entries list: exit %d %v", code, err)
		}
		got := env.Data.Entries
		n := len(got)
		if n != len(keys) || got[n-2].Key != a || got[n-1].Key != b || !got[n-2].Legacy || !got[n-1].Legacy || got[n-1].Skip != "" {
			t.Fatalf("entries list ends with %+v %+v (of %d); want legacy %s then %s, loaded", got[n-2], got[n-1], n, a, b)
		}
		for _, l := range got[:n-2] {
			if l.Legacy || l.Key == b {
				t.Fatalf("row %+v listed among the rows", l)
			}
		}
	}
}

func rowText(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}
