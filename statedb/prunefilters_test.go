package statedb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// filterRows are hand-built sessions of source flt added to a fixture home: each filter case
// below selects some of them. "open" matches every filter but is not ended: never selected.
var filterRows = []struct {
	id, title, model, provider, cwd, branch, user, chat, chatType, endReason string
	started                                                                  float64
	messages, tools, in, out                                                 any
	actual, estimated                                                        any
	archived                                                                 int
}{
	{"a", "Deploy_Prod", "anthropic/Claude-Sonnet", "OpenRouter", "/srv/my_app", "feature/x_1", "u1", "c1", "dm", "user_exit", 1000, 5, 2, 100, 50, 1.5, 9.0, 1},
	{"b", "deployXprod", "openai/gpt", "openai", "/srv/my_app/sub", "main", "u2", "c2", "group", "compression", 2000, 1, nil, nil, nil, nil, 0.2, 0},
	{"c", "", "", "", "/srv/myXapp/z", "feature/xx1", "u2", "c2", "group", "", 3000, 2, 0, 0, 0, nil, nil, 0},
	{"d", "οδος", "", "", `C:\work\sub`, "", "", "", "", "", 4000, 0, 0, 0, 0, nil, nil, 0},
	{"open", "deploy_prod open", "anthropic/Claude-Sonnet", "OpenRouter", "/srv/my_app", "feature/x_1", "u1", "c1", "dm", "", 500, 5, 2, 100, 50, 1.5, 9.0, 1},
}

