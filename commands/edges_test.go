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
	"r0525-3914089d5": "v11", "r0703-52d0d671e": "v17", "r0715-c2a3b9ce5": "v17"}

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
// 3b750715a, 3914089d5, 52d0d671e, c2a3b9ce5); status shows the version read from the layout,
// check reports the missing row, and sessionctl never writes it (undo included).
func TestMissingVersionRowEdges(t *testing.T) {
	versions := map[string]float64{"r0418-cb4addaca": 6, "r0506-3b750715a": 11, "r0525-3914089d5": 13,
		"r0703-52d0d671e": 17, "r0715-c2a3b9ce5": 21}
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
