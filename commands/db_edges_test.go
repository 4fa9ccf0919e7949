package commands

// Tests of issue 17's state.db edges, per item and per fixture generation, on copies of the
// fixture homes: the expected outcome of each case is the runtime's, from its code at the
// generation's commit (cited at each test).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/check"
)

// The stale_race family of every fixture generation: its entry points at a compression-ended
// row whose one child started before the parent ended (the v17 rule follows it, v11 does not).
const (
	raceKey    = "agent:main:telegram:group:-1007191547473:116311710"
	raceParent = "20260712_190154_5c722086"
	raceChild  = "20260713_005243_eb1a28"
)

// ruleOf names the compression-tip rule of each fixture generation.
var ruleOf = map[string]string{"r0418-cb4addaca": "none", "r0506-3b750715a": "v11",
	"r0525-3914089d5": "v11", "r0703-52d0d671e": "v17", "r0715-c2a3b9ce5": "v17",
	"r0817-481156139": "v17"} // r0817's v24 rule reads model_config as the v17 rule does

// envelope is the part of a --json envelope the edge tests read.
type edgeEnvelope struct {
	Findings []check.Finding  `json:"findings"`
	Data     json.RawMessage  `json:"data"`
	Journals []string         `json:"journals"`
	Error    *json.RawMessage `json:"error"`
}

func decodeEnvelope(t testing.TB, stdout string) edgeEnvelope {
	t.Helper()
	var env edgeEnvelope
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatalf("not one JSON envelope: %v\n%s", err, stdout)
	}
	return env
}

// findingsOf returns the findings with check id.
func findingsOf(env edgeEnvelope, id check.ID) []check.Finding {
	var out []check.Finding
	for _, f := range env.Findings {
		if f.Check == id {
			out = append(out, f)
		}
	}
	return out
}

// withRouting returns want with the routing entry key (and its mirror) taken from from.
func withRouting(want, from map[string]any, key string) map[string]any {
	for _, part := range []string{"routing", "routing_mirror"} {
		w, ok1 := want[part].(map[string]any)
		f, ok2 := from[part].(map[string]any)
		if ok1 && ok2 {
			w[key] = f[key]
		}
	}
	return want
}

// TestMalformedModelConfigEdges (issue 17 item 6): one row's model_config that json_extract
// cannot read is a finding about that row; status, check, entries and repoint read the home.
// Under the v17 rule (r0703 52d0d671e, r0715 c2a3b9ce5: hermes_state.py get_compression_tip
// reads child.model_config with json_extract, and gateway/session.py
// _compression_tip_for_session_id catches the raise and keeps the id) the stale_race entry
// has no continuation and every other entry is healed as in expected/repoint.json; the v11
// rule (r0506 3b750715a, r0525 3914089d5) never reads the column, so repoint is exactly the
// fixture's; r0418 has no tip rule (repoint exits 4, as before).
func TestMalformedModelConfigEdges(t *testing.T) {
	for _, gen := range fixtureGenerations() {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			execSQL(t, filepath.Join(home, "state.db"), "UPDATE sessions SET model_config = '{bad' WHERE id = '"+raceChild+"'")
			base := []string{"--home", home, "--now", fixtureNow, "--json"}
			for _, args := range [][]string{{"status"}, {"entries", "list"}, {"sessions", "show", raceParent}} {
				if code, _, stderr := runCLI(t, append(base, args...)...); code != ExitOK {
					t.Errorf("%v: exit %d: %s", args, code, stderr)
				}
			}
			code, stdout, stderr := runCLI(t, append(base, "check", "--fail-on", "never")...)
			if code != ExitOK {
				t.Fatalf("check: exit %d: %s", code, stderr)
			}
			env := decodeEnvelope(t, stdout)
			bad := findingsOf(env, check.DBBadModelConfig)
			wantSev := check.Info
			if ruleOf[gen] == "v17" {
				wantSev = check.Warn
			}
			if len(bad) != 1 || bad[0].Subject != raceChild || bad[0].Severity != wantSev {
				t.Errorf("db.malformed-model-config findings %+v, want one %s on %s", bad, wantSev, raceChild)
			}
			if findingsOf(env, check.DBCorrupt) != nil {
				t.Errorf("db.corrupt reported: %+v", findingsOf(env, check.DBCorrupt))
			}
			for _, f := range findingsOf(env, check.EntryRepointable) {
				if f.Subject == raceKey {
					t.Errorf("stale_race reported repointable: %s", f.Message)
				}
			}
			code, _, stderr = runCLI(t, append(base, "repoint", "--apply")...)
			if ruleOf[gen] == "none" {
				if code != ExitData {
					t.Errorf("repoint on %s: exit %d, want %d (no tip rule): %s", gen, code, ExitData, stderr)
				}
				return
			}
			if code != ExitOK {
				t.Fatalf("repoint --apply: exit %d: %s", code, stderr)
			}
			want := loadExpected(t, gen, "repoint")
			if ruleOf[gen] == "v17" {
				want = withRouting(want, loadExpected(t, gen, "before"), raceKey)
			}
			compareDump(t, dumpHome(t, home), want)
			undoJournals(t, home)
			compareDump(t, dumpHome(t, home), loadExpected(t, gen, "before"))
		})
	}
}

