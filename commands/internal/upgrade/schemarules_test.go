package upgrade

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// fixtureHomes is the directory of the generation fixtures.
const fixtureHomes = "../../../testdata/fixtures"

// fixtureDir returns the fixture home of generation gen (e.g. "r0715").
func fixtureDir(t *testing.T, gen string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(fixtureHomes, gen+"-*", "home"))
	if err != nil || len(m) != 1 {
		t.Fatalf("fixture home of %s: %v %v", gen, m, err)
	}
	return m[0]
}

// predict runs Schema on the home at dir for target gen.
func predict(t *testing.T, dir, gen string) ([]SchemaStep, FTSRebuild, *Downgrade) {
	t.Helper()
	to, err := ResolveTarget(gen)
	if err != nil {
		t.Fatal(err)
	}
	steps, fts, down, err := Schema(context.Background(), openHome(t, dir), to)
	if err != nil {
		t.Fatal(err)
	}
	return steps, fts, down
}

// kinds lists "kind object" of every step.
func kinds(steps []SchemaStep) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Kind + " " + s.Object
	}
	return out
}

// wantSteps checks that steps are exactly want ("kind object").
func wantSteps(t *testing.T, steps []SchemaStep, want ...string) {
	t.Helper()
	if got := kinds(steps); !slices.Equal(got, want) {
		t.Errorf("steps:\n got %q\nwant %q", got, want)
	}
}

// TestSchemaOwnFile: a runtime opening the file it created itself changes nothing, and its
// own generation reopens it.
func TestSchemaOwnFile(t *testing.T) {
	for _, g := range []string{"r0418", "r0506", "r0525", "r0703", "r0715", "r0817"} {
		t.Run(g, func(t *testing.T) {
			steps, fts, down := predict(t, copyHome(t, fixtureDir(t, g)), g)
			wantSteps(t, steps)
			if fts.Triggered || down == nil || !down.DBOpens {
				t.Errorf("fts %+v, downgrade %+v", fts, down)
			}
		})
	}
}

// TestSchemaDowngradeCheck: an older target never lowers the version and finds nothing of
// its own missing in a newer file.
func TestSchemaDowngradeCheck(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0817"))
	for _, g := range []string{"r0418", "r0506", "r0715"} {
		steps, fts, down := predict(t, dir, g)
		wantSteps(t, steps)
		if fts.Triggered || fts.OptimizeAvailable != "" || down == nil || down.Generation != "r0817" || !down.DBOpens {
			t.Errorf("--to %s: fts %+v, downgrade %+v", g, fts, down)
		}
	}
}

// TestSchemaReadOnly: the prediction leaves every file of the home as it was and creates none.
func TestSchemaReadOnly(t *testing.T) {
	dir := copyHome(t, filepath.Join(upgradePairs, "r0715-c2a3b9ce5--r0817-481156139", "home"))
	before := readTree(t, dir)
	predict(t, dir, "r0817")
	after := readTree(t, dir)
	if len(before) != len(after) {
		t.Fatalf("files: %d before, %d after", len(before), len(after))
	}
	for name, b := range before {
		if !bytes.Equal(b, after[name]) {
			t.Errorf("%s changed", name)
		}
	}
}

// readTree reads every file below dir.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		out[path], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchemaRoutingKeyHeal: a gateway_routing of the early v19 builds (session_key alone as
// the key, no scope) gets scope from the reconciler and, under r0817 only, a rebuild
// (_heal_gateway_routing_pk, 76b0ea511).
func TestSchemaRoutingKeyHeal(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0715"))
	execSQL(t, dir, "DROP TABLE gateway_routing",
		"CREATE TABLE gateway_routing (session_key TEXT PRIMARY KEY, entry_json TEXT NOT NULL, updated_at REAL NOT NULL)")
	steps, _, _ := predict(t, dir, "r0817")
	i := slices.Index(kinds(steps), "add_column gateway_routing.scope")
	if i < 0 || kinds(steps)[i+1] != "rebuild_table gateway_routing" || steps[i+1].Commit != commitHealRouting {
		t.Fatalf("r0817 steps: %q", kinds(steps))
	}
	if !steps[i].NotNull || steps[i].Default == nil || *steps[i].Default != "''" {
		t.Errorf("scope after the rebuild: %+v", steps[i])
	}
	steps, _, _ = predict(t, dir, "r0715")
	wantSteps(t, steps, "add_column gateway_routing.scope")
	if steps[0].NotNull {
		t.Errorf("the reconciler adds a key column without NOT NULL: %+v", steps[0])
	}
}

