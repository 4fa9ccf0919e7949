package home

import (
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