// undoJournals undoes every journal of home, newest first, and fails on any refusal.
func undoJournals(t testing.TB, home string) {
	t.Helper()
	js := journals(t, home)
	for i := len(js) - 1; i >= 0; i-- {
		if code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", js[i], "--apply"); code != ExitOK {
			t.Fatalf("undo %s: exit %d\n%s\n%s", js[i], code, stdout, strings.TrimSpace(stderr))
		}
	}
}

// The stale_nochild family: its entry points at a compression-ended row with no child.
const (
	nochildKey = "agent:main:discord:group:456117026968082137:900178866045402768"
	nochildID  = "20260713_152438_93fef91a"
)

// TestTipWalkEdges (issue 17 item 11): repoint follows each generation's own walk. Planted
// under stale_nochild: a chain ending in a child with the empty id, and a three-session cycle
// through it. The v11 walk (hermes_state.py get_compression_tip, 3b750715a and
// 3914089d5) keeps no seen set and does not stop at the empty id: it reaches it and its caller's `tip or
// id` keeps the start; on the cycle it takes its 100 steps and stops one along (100 = 33*3 + 1). The
// v17 walk (52d0d671e, c2a3b9ce5) stops before the empty id and at the first id seen again. r0418 has no
// tip rule (repoint exits 4).
func TestTipWalkEdges(t *testing.T) {
	cases := []struct {
		name  string
		setup string
		want  map[string]string // rule -> session id of the stale_nochild entry after repoint
	}{
		{"empty-id", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id) VALUES
			('em_b', 'discord', 1783980000, 1783980100, 'compression', '` + nochildID + `'),
			('', 'discord', 1783980200, NULL, NULL, 'em_b')`,
			map[string]string{"v11": nochildID, "v17": "em_b"}},
		// a walk can only meet a cycle it starts in: stale_nochild -> cy_b -> cy_c -> stale_nochild
		// (times chosen so that each child starts at or after its parent ended)
		{"cycle", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id) VALUES
			('cy_b', 'discord', 1783980000, 1783950000, 'compression', '` + nochildID + `'),
			('cy_c', 'discord', 1783980000, 1783950000, 'compression', 'cy_b');
			UPDATE sessions SET parent_session_id = 'cy_c' WHERE id = '` + nochildID + `'`,
			map[string]string{"v11": "cy_b", "v17": "cy_c"}},
	}
	for _, gen := range fixtureGenerations() {
		for _, c := range cases {
			t.Run(gen+"/"+c.name, func(t *testing.T) {
				home := fixtureHome(t, gen)
				execSQL(t, filepath.Join(home, "state.db"), "PRAGMA foreign_keys = OFF", c.setup)
				code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "repoint", "--apply")
				if ruleOf[gen] == "none" {
					if code != ExitData {
						t.Errorf("exit %d, want %d: %s", code, ExitData, stderr)
					}
					return
				}
				if code != ExitOK {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				want := loadExpected(t, gen, "repoint")
				setSessionID(want, nochildKey, c.want[ruleOf[gen]])
				compareRouting(t, dumpHome(t, home), want)
				undoJournals(t, home)
				compareRouting(t, dumpHome(t, home), loadExpected(t, gen, "before"))
			})
		}
	}
}

