package statedb

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// FilterKind is how a prune filter's value is read and bound.
type FilterKind int

// Prune filter kinds.
const (
	FilterTime       FilterKind = iota // an instant, Unix seconds (`s.started_at < ?`)
	FilterInt                          // an integer bound
	FilterFloat                        // a number bound (USD)
	FilterExact                        // text compared as given
	FilterLower                        // text lower-cased as Python's str.lower() (provider)
	FilterLike                         // a case-insensitive substring: %lower(v)%
	FilterPathPrefix                   // _cwd_prefix_clause: the path or anything under it
	FilterTristate                     // archived: yes, no or any
)

// PruneFilter is one keyword filter of the runtime's SessionDB._prune_filter_where, which
// prune_sessions, list_prune_candidates and archive_sessions AND with their selection
// (hermes_state.py at c2a3b9ce5 and 481156139; 040a5e30d).
type PruneFilter struct {
	Name string // the runtime's keyword; the flag is the same with dashes
	Kind FilterKind
	// SQL is the clause over the sessions alias s with its placeholders, as the first
	// generation that has the filter writes it; the generations that escape LIKE patterns
	// add ESCAPE '\' to each LIKE (likeClause).
	SQL     string
	Columns []string // the sessions columns it reads
	Since   sessionsjson.PruneFilterSet
	// ReplacesAge: given, it replaces prune_sessions' older_than_days bound (prune_sessions
	// at c2a3b9ce5; _apply_prune_age_filter at 481156139).
	ReplacesAge bool
	Usage       string
}

// Flag is the filter's command-line name: its keyword with dashes.
func (f PruneFilter) Flag() string { return strings.ReplaceAll(f.Name, "_", "-") }

// lastActive is the activity _prune_filter_where's last_active_* bounds measure at 481156139
// (a228b8150): the latest message, else started_at.
const lastActive = `COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)`

