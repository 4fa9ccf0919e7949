package statedb

import (
	"context"
	"testing"
)

// The stale_chain family of every fixture generation: two hops, every rule agrees.
const (
	chainStart = "20260713_083008_9c35f8c3" // stale_chain: two hops, every rule agrees
	chainTip   = "20260713_221054_f44293"
)

// tipCase is one lineage planted in a fixture database and the id each rule resolves its
// start to.
type tipCase struct {
	name  string
	setup string // INSERTs, foreign keys off
	start string
	want  map[TipRule]string
}

// tipCases: the expected ids are the upstream walks' results.
//   - TipNone (r0418, cb4addaca): hermes_state.py has no get_compression_tip; the id stays.
//   - TipV11 (r0506 3b750715a, r0525 3914089d5, hermes_state.py get_compression_tip): 100
//     steps, no record of the ids seen, no stop at ”; the caller's `tip or id`
//     (hermes_cli/main.py) turns a ” result into the starting id.
//   - TipV17 (r0703 52d0d671e, r0715 c2a3b9ce5, hermes_state.py get_compression_tip): stops
//     at a falsy child id or one already in `seen`, returning where it stands.
var tipCases = []tipCase{
	{"self-parent", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('self', 'cli', 50, 50, 'compression', 'self')`, "self",
		map[TipRule]string{TipNone: "self", TipV11: "self", TipV17: "self"}},
	// two sessions continuing each other: 100 steps bring the v11 walk back to the start
	{"two-cycle", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('cy_a', 'cli', 50, 50, 'compression', 'cy_b'), ('cy_b', 'cli', 50, 50, 'compression', 'cy_a')`, "cy_a",
		map[TipRule]string{TipNone: "cy_a", TipV11: "cy_a", TipV17: "cy_b"}},
	// three: 100 = 33*3 + 1 steps leave the v11 walk one along
	{"three-cycle", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('tr_a', 'cli', 50, 50, 'compression', 'tr_c'), ('tr_b', 'cli', 50, 50, 'compression', 'tr_a'),
		       ('tr_c', 'cli', 50, 50, 'compression', 'tr_b')`, "tr_a",
		map[TipRule]string{TipNone: "tr_a", TipV11: "tr_b", TipV17: "tr_c"}},
	// a chain ending in a child with id '': v11 reaches '' and its caller falls back to the
	// start; v17 stops before it
	{"empty-id-tip", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('em_a', 'cli', 10, 20, 'compression', NULL), ('em_b', 'cli', 30, 40, 'compression', 'em_a'),
		       ('', 'cli', 50, NULL, NULL, 'em_b')`, "em_a",
		map[TipRule]string{TipNone: "em_a", TipV11: "em_a", TipV17: "em_b"}},
	// '' in the middle of a chain: v11 walks through it, v17 stops before it
	{"empty-id-link", `INSERT INTO sessions (id, source, started_at, ended_at, end_reason, parent_session_id)
		VALUES ('md_a', 'cli', 10, 20, 'compression', NULL), ('', 'cli', 30, 40, 'compression', 'md_a'),
		       ('md_c', 'cli', 50, NULL, NULL, '')`, "md_a",
		map[TipRule]string{TipNone: "md_a", TipV11: "md_c", TipV17: "md_a"}},
}

// TestTipRulePerGeneration: each generation's database resolves cycles and empty ids with
// its own runtime's rule (TipRuleForSchema of its schema_version).
func TestTipRulePerGeneration(t *testing.T) {
	wantRule := map[string]TipRule{"r0418-cb4addaca": TipNone, "r0506-3b750715a": TipV11,
		"r0525-3914089d5": TipV11, "r0703-52d0d671e": TipV17, "r0715-c2a3b9ce5": TipV17}
	for _, g := range generations {
		for _, c := range tipCases {
			t.Run(g.name+"/"+c.name, func(t *testing.T) {
				path := copyDB(t, g.name)
				raw := rawDB(t, path)
				mustExec(t, raw, "PRAGMA foreign_keys = OFF")
				mustExec(t, raw, c.setup)
				db := openRO(t, path)
				rule := TipRuleForSchema(db.Schema().Version)
				if rule != wantRule[g.name] {
					t.Fatalf("rule %d, want %d", rule, wantRule[g.name])
				}
				got, err := db.CompressionTip(context.Background(), c.start, rule)
				if err != nil || got != c.want[rule] {
					t.Errorf("tip(%q) = %q, %v; want %q", c.start, got, err, c.want[rule])
				}
				// the fixture's own chain resolves as before
				if got, err := db.CompressionTip(context.Background(), chainStart, rule); err != nil || (rule != TipNone && got != chainTip) {
					t.Errorf("stale_chain tip = %q, %v; want %q", got, err, chainTip)
				}
			})
		}
	}
}