// setSessionID sets the session_id of the routing entry key (and of its mirror) in a dump.
func setSessionID(dump map[string]any, key, id string) {
	for _, part := range []string{"routing", "routing_mirror"} {
		if m, ok := dump[part].(map[string]any); ok {
			if e, ok := m[key].(map[string]any); ok {
				e["session_id"] = id
			}
		}
	}
}

// compareRouting compares the routing index (and mirror) of two dumps.
func compareRouting(t testing.TB, got, want map[string]any) {
	t.Helper()
	part := func(d map[string]any) map[string]any {
		return map[string]any{"routing": d["routing"], "routing_mirror": d["routing_mirror"]}
	}
	compareDump(t, part(got), part(want))
}

// TestMissingVersionRowEdges (issue 17 item 13): a state.db whose schema_version has no row is
// read by every command and repaired by its generation's rules, as the runtime does after
// inserting its own version on open (hermes_state.py SessionDB._init_schema at cb4addaca,
// 3b750715a, 3914089d5, 52d0d671e, c2a3b9ce5, 481156139); status shows the version read from the layout,
// check reports the missing row, and sessionctl never writes it (undo included).
func TestMissingVersionRowEdges(t *testing.T) {
	versions := map[string]float64{"r0418-cb4addaca": 6, "r0506-3b750715a": 11, "r0525-3914089d5": 13,
		"r0703-52d0d671e": 17, "r0715-c2a3b9ce5": 21, "r0817-481156139": 26}
	for _, gen := range fixtureGenerations() {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			execSQL(t, filepath.Join(home, "state.db"), "DELETE FROM schema_version")
			base := []string{"--home", home, "--now", fixtureNow, "--json"}
			code, stdout, stderr := runCLI(t, append(base, "status")...)
			if code != ExitOK {
				t.Fatalf("status: exit %d: %s", code, stderr)
			}
			var st struct {
				Data struct {
					Schema struct {
						Version        float64 `json:"version"`
						VersionMissing bool    `json:"version_missing"`
						Known          bool    `json:"known"`
					} `json:"schema"`
				} `json:"data"`
				Generation string `json:"generation"`
			}
			if err := json.Unmarshal([]byte(stdout), &st); err != nil {
				t.Fatal(err)
			}
			if s := st.Data.Schema; s.Version != versions[gen] || !s.VersionMissing || !s.Known || !strings.HasPrefix(gen, st.Generation) {
				t.Errorf("status: generation %s schema %+v; want %s v%v read from the layout", st.Generation, s, gen, versions[gen])
			}
			code, stdout, stderr = runCLI(t, append(base, "check", "--fail-on", "never")...)
			if code != ExitOK {
				t.Fatalf("check: exit %d: %s", code, stderr)
			}
			if f := findingsOf(decodeEnvelope(t, stdout), check.DBSchemaVersionMissing); len(f) != 1 || f[0].Severity != check.Info {
				t.Errorf("db.schema-version-missing findings %+v, want one info", f)
			}
			for _, args := range [][]string{{"entries", "list"}, {"sessions", "list"}} {
				if code, _, stderr := runCLI(t, append(base, args...)...); code != ExitOK {
					t.Errorf("%v: exit %d: %s", args, code, stderr)
				}
			}
			for _, repair := range []string{"finalize-orphans", "prune-ghosts", "repoint"} {
				code, _, stderr := runCLI(t, append(base, repair, "--apply")...)
				if ruleOf[gen] == "none" {
					if code != ExitData {
						t.Errorf("%s on r0418: exit %d, want %d: %s", repair, code, ExitData, stderr)
					}
					continue
				}
				if code != ExitOK {
					t.Fatalf("%s --apply: exit %d: %s", repair, code, stderr)
				}
				want := loadExpected(t, gen, repair)
				want["schema_version"] = nil
				compareDump(t, dumpHome(t, home), want)
				undoJournals(t, home)
				want = loadExpected(t, gen, "before")
				want["schema_version"] = nil
				compareDump(t, dumpHome(t, home), want)
				removeJournals(t, home)
			}
		})
	}
}