// PruneFilterTable is _prune_filter_where's keyword filters but source (prune's --source, in
// every generation), in the runtime's order.
var PruneFilterTable = []PruneFilter{
	{"last_active_before", FilterTime, lastActive + ` < ?`, nil, sessionsjson.PruneFiltersV26, true, "last activity (the latest message, else the start) before `T` (r0817)"},
	{"last_active_after", FilterTime, lastActive + ` >= ?`, nil, sessionsjson.PruneFiltersV26, false, "last activity at or after `T` (r0817)"},
	{"started_before", FilterTime, `s.started_at < ?`, []string{"started_at"}, sessionsjson.PruneFiltersV21, true, "started before `T` (replaces the --older-than bound)"},
	{"started_after", FilterTime, `s.started_at >= ?`, []string{"started_at"}, sessionsjson.PruneFiltersV21, false, "started at or after `T`"},
	{"title_like", FilterLike, `LOWER(COALESCE(s.title, '')) LIKE ?`, []string{"title"}, sessionsjson.PruneFiltersV21, false, "title contains `TEXT` (case-insensitive)"},
	{"end_reason", FilterExact, `s.end_reason = ?`, []string{"end_reason"}, sessionsjson.PruneFiltersV21, false, "ended for `REASON` exactly"},
	{"cwd_prefix", FilterPathPrefix, `(s.cwd = ? OR s.cwd LIKE ? OR s.cwd LIKE ?)`, []string{"cwd"}, sessionsjson.PruneFiltersV21, false, "working directory `PATH` or under it"},
	{"min_messages", FilterInt, `s.message_count >= ?`, []string{"message_count"}, sessionsjson.PruneFiltersV21, false, "at least `N` messages (message_count)"},
	{"max_messages", FilterInt, `s.message_count <= ?`, []string{"message_count"}, sessionsjson.PruneFiltersV21, false, "at most `N` messages (message_count)"},
	{"model_like", FilterLike, `LOWER(COALESCE(s.model, '')) LIKE ?`, []string{"model"}, sessionsjson.PruneFiltersV21, false, "model contains `TEXT` (case-insensitive)"},
	{"provider", FilterLower, `LOWER(COALESCE(s.billing_provider, '')) = ?`, []string{"billing_provider"}, sessionsjson.PruneFiltersV21, false, "billing provider `NAME` (case-insensitive)"},
	{"user_id", FilterExact, `s.user_id = ?`, []string{"user_id"}, sessionsjson.PruneFiltersV21, false, "user `ID` exactly"},
	{"chat_id", FilterExact, `s.chat_id = ?`, []string{"chat_id"}, sessionsjson.PruneFiltersV21, false, "chat `ID` exactly"},
	{"chat_type", FilterExact, `s.chat_type = ?`, []string{"chat_type"}, sessionsjson.PruneFiltersV21, false, "chat type `TYPE` exactly (dm, group, …)"},
	{"branch_like", FilterLike, `LOWER(COALESCE(s.git_branch, '')) LIKE ?`, []string{"git_branch"}, sessionsjson.PruneFiltersV21, false, "git branch contains `TEXT` (case-insensitive)"},
	{"min_tokens", FilterInt, `(COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0)) >= ?`, []string{"input_tokens", "output_tokens"}, sessionsjson.PruneFiltersV21, false, "at least `N` input+output tokens"},
	{"max_tokens", FilterInt, `(COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0)) <= ?`, []string{"input_tokens", "output_tokens"}, sessionsjson.PruneFiltersV21, false, "at most `N` input+output tokens"},
	{"min_cost", FilterFloat, `COALESCE(s.actual_cost_usd, s.estimated_cost_usd, 0) >= ?`, []string{"actual_cost_usd", "estimated_cost_usd"}, sessionsjson.PruneFiltersV21, false, "cost at least `USD` (actual, else estimated)"},
	{"max_cost", FilterFloat, `COALESCE(s.actual_cost_usd, s.estimated_cost_usd, 0) <= ?`, []string{"actual_cost_usd", "estimated_cost_usd"}, sessionsjson.PruneFiltersV21, false, "cost at most `USD` (actual, else estimated)"},
	{"min_tool_calls", FilterInt, `COALESCE(s.tool_call_count, 0) >= ?`, []string{"tool_call_count"}, sessionsjson.PruneFiltersV21, false, "at least `N` tool calls"},
	{"max_tool_calls", FilterInt, `COALESCE(s.tool_call_count, 0) <= ?`, []string{"tool_call_count"}, sessionsjson.PruneFiltersV21, false, "at most `N` tool calls"},
	{"archived", FilterTristate, `s.archived = ?`, []string{"archived"}, sessionsjson.PruneFiltersV21, false, "`yes`: only archived sessions, no: only the others, any (the default of prune_sessions)"},
}

// FilterArg is a prune filter given, with its value read.
type FilterArg struct {
	Filter PruneFilter
	Given  string // as given
	// Value is what binds: a string, an int64 or a float64 (an instant for FilterTime); nil
	// for archived=any, which adds no clause.
	Value any
	// Ago, with Relative, is a FilterTime given as an age in seconds: Value becomes now - Ago
	// (Resolved).
	Ago      float64
	Relative bool
}

// ErrFilterValue is the error of a filter value that cannot be read.
var ErrFilterValue = errors.New("bad filter value")

// ParseFilterArg reads value for the filter named name (its keyword): an instant as an RFC
// 3339 time or Unix seconds, a bound as a number, text as given (not empty), archived as yes,
// no or any.
func ParseFilterArg(name, value string) (FilterArg, error) {
	f, ok := filterByName(name)
	if !ok {
		return FilterArg{}, fmt.Errorf("%w: no filter %q", ErrFilterValue, name)
	}
	a := FilterArg{Filter: f, Given: value}
	var err error
	switch f.Kind {
	case FilterTime:
		a.Value, err = parseInstant(value)
	case FilterInt:
		a.Value, err = strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	case FilterFloat:
		a.Value, err = parseFinite(value)
	case FilterTristate:
		a.Value, err = parseTristate(value)
	default:
		if value == "" {
			err = errors.New("empty")
		}
		a.Value = value
	}
	if err != nil {
		return FilterArg{}, fmt.Errorf("%w: --%s %q: %v", ErrFilterValue, f.Flag(), value, err)
	}
	return a, nil
}

// RelativeFilterArg is a FilterTime filter given as an age: that many seconds before now.
func RelativeFilterArg(name, given string, ago float64) (FilterArg, error) {
	f, ok := filterByName(name)
	if !ok || f.Kind != FilterTime {
		return FilterArg{}, fmt.Errorf("%w: %q takes no age", ErrFilterValue, name)
	}
	return FilterArg{Filter: f, Given: given, Ago: ago, Relative: true}, nil
}