// TestSchemaMissingTriggers: without its trigram triggers, r0703+ recreate them and rebuild
// both indexes (355af2c20); r0525 has no such repair.
func TestSchemaMissingTriggers(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0525"))
	execSQL(t, dir, "DROP TRIGGER messages_fts_trigram_insert", "DROP TRIGGER messages_fts_trigram_update")
	steps, fts, _ := predict(t, dir, "r0525")
	wantSteps(t, steps)
	if fts.Triggered {
		t.Errorf("r0525 rebuilds: %+v", fts)
	}
	steps, fts, _ = predict(t, dir, "r0703")
	var triggers []string
	for _, k := range kinds(steps) {
		if strings.Contains(k, "_trigger ") {
			triggers = append(triggers, k)
		}
	}
	want := []string{"create_trigger messages_fts_trigram_insert", "create_trigger messages_fts_trigram_update"}
	if !slices.Equal(triggers, want) || !fts.Triggered || fts.Rows == 0 || !slices.Equal(fts.Tables, []string{ftsBase, ftsTrigram}) {
		t.Errorf("r0703: triggers %q, fts %+v", triggers, fts)
	}
}

// TestSchemaStaleFTS: r0817 recovers a file whose FTS is marked stale: both tables and
// their triggers recreated, rebuilt from messages (1527a81b5).
func TestSchemaStaleFTS(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0817"))
	execSQL(t, dir, "INSERT INTO state_meta (key, value) VALUES ('fts_stale', '1')")
	steps, fts, _ := predict(t, dir, "r0817")
	wantSteps(t, steps,
		"replace_virtual_table messages_fts", "replace_virtual_table messages_fts_trigram",
		"replace_trigger messages_fts_delete", "replace_trigger messages_fts_insert",
		"replace_trigger messages_fts_trigram_delete", "replace_trigger messages_fts_trigram_insert",
		"replace_trigger messages_fts_trigram_update", "replace_trigger messages_fts_update")
	if !fts.Triggered || steps[0].Commit != commitStaleFTS {
		t.Errorf("fts %+v, commit %s", fts, steps[0].Commit)
	}
}

// TestSchemaV10Layout: a v10 file (external-content base and trigram tables) gets the v11
// rewrite under r0715 and keeps its legacy layout under r0817, whose broad UPDATE triggers
// are narrowed without a rebuild.
func TestSchemaV10Layout(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0418"))
	execSQL(t, dir,
		"CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, content=messages, content_rowid=id, tokenize='trigram')",
		"CREATE TRIGGER messages_fts_trigram_insert AFTER INSERT ON messages BEGIN INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, new.content); END",
		"CREATE TRIGGER messages_fts_trigram_delete AFTER DELETE ON messages BEGIN INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content) VALUES('delete', old.id, old.content); END",
		"CREATE TRIGGER messages_fts_trigram_update AFTER UPDATE ON messages BEGIN INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content) VALUES('delete', old.id, old.content); INSERT INTO messages_fts_trigram(rowid, content) VALUES (new.id, new.content); END",
		"UPDATE schema_version SET version = 10")
	steps, fts, _ := predict(t, dir, "r0715")
	var fts715 []string
	for _, k := range kinds(steps) {
		if strings.Contains(k, "messages_fts") {
			fts715 = append(fts715, k)
		}
	}
	want := []string{"replace_virtual_table messages_fts", "replace_virtual_table messages_fts_trigram",
		"replace_trigger messages_fts_delete", "replace_trigger messages_fts_insert",
		"replace_trigger messages_fts_trigram_delete", "replace_trigger messages_fts_trigram_insert",
		"replace_trigger messages_fts_trigram_update", "replace_trigger messages_fts_update"}
	if !slices.Equal(fts715, want) || !fts.Triggered {
		t.Errorf("r0715: %q, fts %+v", fts715, fts)
	}
	steps, fts, _ = predict(t, dir, "r0817")
	var fts817 []string
	for _, k := range kinds(steps) {
		if strings.Contains(k, "messages_fts") {
			fts817 = append(fts817, k)
		}
	}
	want = []string{"replace_trigger messages_fts_trigram_update", "replace_trigger messages_fts_update"}
	if !slices.Equal(fts817, want) || fts.Triggered || fts.OptimizeAvailable != "1" {
		t.Errorf("r0817: %q, fts %+v", fts817, fts)
	}
}