// removeJournals deletes the journals of home (after their undo), so the next step's undo
// finds only its own.
func removeJournals(t testing.TB, home string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(home, "sessionctl", "journal")); err != nil {
		t.Fatal(err)
	}
}

// TestGhostCycleEdges (issue 17 item 9): prune-ghosts deletes ghosts in a parent cycle with
// the rest, as the runtime's single DELETE does (hermes_state.py prune_empty_ghost_sessions at
// 3b750715a, 3914089d5, 52d0d671e, c2a3b9ce5: the foreign key is checked when the statement
// ends), whole or in one-row batches, and undo brings every row back; a cycle a remaining
// row hangs from is kept with ghost.has-children. r0418 has no prune (exit 4).
func TestGhostCycleEdges(t *testing.T) {
	const ghost = `INSERT INTO sessions (id, source, started_at, ended_at, parent_session_id) VALUES `
	cases := []struct {
		name, setup string
		kept        []string
	}{
		{"self-parent", ghost + `('g_self', 'tui', 1782000000, 1782000100, 'g_self')`, nil},
		{"two-cycle", ghost + `('g_a', 'tui', 1782000000, 1782000100, 'g_b'), ('g_b', 'tui', 1782000001, 1782000100, 'g_a')`, nil},
		{"kept-cycle", ghost + `('k_a', 'tui', 1782000000, 1782000100, 'k_b'), ('k_b', 'tui', 1782000001, 1782000100, 'k_a'),
			('k_cli', 'cli', 1782000002, NULL, 'k_a')`, []string{"k_a", "k_b"}},
	}
	for _, gen := range fixtureGenerations() {
		for _, c := range cases {
			for _, rows := range []int{0, 1} {
				t.Run(fmt.Sprintf("%s/%s/batch%d", gen, c.name, rows), func(t *testing.T) {
					home := fixtureHome(t, gen)
					execSQL(t, filepath.Join(home, "state.db"), "PRAGMA foreign_keys = OFF", c.setup)
					planted := dumpHome(t, home)
					code, stdout, stderr := runCLIWith(t, settings{batchRows: rows}, "--home", home, "--now", fixtureNow, "--json", "prune-ghosts", "--apply")
					if ruleOf[gen] == "none" {
						if code != ExitData {
							t.Errorf("exit %d, want %d: %s", code, ExitData, stderr)
						}
						return
					}
					if code != ExitOK {
						t.Fatalf("exit %d: %s", code, stderr)
					}
					var keptIDs []string
					for _, f := range findingsOf(decodeEnvelope(t, stdout), check.GhostHasChildren) {
						keptIDs = append(keptIDs, f.Subject)
					}
					if !slices.Equal(keptIDs, c.kept) {
						t.Errorf("ghost.has-children on %v, want %v", keptIDs, c.kept)
					}
					if c.kept == nil { // every planted ghost went: the runtime's dump
						compareDump(t, dumpHome(t, home), loadExpected(t, gen, "prune-ghosts"))
					}
					undoJournals(t, home)
					compareDump(t, dumpHome(t, home), planted)
				})
			}
		}
	}
}

// Rows of every fixture generation the TEXT tests change.
const (
	orphanNA     = "20260621_182357_4cea33" // orphan1's continuation: api_call_count 'n/a'
	orphanLocked = "20260622_125201_1af486" // orphan_expired_lock's continuation: its lock expires 'never'
)