// filterHome copies gen's state.db and adds filterRows.
func filterHome(t *testing.T, gen string) *DB {
	t.Helper()
	path := copyDB(t, gen)
	raw := rawDB(t, path)
	for _, r := range filterRows {
		ended := any(r.started + 10)
		if r.id == "open" {
			ended = nil
		}
		text := func(s string) any {
			if s == "" {
				return nil
			}
			return s
		}
		mustExec(t, raw, `INSERT INTO sessions (id, source, title, model, billing_provider, cwd, git_branch, user_id, chat_id, chat_type,
			end_reason, started_at, ended_at, message_count, tool_call_count, input_tokens, output_tokens, actual_cost_usd, estimated_cost_usd, archived)
			VALUES (?, 'flt', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			"flt_"+r.id, text(r.title), text(r.model), text(r.provider), r.cwd, text(r.branch), text(r.user), text(r.chat), text(r.chatType),
			text(r.endReason), r.started, ended, r.messages, r.tools, r.in, r.out, r.actual, r.estimated, r.archived)
	}
	return openRO(t, path)
}

// TestPruneFilters: each of _prune_filter_where's filters selects, among hand-built rows, what
// the runtime's SQL selects in r0715 (LIKE patterns unescaped: _ and % are wildcards) and in
// r0817 (escaped).
func TestPruneFilters(t *testing.T) {
	r0715, r0817 := filterHome(t, "r0715-c2a3b9ce5"), filterHome(t, "r0817-481156139")
	for _, tc := range []struct {
		name, value  string
		r0715, r0817 string // the ids selected, "-" where the generation lacks the filter
	}{
		{"title_like", "deploy_prod", "a b", "a"},
		{"title_like", "DEPLOY", "a b", "a b"},
		{"title_like", "ΟΔΟΣ", "d", "d"}, // Python's lower(): the final sigma
		{"model_like", "claude", "a", "a"},
		{"branch_like", "X_1", "a c", "a"},
		{"cwd_prefix", "/srv/my_app/", "a b c", "a b"},
		{"cwd_prefix", `C:\work`, "d", "d"},
		{"provider", "OPENROUTER", "a", "a"},
		{"user_id", "u2", "b c", "b c"},
		{"chat_id", "c1", "a", "a"},
		{"chat_type", "group", "b c", "b c"},
		{"end_reason", "compression", "b", "b"},
		{"min_messages", "2", "a c", "a c"},
		{"max_messages", "1", "b d", "b d"},
		{"min_tokens", "150", "a", "a"},
		{"max_tokens", "0", "b c d", "b c d"},
		{"min_cost", "1", "a", "a"}, // actual 1.5, not the estimated 9
		{"min_cost", "0.1", "a b", "a b"},
		{"max_cost", "0.5", "b c d", "b c d"},
		{"min_tool_calls", "1", "a", "a"},
		{"max_tool_calls", "0", "b c d", "b c d"},
		{"archived", "yes", "a", "a"},
		{"archived", "no", "b c d", "b c d"},
		{"archived", "any", "a b c d", "a b c d"},
		{"started_before", "2500", "a b", "a b"},
		{"started_after", "2000", "b c d", "b c d"},
		{"last_active_before", "2500", "-", "a b"},
		{"last_active_after", "3000", "-", "c d"},
	} {
		arg, err := ParseFilterArg(tc.name, tc.value)
		if err != nil {
			t.Fatalf("%s %q: %v", tc.name, tc.value, err)
		}
		for _, g := range []struct {
			db   *DB
			set  sessionsjson.PruneFilterSet
			age  sessionsjson.PruneAge
			want string
		}{{r0715, sessionsjson.PruneFiltersV21, sessionsjson.PruneByStart, tc.r0715}, {r0817, sessionsjson.PruneFiltersV26, sessionsjson.PruneByInactivity, tc.r0817}} {
			if g.want == "-" {
				continue
			}
			ret := Retention{Cutoff: 1e12, Age: g.age, Source: "flt", Filters: []FilterArg{arg}, FilterSet: g.set}
			cands, err := g.db.RetentionCandidates(context.Background(), 5000, ret)
			if err != nil {
				t.Fatalf("%s %q: %v", tc.name, tc.value, err)
			}
			var got []string
			for _, c := range cands {
				got = append(got, c.ID[len("flt_"):])
			}
			slices.Sort(got)
			if w := splitIDs(g.want); !slices.Equal(got, w) {
				t.Errorf("%s %q (filter set %d): selected %v, want %v", tc.name, tc.value, g.set, got, w)
			}
		}
	}
}

// splitIDs splits "a b c" into the ids a, b and c.
func splitIDs(s string) []string { return strings.Fields(s) }

// TestPruneFilterAge: started_before replaces the age bound (older_than_days), other filters
// AND with it; archive_sessions adds archived = 0.
func TestPruneFilterAge(t *testing.T) {
	db := filterHome(t, "r0715-c2a3b9ce5")
	before, _ := ParseFilterArg("started_before", "3500")
	after, _ := ParseFilterArg("started_after", "1500")
	for _, tc := range []struct {
		filters []FilterArg
		want    int
	}{
		{nil, 1},                 // the age: started_at < 1500
		{[]FilterArg{after}, 0},  // started_at < 1500 and >= 1500
		{[]FilterArg{before}, 3}, // started_before replaces the age
		{[]FilterArg{before, after}, 2},
	} {
		ret := Retention{Cutoff: 1500, Source: "flt", Filters: tc.filters, FilterSet: sessionsjson.PruneFiltersV21}
		cands, err := db.RetentionCandidates(context.Background(), 5000, ret)
		if err != nil || len(cands) != tc.want {
			t.Errorf("%v: %d candidates (%v), want %d", tc.filters, len(cands), err, tc.want)
		}
		ids, err := db.ArchiveCandidates(context.Background(), ArchiveOlder(ret))
		archived := 0
		if tc.filters == nil || len(tc.filters) == 1 && tc.filters[0].Filter.Name == "started_before" {
			archived = 1 // a is archived already
		}
		if err != nil || len(ids) != tc.want-archived {
			t.Errorf("archive %v: %v (%v), want %d", tc.filters, ids, err, tc.want-archived)
		}
	}
}

// TestParseFilterArg: values that cannot be read are refused with ErrFilterValue.
func TestParseFilterArg(t *testing.T) {
	for _, tc := range []struct{ name, value string }{
		{"min_messages", "2.5"}, {"min_cost", "NaN"}, {"archived", "true"}, {"title_like", ""},
		{"started_before", "yesterday"}, {"nope", "1"},
	} {
		if _, err := ParseFilterArg(tc.name, tc.value); !errors.Is(err, ErrFilterValue) {
			t.Errorf("%s %q: %v, want ErrFilterValue", tc.name, tc.value, err)
		}
	}
	a, err := ParseFilterArg("started_before", "2026-07-05T14:30:00Z")
	if err != nil || a.Value != 1783261800.0 {
		t.Fatalf("RFC 3339: %v %v", a.Value, err)
	}
	if r, _ := RelativeFilterArg("started_after", "1d", 86400); r.Resolved(100000).Value != 13600.0 {
		t.Fatalf("relative: %v", r.Resolved(100000).Value)
	}
	if _, err := RelativeFilterArg("min_messages", "1d", 86400); !errors.Is(err, ErrFilterValue) {
		t.Fatalf("relative min_messages: %v", err)
	}
	if got := pyLower("İΣΑΣ Σ"); got != "i\u0307σας σ" {
		t.Fatalf("pyLower: %q", got)
	}
}