// TestSchemaVersionMissing: without a schema_version row the runtime inserts its own version
// and runs no version-gated step: no v11 rewrite of the v1 table, but r0715's trigger repair
// still fills both tables (three of the six triggers exist).
func TestSchemaVersionMissing(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0418"))
	execSQL(t, dir, "DELETE FROM schema_version")
	steps, fts, _ := predict(t, dir, "r0715")
	last := steps[len(steps)-1]
	if last.Kind != KindSetSchemaVersion || last.Before != nil || last.After != 21 {
		t.Errorf("version step %+v", last)
	}
	if slices.Contains(kinds(steps), "replace_virtual_table messages_fts") {
		t.Errorf("a file without a version row gets the v11 rewrite: %q", kinds(steps))
	}
	if !fts.Triggered || fts.Rows == 0 {
		t.Errorf("fts %+v", fts)
	}
}

// TestSchemaR0418Chain: the pre-reconciler runtime adds only the columns of the version
// steps above the file's version.
func TestSchemaR0418Chain(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0418"))
	execSQL(t, dir, "DROP TRIGGER messages_fts_insert", "DROP TRIGGER messages_fts_delete",
		"DROP TRIGGER messages_fts_update", "DROP TABLE messages_fts",
		"ALTER TABLE messages DROP COLUMN codex_reasoning_items", "ALTER TABLE sessions DROP COLUMN pricing_version",
		"UPDATE schema_version SET version = 5")
	steps, _, _ := predict(t, dir, "r0418")
	wantSteps(t, steps, "add_column messages.codex_reasoning_items",
		"create_virtual_table messages_fts", "create_trigger messages_fts_delete", "create_trigger messages_fts_insert",
		"create_trigger messages_fts_update", "set_schema_version schema_version")
	if steps[0].Commit != "42fec1915" {
		t.Errorf("commit %s", steps[0].Commit)
	}
}

// TestSchemaNoStateDB: without state.db the target's open creates the whole file.
func TestSchemaNoStateDB(t *testing.T) {
	dir := copyHome(t, filepath.Join(upgradePairs, "r0525-3914089d5--r0703-52d0d671e", "home"))
	if err := os.Remove(filepath.Join(dir, "state.db")); err != nil {
		t.Fatal(err)
	}
	steps, fts, down := predict(t, dir, "r0817")
	k := kinds(steps)
	if !slices.Contains(k, "create_table sessions") || !slices.Contains(k, "create_view messages_fts_trigram_src") ||
		k[len(k)-1] != "set_schema_version schema_version" || steps[len(steps)-1].Before != nil {
		t.Errorf("steps %q", k)
	}
	if fts.Triggered {
		t.Errorf("fts %+v", fts)
	}
	if down != nil && down.Generation != string(sessionsjson.GenR0525) {
		t.Errorf("downgrade %+v", down)
	}
}