// plantTextValues puts TEXT where the runtime writes numbers: a ghost ended 'yesterday', a
// session started 'last week', api_call_count 'n/a' on an orphan (r0506+), a lock expiring
// 'never' (r0703+). It returns whether the last two were planted.
func plantTextValues(t testing.TB, home string) (calls, locks bool) {
	t.Helper()
	db := filepath.Join(home, "state.db")
	execSQL(t, db, `INSERT INTO sessions (id, source, started_at, ended_at) VALUES
		('g_text', 'tui', 1782000000, 'yesterday'), ('s_text', 'cli', 'last week', NULL)`)
	dump := dumpHome(t, home)
	sessions, _ := dump["sessions"].(map[string]any)
	if row, _ := sessions[orphanNA].(map[string]any); row != nil {
		_, calls = row["api_call_count"]
	}
	lockRows, _ := dump["compression_locks"].(map[string]any)
	locks = len(lockRows) > 0
	if calls {
		execSQL(t, db, "UPDATE sessions SET api_call_count = 'n/a' WHERE id = '"+orphanNA+"'")
	}
	if locks {
		execSQL(t, db, "UPDATE compression_locks SET expires_at = 'never' WHERE session_id = '"+orphanLocked+"'")
	}
	return calls, locks
}

// runtimeOutcome is the dump the runtime's case leaves on planted (the home as planted):
// every part the case changes in the fixture is taken from its expected dump, except the
// session rows in keep, which stay as planted; the rows in drop are deleted too.
func runtimeOutcome(t testing.TB, gen, name string, planted map[string]any, keep, drop []string) map[string]any {
	t.Helper()
	before, after := loadExpected(t, gen, "before"), loadExpected(t, gen, name)
	want := canonicalJSON(t, planted)
	same := func(a, b any) bool { return len(diffDump(map[string]any{"v": a}, map[string]any{"v": b})) == 0 }
	for k := range after {
		if k != "sessions" && !same(before[k], after[k]) {
			want[k] = after[k]
		}
	}
	sessions := want["sessions"].(map[string]any)
	for id, row := range before["sessions"].(map[string]any) {
		if slices.Contains(keep, id) {
			continue
		}
		switch now, ok := after["sessions"].(map[string]any)[id]; {
		case !ok:
			delete(sessions, id)
		case !same(row, now):
			sessions[id] = now
		}
	}
	for _, id := range drop {
		delete(sessions, id)
	}
	return want
}

// TestTextWhereNumberEdges (issue 17 item 10): TEXT where the runtime writes a number is read,
// reported (db.odd-value) and compared as the runtime's SQL compares it: prune-ghosts deletes
// the ghost ended 'yesterday' with the others, finalize-orphans leaves the orphan with
// api_call_count 'n/a' (never = 0) and skips the one whose lock expires 'never' (a live lock),
// and the rest is the fixture's (hermes_state.py prune_empty_ghost_sessions and
// finalize_orphaned_compression_sessions at 3b750715a, 3914089d5, 52d0d671e, c2a3b9ce5).
// sessions list, check and maintain read the home; undo restores every value exactly.
func TestTextWhereNumberEdges(t *testing.T) {
	for _, gen := range fixtureGenerations() {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			calls, locks := plantTextValues(t, home)
			planted := dumpHome(t, home)
			base := []string{"--home", home, "--now", fixtureNow, "--json"}
			reads := [][]string{{"status"}, {"entries", "list"}, {"sessions", "list", "--limit", "0"},
				{"sessions", "show", "g_text"}, {"maintain", "--fail-on", "never"}}
			if locks {
				reads = append(reads, []string{"sessions", "show", orphanLocked})
			}
			for _, args := range reads {
				if code, _, stderr := runCLI(t, append(base, args...)...); code != ExitOK {
					t.Errorf("%v: exit %d: %s", args, code, stderr)
				}
			}
			code, stdout, stderr := runCLI(t, append(base, "check", "--fail-on", "never")...)
			if code != ExitOK {
				t.Fatalf("check: exit %d: %s", code, stderr)
			}
			var odd []string
			for _, f := range findingsOf(decodeEnvelope(t, stdout), check.DBOddValue) {
				odd = append(odd, f.Subject)
			}
			want := []string{"g_text", "s_text"}
			if calls {
				want = append(want, orphanNA)
			}
			if locks {
				want = append(want, orphanLocked)
			}
			slices.Sort(odd)
			slices.Sort(want)
			if !slices.Equal(odd, want) {
				t.Errorf("db.odd-value on %v, want %v", odd, want)
			}
			if ruleOf[gen] == "none" {
				return // r0418: neither repair (exit 4, as before)
			}
			keep := []string{orphanNA}
			if locks {
				keep = append(keep, orphanLocked)
			}
			for _, c := range []struct {
				name string
				keep []string
				drop []string
			}{{"prune-ghosts", nil, []string{"g_text"}}, {"finalize-orphans", keep, nil}} {
				if code, _, stderr := runCLI(t, append(base, c.name, "--apply")...); code != ExitOK {
					t.Fatalf("%s --apply: exit %d: %s", c.name, code, stderr)
				}
				compareDump(t, dumpHome(t, home), runtimeOutcome(t, gen, c.name, planted, c.keep, c.drop))
				undoJournals(t, home)
				compareDump(t, dumpHome(t, home), planted)
				removeJournals(t, home)
			}
		})
	}
}

