package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// The version-gated data steps of the runtimes' opens (hermes_state.py _init_schema), by the
// version below which they run.
const (
	stepActive          = 12 // UPDATE messages SET active = 1 WHERE active IS NULL (#51646)
	stepDelegateTags    = 16 // model_config._delegate_from on subagent rows (d62979a6f)
	stepGatewayMetadata = 18 // sessions columns filled from sessions.json (747386ecf)
	stepUsageSeed       = 20 // one session_model_usage row per session with tokens (cb7f6bbb2)
	stepOptimizeFlag    = 23 // state_meta.fts_optimize_available on a legacy FTS layout (9acc4b47f)
	stepSystemPrompts   = 25 // sessions.system_prompt moved into system_prompts (7d066c3c5)
)

// Backfill is a data step of the target's open: the rows a migration fills or changes.
type Backfill struct {
	// Version: the file runs the step when its version is below it (0: on every open).
	Version int    `json:"version"`
	Table   string `json:"table"`
	Column  string `json:"column,omitempty"`
	Rows    int64  `json:"rows"`
	What    string `json:"what"`
	Commit  string `json:"commit"`
}

// Backfills predicts the data steps of the target's first open on the home's state.db and
// the rows each changes; steps that change no row are left out. A file without a
// schema_version row runs none of the version-gated steps; a home without state.db none.
func Backfills(ctx context.Context, h *home.Home, to Target) ([]Backfill, error) {
	rules, ok := generationOpenRules[to.Gen]
	if !ok {
		return nil, errorf(string(to.Gen), ErrNoOpenRules)
	}
	if h.DB == nil {
		return nil, nil
	}
	var out []Backfill
	add := func(bs []Backfill, err error) error {
		for _, b := range bs {
			if b.Rows > 0 {
				out = append(out, b)
			}
		}
		return err
	}
	if rules.activeEveryOpen {
		if err := add(activeHeal(ctx, h, 0)); err != nil {
			return nil, err
		}
	}
	for _, v := range rules.data {
		if h.Schema.VersionMissing || h.Schema.Version >= v {
			continue
		}
		if err := add(dataStep(ctx, h, rules, v)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dataStep predicts the data step of version v.
func dataStep(ctx context.Context, h *home.Home, rules openRules, v int) ([]Backfill, error) {
	switch v {
	case stepActive:
		return activeHeal(ctx, h, v)
	case stepDelegateTags:
		n, err := h.DB.CountDelegateTags(ctx, rules.resetAwareTags)
		return []Backfill{{Version: v, Table: "sessions", Column: "model_config", Rows: n, Commit: "d62979a6f",
			What: "subagent rows tagged with model_config._delegate_from (their parent id, or __orphaned__)"}}, err
	case stepGatewayMetadata:
		return gatewayMetadata(ctx, h)
	case stepUsageSeed:
		n, err := h.DB.CountUsageSeeds(ctx)
		return []Backfill{{Version: v, Table: "session_model_usage", Rows: n, Commit: "cb7f6bbb2",
			What: "one usage row per session with tokens, from the session's totals"}}, err
	case stepOptimizeFlag:
		return optimizeFlag(h), nil
	case stepSystemPrompts:
		sessions, prompts, err := h.DB.CountInlinePrompts(ctx)
		return []Backfill{
			{Version: v, Table: "system_prompts", Rows: prompts, Commit: "7d066c3c5", What: "distinct system prompts stored once (sha256 of the text)"},
			{Version: v, Table: "sessions", Column: "system_prompt", Rows: sessions, Commit: "7d066c3c5", What: "inline prompt replaced by system_prompt_hash"},
		}, err
	}
	return nil, nil
}

// activeHeal counts the messages whose NULL active flag the open sets to 1.
func activeHeal(ctx context.Context, h *home.Home, v int) ([]Backfill, error) {
	n, err := h.DB.CountNullActive(ctx)
	return []Backfill{{Version: v, Table: "messages", Column: "active", Rows: n, Commit: "c2a3b9ce5",
		What: "messages hidden by a NULL active flag shown again (active = 1)"}}, err
}

// optimizeFlag is the v23 step: one state_meta row on a file with a legacy FTS layout.
func optimizeFlag(h *home.Home) []Backfill {
	if l := h.Schema.FTSLayout; l == statedb.FTSNone || l == statedb.FTSExternalV23 {
		return nil
	}
	return []Backfill{{Version: stepOptimizeFlag, Table: "state_meta", Column: "fts_optimize_available", Rows: 1,
		Commit: commitOptIn, What: "the legacy FTS tables are kept; `hermes sessions optimize-storage` converts them (opt-in)"}}
}

// gatewayEntry is what the v18 step takes from one sessions.json entry.
type gatewayEntry struct {
	id        string
	values    map[string]any // column → value bound (nil: NULL)
	finalized bool
}

// gatewayMetadata predicts the v18 step: for every sessions.json entry (dict order, "_" keys
// and non-objects skipped) with a session_id, each column of its row that is still NULL takes
// the entry's value (expiry_finalized becomes 1 when the entry says expiry_finalized or
// memory_flushed). No sessions.json or one json.load rejects: nothing.
func gatewayMetadata(ctx context.Context, h *home.Home) ([]Backfill, error) {
	entries, err := gatewayEntries(h)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.id
	}
	unset, err := h.DB.GatewayMetadataUnset(ctx, ids)
	if err != nil {
		return nil, err
	}
	filled := map[string]int64{}
	for _, e := range entries {
		row, ok := unset[e.id]
		if !ok {
			continue
		}
		for _, c := range statedb.GatewayMetadataColumns {
			set := e.values[c] != nil
			if c == "expiry_finalized" {
				set = e.finalized
			}
			if row[c] && set {
				filled[c]++
				row[c] = false
			}
		}
	}
	var out []Backfill
	for _, c := range statedb.GatewayMetadataColumns {
		out = append(out, Backfill{Version: stepGatewayMetadata, Table: "sessions", Column: c, Rows: filled[c],
			Commit: "747386ecf", What: "filled from sessions.json where the row had none"})
	}
	return out, nil
}

// gatewayEntries is sessions.json as the v18 step's json.load and loop see it: the document
// the home decoded when it was opened with it, else the file read now. A binding the runtime
// cannot make (an object or array as a column value) stops the loop there.
func gatewayEntries(h *home.Home) ([]gatewayEntry, error) {
	doc := h.Mirror.Doc
	if doc == nil {
		data, err := sessionsjson.ReadRegularFile(h.Opts.Home.SessionsJSON(), sessionsjson.MaxSessionsJSONBytes)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, errorf("read sessions.json", err)
		}
		if doc, err = sessionsjson.Decode(data, h.Rules); err != nil {
			return nil, nil // json.load fails: the runtime skips the step
		}
	}
	var out []gatewayEntry
	for _, m := range dictOrder(doc.Members()) {
		e, ok, stop := gatewayEntryOf(m)
		if stop {
			break
		}
		if ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// dictOrder returns the members as a Python dict holds them: each key once, at its first
// position, with its last value.
func dictOrder(members []sessionsjson.Member) []sessionsjson.Member {
	var out []sessionsjson.Member
	at := map[string]int{}
	for _, m := range members {
		if i, ok := at[m.Key]; ok {
			out[i].Raw = m.Raw
			continue
		}
		at[m.Key] = len(out)
		out = append(out, m)
	}
	return out
}

// gatewayEntryOf decodes one member for the v18 step: ok when it updates a row, stop when its
// values cannot be bound (the runtime's loop raises there).
func gatewayEntryOf(m sessionsjson.Member) (e gatewayEntry, ok, stop bool) {
	if strings.HasPrefix(m.Key, "_") {
		return e, false, false
	}
	v, err := sessionsjson.LoadJSON(m.Raw) // as json.load read the file: NaN and Infinity load
	entry, isObject := v.(map[string]any)
	if err != nil || !isObject {
		return e, false, false
	}
	id, idOK := pyStr(entry["session_id"])
	if !truthy(entry["session_id"]) || !idOK {
		return e, false, false
	}
	origin, _ := entry["origin"].(map[string]any)
	key := entry["session_key"]
	if !truthy(key) {
		key = m.Key
	}
	e = gatewayEntry{id: id, values: map[string]any{
		"session_key": key, "chat_type": entry["chat_type"], "display_name": entry["display_name"],
		"chat_id": originValue(origin, "chat_id"), "thread_id": originValue(origin, "thread_id"),
	}, finalized: truthy(entry["expiry_finalized"]) || truthy(entry["memory_flushed"])}
	if origin != nil {
		e.values["origin_json"] = "json.dumps(origin)" // a string: only its presence counts
	}
	for _, v := range e.values {
		switch v.(type) {
		case map[string]any, []any:
			return e, false, true
		}
	}
	return e, true, false
}

// originValue is origin.get(key) of a dict origin, nil otherwise.
func originValue(origin map[string]any, key string) any {
	if origin == nil {
		return nil
	}
	return origin[key]
}

// truthy is Python's truth value of a decoded JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case map[string]any:
		return len(x) > 0
	case []any:
		return len(x) > 0
	}
	return true
}

// pyStr is str(v) for the values a session id takes (a string or a whole number); ok is
// false for the others, which no row matches in practice.
func pyStr(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return x.String(), true
		}
	}
	return "", false
}
