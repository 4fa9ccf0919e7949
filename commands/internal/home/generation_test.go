package home

import (
	"context"
	"os"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// TestGenerationTableAgreesWithSchema: the generation table (sessionsjson) and the schema
// statedb writes end at the same version, and every version up to it has a generation whose
// rules allow writes, except the intermediate v22–v25; the next one is newer and read-only.
func TestGenerationTableAgreesWithSchema(t *testing.T) {
	newest := sessionsjson.NewestKnownSchema()
	if newest != statedb.NewestKnownVersion {
		t.Fatalf("generation table ends at v%d, statedb writes up to v%d", newest, statedb.NewestKnownVersion)
	}
	for v := 1; v <= newest; v++ {
		g := sessionsjson.GenerationForSchema(v)
		r := sessionsjson.RulesForSchema(v)
		if g == sessionsjson.GenUnknown || g == sessionsjson.GenNewer || r.WritesAllowed == r.Intermediate {
			t.Errorf("schema v%d: generation %s", v, g)
		}
	}
	if g := sessionsjson.GenerationForSchema(newest + 1); g != sessionsjson.GenNewer || sessionsjson.RulesFor(g).WritesAllowed {
		t.Errorf("schema v%d: generation %s", newest+1, g)
	}
}

// TestDatabaseOpenReadsREADMEGeneration: a home without state.db opened for a state.db
// repair (maintain's lock probe) takes its generation from the _README at the head of
// sessions.json, as a full open does, so a newer generation's json-only home is not taken for
// a writable one.
func TestDatabaseOpenReadsREADMEGeneration(t *testing.T) {
	for name, tt := range map[string]struct {
		file string // "" for no sessions.json
		want sessionsjson.Generation
	}{
		"no file":   {"", sessionsjson.GenUnknown},
		"no readme": {`{"k": {}}`, sessionsjson.GenR0525},
		"r0703":     {`{"_README": "` + sessionsjson.READMEr0703 + `", "k": {}}`, sessionsjson.GenR0703},
		"r0715":     {`{"_README": "` + sessionsjson.READMEr0715 + `"}`, sessionsjson.GenR0715},
		"newer":     {`{"_README": "Routing index, late 2026", "k": {}}`, sessionsjson.GenNewer},
	} {
		t.Run(name, func(t *testing.T) {
			hm := sessionsjson.Home{Dir: t.TempDir()}
			if err := os.MkdirAll(hm.SessionsDir(), 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.file != "" {
				if err := os.WriteFile(hm.SessionsJSON(), []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			h, err := Open(context.Background(), Options{Home: hm}, Database)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if h.Gen != tt.want || h.Rules.Generation != tt.want {
				t.Errorf("generation %s (rules %s), want %s", h.Gen, h.Rules.Generation, tt.want)
			}
			if tt.want == sessionsjson.GenNewer && h.Rules.Verified() {
				t.Error("a newer generation's rules are verified")
			}
		})
	}
}