// TestGlobGhostIDEdges (issue 17 item 14): a ghost whose id holds glob characters keeps
// sessionctl's literal match — its own request dumps go, another session's stay — and the
// difference from the runtime's glob (hermes_state.py _remove_session_files:
// `sessions_dir.glob(f"request_dump_{session_id}_*.json")`, 3b750715a, 3914089d5, 52d0d671e,
// c2a3b9ce5) is reported as ghost.glob-id: for g[1] the runtime's pattern matches
// request_dump_g1_… and misses request_dump_g[1]_…; for g* it matches every request_dump_g….
// Undo puts the files back. r0418 has no prune (exit 4).
func TestGlobGhostIDEdges(t *testing.T) {
	own := []string{"request_dump_g[1]_1.json", "g[1].jsonl", "request_dump_g*_1.json"}
	other := "request_dump_g1_1.json" // a dump of session g1, which is no ghost
	for _, gen := range fixtureGenerations() {
		t.Run(gen, func(t *testing.T) {
			home := fixtureHome(t, gen)
			execSQL(t, filepath.Join(home, "state.db"), `INSERT INTO sessions (id, source, started_at, ended_at) VALUES
				('g[1]', 'tui', 1782000000, 1782000100), ('g*', 'tui', 1782000000, 1782000100)`)
			for _, n := range append([]string{other}, own...) {
				if err := os.WriteFile(filepath.Join(home, "sessions", n), []byte(n), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			planted := dumpHome(t, home)
			code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "prune-ghosts", "--apply")
			if ruleOf[gen] == "none" {
				if code != ExitData {
					t.Errorf("exit %d, want %d: %s", code, ExitData, stderr)
				}
				return
			}
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			globs := map[string]string{}
			for _, f := range findingsOf(decodeEnvelope(t, stdout), check.GhostGlobID) {
				globs[f.Subject] = f.Message
			}
			if m := globs["g[1]"]; !strings.Contains(m, "also matches "+other+" and misses request_dump_g[1]_1.json") {
				t.Errorf("ghost.glob-id of g[1]: %q", m)
			}
			if m := globs["g*"]; !strings.Contains(m, other) || !strings.Contains(m, "request_dump_g[1]_1.json") || !strings.Contains(m, "misses none of its own") {
				t.Errorf("ghost.glob-id of g*: %q", m)
			}
			if len(globs) != 2 {
				t.Errorf("ghost.glob-id on %v, want g[1] and g*", globs)
			}
			for _, n := range own {
				if _, err := os.Lstat(filepath.Join(home, "sessions", n)); err == nil {
					t.Errorf("%s (the ghost's own) is still there", n)
				}
			}
			if _, err := os.Lstat(filepath.Join(home, "sessions", other)); err != nil {
				t.Errorf("%s (another session's dump): %v", other, err)
			}
			undoJournals(t, home)
			compareDump(t, dumpHome(t, home), planted)
		})
	}
}