// Resolved returns a with an age made the instant now - Ago.
func (a FilterArg) Resolved(now float64) FilterArg {
	if a.Relative {
		a.Value, a.Relative = now-a.Ago, false
	}
	return a
}

func filterByName(name string) (PruneFilter, bool) {
	for _, f := range PruneFilterTable {
		if f.Name == name {
			return f, true
		}
	}
	return PruneFilter{}, false
}

// parseInstant reads an RFC 3339 time or Unix seconds.
func parseInstant(v string) (float64, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return float64(t.UnixMicro()) / 1e6, nil
	}
	if f, err := parseFinite(v); err == nil {
		return f, nil
	}
	return 0, errors.New("give D (that long before now: 7d, 12h) or an RFC 3339 time (2026-07-05T14:30:00Z) or Unix seconds")
}

// parseFinite reads a finite number.
func parseFinite(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, errors.New("not a finite number")
	}
	return f, nil
}

// parseTristate reads archived's yes (1), no (0) or any (nil: both).
func parseTristate(v string) (any, error) {
	switch v {
	case "yes":
		return int64(1), nil
	case "no":
		return int64(0), nil
	case "any":
		return nil, nil
	}
	return nil, errors.New("give yes, no or any")
}

// filterClause returns the clause and arguments of a in the generation's filter set (nothing
// for archived=any), as _prune_filter_where builds them.
func filterClause(a FilterArg, set sessionsjson.PruneFilterSet) (string, []any) {
	f, escape := a.Filter, set >= sessionsjson.PruneFiltersV26
	switch f.Kind {
	case FilterTristate:
		if a.Value == nil {
			return "", nil
		}
	case FilterLower:
		return f.SQL, []any{pyLower(a.Value.(string))}
	case FilterLike:
		return likeClause(f.SQL, escape), []any{"%" + likeNeedle(pyLower(a.Value.(string)), escape) + "%"}
	case FilterPathPrefix:
		return likeClause(f.SQL, escape), cwdPrefixArgs(a.Value.(string), escape)
	}
	return f.SQL, []any{a.Value}
}

// likeClause adds ESCAPE '\' to each LIKE where the generation escapes its patterns
// (1d2dabce5, 4bab91944).
func likeClause(sql string, escape bool) string {
	if !escape {
		return sql
	}
	return strings.ReplaceAll(sql, "LIKE ?", `LIKE ? ESCAPE '\'`)
}

// likeNeedle is the runtime's escape_like (hermes_state_common.py at 481156139) where the
// generation escapes, else the text as it is (its % and _ are wildcards).
func likeNeedle(s string, escape bool) string {
	if !escape {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// cwdPrefixArgs are _cwd_prefix_clause's arguments: the prefix without trailing separators
// (unless that leaves nothing), and the patterns of the paths under it with / and with \
// (c2a3b9ce5; escaped at 481156139, 4bab91944).
func cwdPrefixArgs(cwd string, escape bool) []any {
	prefix := strings.TrimRight(cwd, `/\`)
	if prefix == "" {
		prefix = cwd
	}
	if !escape {
		return []any{prefix, prefix + "/%", prefix + `\%`}
	}
	esc := likeNeedle(prefix, true)
	return []any{prefix, esc + "/%", esc + `\\%`}
}

// pyLower is Python's str.lower(): Unicode's lower-case mapping, with its special cases
// U+0130 (i and a combining dot above) and the final sigma (ς at the end of a word).
func pyLower(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == '\u0130':
			b.WriteString("i\u0307")
		case r == 'Σ' && finalSigma(rs, i):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma condition at rs[i]: a cased letter before it and none
// after it, case-ignorable characters skipped.
func finalSigma(rs []rune, i int) bool {
	cased := func(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }
	ignorable := func(r rune) bool {
		return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk) || strings.ContainsRune("'.:·‘’․﹒＇．", r)
	}
	j := i - 1
	for j >= 0 && ignorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	k := i + 1
	for k < len(rs) && ignorable(rs[k]) {
		k++
	}
	return k == len(rs) || !cased(rs[k])
}
