package upgrade

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// upgradePairs is the directory of the upgrade fixtures (copied from the shared fixtures).
const upgradePairs = "../../../testdata/upgrade"

// pairNames lists the fixture pairs <A>--<B>.
func pairNames(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(upgradePairs)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.Contains(e.Name(), "--") {
			out = append(out, e.Name())
		}
	}
	if len(out) != 8 {
		t.Fatalf("%d upgrade pairs, want 8", len(out))
	}
	return out
}

// pairHome copies the home of pair into a temporary directory, relocates its
// gateway_routing rows to the copy's sessions directory (testdata/upgrade/README.md) and
// opens it for the database.
func pairHome(t *testing.T, pair string) *home.Home {
	t.Helper()
	dir := copyHome(t, filepath.Join(upgradePairs, pair, "home"))
	relocate(t, dir)
	return openHome(t, dir)
}

// copyHome copies the home at src into a temporary directory and returns the copy.
func copyHome(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "home")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openHome opens the home at dir for the database; it is closed when the test ends.
func openHome(t *testing.T, dir string) *home.Home {
	t.Helper()
	h, err := home.Open(context.Background(), home.Options{Home: sessionsjson.Home{Root: dir, Dir: dir}}, home.Database)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// execSQL runs statements on the state.db of the home at dir.
func execSQL(t *testing.T, dir string, stmts ...string) {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.Join(dir, "state.db"), RawQuery: "mode=rw"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// relocate points every gateway_routing row of the copy at its own sessions directory.
func relocate(t *testing.T, dir string) {
	t.Helper()
	scope, err := sessionsjson.ResolvedSessionsDir(sessionsjson.Home{Root: dir, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	db, err := statedb.OpenReadOnly(context.Background(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	hasRouting := db.Schema().HasGatewayRouting
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if hasRouting {
		execSQL(t, dir, "UPDATE gateway_routing SET scope = '"+strings.ReplaceAll(scope, "'", "''")+"'")
	}
}

// summary is the part of expected/summary.json the schema prediction answers.
type summary struct {
	SchemaSteps []map[string]any `json:"schema_steps"`
	FTSRebuild  struct {
		Triggered         bool     `json:"triggered"`
		Tables            []string `json:"tables"`
		Rows              int64    `json:"rows"`
		OptimizeAvailable *string  `json:"optimize_available"`
	} `json:"fts_rebuild"`
	Downgrade struct {
		DBOpens         bool `json:"db_opens"`
		SchemaAfterOpen int  `json:"schema_after_open"`
	} `json:"downgrade"`
	To struct {
		Schema int `json:"schema"`
	} `json:"to"`
}

func readSummary(t *testing.T, pair string) summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(upgradePairs, pair, "expected", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// comparable turns a step into its summary.json form without what only sessionctl says
// (commit, note).
func comparable(t *testing.T, step any) map[string]any {
	t.Helper()
	b, err := json.Marshal(step)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "commit")
	delete(m, "note")
	return m
}

// TestSchemaPairs compares the predicted schema steps, FTS rebuild and downgrade with what
// the real runtime of B did to the home of A in every upgrade fixture.
func TestSchemaPairs(t *testing.T) {
	for _, pair := range pairNames(t) {
		t.Run(pair, func(t *testing.T) {
			want := readSummary(t, pair)
			h := pairHome(t, pair)
			to, err := ResolveTarget(strings.SplitN(pair, "--", 2)[1])
			if err != nil {
				t.Fatal(err)
			}
			steps, fts, down, err := Schema(context.Background(), h, to)
			if err != nil {
				t.Fatal(err)
			}
			compareSteps(t, steps, want.SchemaSteps)
			compareFTS(t, fts, want)
			if down == nil || down.DBOpens != want.Downgrade.DBOpens || down.Generation != string(h.Gen) {
				t.Errorf("downgrade = %+v, want db_opens %v for %s", down, want.Downgrade.DBOpens, h.Gen)
			}
		})
	}
}

func compareSteps(t *testing.T, got []SchemaStep, want []map[string]any) {
	t.Helper()
	n := max(len(got), len(want))
	for i := range n {
		var g, w map[string]any
		if i < len(got) {
			g = comparable(t, got[i])
		}
		if i < len(want) {
			w = comparable(t, want[i])
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("step %d:\n got %v\nwant %v", i, g, w)
		}
	}
}

func compareFTS(t *testing.T, got FTSRebuild, want summary) {
	t.Helper()
	w := want.FTSRebuild
	opt := ""
	if w.OptimizeAvailable != nil {
		opt = *w.OptimizeAvailable
	}
	if got.Triggered != w.Triggered || !slices.Equal(got.Tables, w.Tables) || got.Rows != w.Rows || got.OptimizeAvailable != opt {
		t.Errorf("fts = %+v, want %+v (optimize %q)", got, w, opt)
	}
	if got.Triggered != (got.EstimateSeconds > 0) {
		t.Errorf("estimate %v s for triggered %v", got.EstimateSeconds, got.Triggered)
	}
}

// TestOpenRulesCoverGenerations holds the rule table and the runtime schemas together: every
// generation sessionctl writes has both, with the table's SCHEMA_VERSION.
func TestOpenRulesCoverGenerations(t *testing.T) {
	for _, g := range sessionsjson.Generations() {
		if !sessionsjson.RulesFor(g).WritesAllowed {
			continue
		}
		if _, ok := generationOpenRules[g]; !ok {
			t.Errorf("%s: no open rules", g)
		}
		rs, err := statedb.RuntimeSchemaFor(string(g))
		if err != nil {
			t.Errorf("%s: %v", g, err)
			continue
		}
		if rs.Version != sessionsjson.CodeSchema(g) {
			t.Errorf("%s: runtime schema v%d, generation table v%d", g, rs.Version, sessionsjson.CodeSchema(g))
		}
	}
	schemas := 0
	for _, g := range sessionsjson.Generations() {
		if _, err := statedb.RuntimeSchemaFor(string(g)); err == nil {
			schemas++
		}
	}
	if len(generationOpenRules) != schemas {
		t.Errorf("%d open rules, %d runtime schemas", len(generationOpenRules), schemas)
	}
	if _, err := statedb.RuntimeSchemaFor("v22-v25"); !errors.Is(err, statedb.ErrNoRuntimeSchema) {
		t.Errorf("v22-v25: %v", err)
	}
}

// TestBackfillPairs compares the predicted data steps with the rows the real runtime filled
// or changed (data_backfills): per table and column, the rows.
func TestBackfillPairs(t *testing.T) {
	for _, pair := range pairNames(t) {
		t.Run(pair, func(t *testing.T) {
			h := pairHome(t, pair)
			to, err := ResolveTarget(strings.SplitN(pair, "--", 2)[1])
			if err != nil {
				t.Fatal(err)
			}
			bs, err := Backfills(context.Background(), h, to)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, b := range bs {
				if b.Table == "state_meta" { // the fixture counts state_meta rows by table
					b.Column = ""
				}
				got[b.Table+"."+b.Column] += b.Rows
			}
			want := map[string]int64{}
			for _, w := range readBackfills(t, pair) {
				want[w.Table+"."+w.Column] += w.RowsChanged + w.RowsFilled + w.RowsAdded
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("backfills:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// expectedBackfill is one element of summary.json data_backfills.
type expectedBackfill struct {
	Table       string `json:"table"`
	Column      string `json:"column"`
	RowsChanged int64  `json:"rows_changed"`
	RowsFilled  int64  `json:"rows_filled"`
	RowsAdded   int64  `json:"rows_added"`
}

func readBackfills(t *testing.T, pair string) []expectedBackfill {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(upgradePairs, pair, "expected", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		DataBackfills []expectedBackfill `json:"data_backfills"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s.DataBackfills
}