// backfillRows predicts the data steps on the home at dir for gen, by "table.column".
func backfillRows(t *testing.T, dir, gen string) map[string]int64 {
	t.Helper()
	to, err := ResolveTarget(gen)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := Backfills(context.Background(), openHome(t, dir), to)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, b := range bs {
		out[b.Table+"."+b.Column] = b.Rows
	}
	return out
}

// TestBackfillSystemPrompts: r0817's v25 step moves every inline system prompt, storing each
// distinct text once; without a schema_version row no version-gated step runs.
func TestBackfillSystemPrompts(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0715"))
	execSQL(t, dir, "UPDATE sessions SET system_prompt = NULL",
		"UPDATE sessions SET system_prompt = 'prompt ' || (rowid % 2) WHERE rowid IN (SELECT rowid FROM sessions LIMIT 5)")
	got := backfillRows(t, dir, "r0817")
	if got["system_prompts."] != 2 || got["sessions.system_prompt"] != 5 {
		t.Errorf("backfills %v", got)
	}
	execSQL(t, dir, "DELETE FROM schema_version")
	if got := backfillRows(t, dir, "r0817"); len(got) != 0 {
		t.Errorf("without a version row: %v", got)
	}
}

// TestGatewayEntries: the v18 step reads sessions.json as a Python dict (first position, last
// value), skips "_" keys, non-objects and entries without a session_id, falls back to the key
// for session_key, and stops at a value it cannot bind.
func TestGatewayEntries(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sessions", "sessions.json")
	data := `{"_README": "x", "a": {"session_id": "s1"}, "b": 5, "c": {"session_id": ""},
		"a": {"session_id": "s2", "session_key": "k", "origin": {"chat_id": "42"}, "memory_flushed": true},
		"d": {"session_id": 7}, "e": {"session_id": "s3", "display_name": {"x": 1}}, "f": {"session_id": "s4"}}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	rules := sessionsjson.RulesFor(sessionsjson.GenR0715)
	h := &home.Home{Opts: home.Options{Home: sessionsjson.Home{Root: dir, Dir: dir}}, Rules: rules}
	read, err := gatewayEntries(h) // the file, read now
	if err != nil {
		t.Fatal(err)
	}
	if h.Mirror.Doc, err = sessionsjson.Decode([]byte(data), rules); err != nil {
		t.Fatal(err)
	}
	loaded, err := gatewayEntries(h) // the document the home decoded
	if err != nil {
		t.Fatal(err)
	}
	for _, es := range [][]gatewayEntry{read, loaded} {
		if len(es) != 2 || es[0].id != "s2" || es[0].values["session_key"] != "k" || es[0].values["chat_id"] != "42" ||
			!es[0].finalized || es[0].values["origin_json"] == nil || es[1].id != "7" || es[1].values["session_key"] != "d" {
			t.Errorf("entries %+v", es)
		}
	}
}

// TestSchemaOtherGenerations: an intermediate (v22–v25) home is raised to r0817's version and
// reopens by the never-lowered rule; a newer home gets nothing from r0817 and no downgrade
// verdict (its runtime is unknown).
func TestSchemaOtherGenerations(t *testing.T) {
	dir := copyHome(t, fixtureDir(t, "r0817"))
	execSQL(t, dir, "UPDATE schema_version SET version = 23")
	steps, _, down := predict(t, dir, "r0817")
	wantSteps(t, steps, "set_schema_version schema_version")
	if steps[0].Before != 23 || down == nil || down.Generation != string(sessionsjson.GenV22V25) || !down.DBOpens {
		t.Errorf("v23: %+v, downgrade %+v", steps, down)
	}
	execSQL(t, dir, "UPDATE schema_version SET version = 30")
	steps, _, down = predict(t, dir, "r0817")
	wantSteps(t, steps)
	if down != nil {
		t.Errorf("newer: downgrade %+v", down)
	}
}
