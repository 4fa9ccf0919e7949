package main

import (
	"fmt"
	"strings"
)

// generation describes one Hermes Agent runtime generation: the schema it
// writes into state.db and the shape of its sessions.json entries.
type generation struct {
	Short      string // -gen value, e.g. "r0715"
	Full       string // fixture directory name, e.g. "r0715-c2a3b9ce5"
	Readme     string // _README text written first in sessions.json, "" for none
	FlushedKey string // "memory_flushed" (r0418) or "expiry_finalized"
	// EntryLevel selects the optional SessionEntry fields the generation
	// writes: 0 = none of #21-#25, 1 = is_fresh_reset, 2 = #21-#24,
	// 3 = #21-#25 (model_override when set), 4 = as 3 plus r0817's metadata,
	// active_turn_token, active_turn_started_at and prev_session_id.
	EntryLevel int
	// Guild selects the Discord origin extras: 0 none, 1 guild_id,
	// 2 scope_id and guild_id.
	Guild int
	// DBPrimary is true when the routing index lives in gateway_routing.
	DBPrimary bool
	// ReapReason is true when the generation writes end_reason
	// 'ws_orphan_reap' (07-14+).
	ReapReason bool
	// DelegateConfig is true when a delegate child's model_config records
	// {"_delegate_from": parent} (r0703+).
	DelegateConfig bool
	// SubagentSource is true when delegate children have source 'subagent'
	// (07-14+) instead of their parent's.
	SubagentSource bool
	// V26 is true for the generation whose schema holds r0817's tables and
	// columns: system_prompts (sessions.system_prompt_hash), sessions.
	// last_activity_at and title_source, session_turn_leases and
	// gateway_hygiene_state; its homes get rows in each (see buildV26).
	V26 bool
	// Journal is the journal mode the generation's state.db is left in:
	// "wal", or "delete" (rollback journal) where the fixture's file is in
	// that mode, as r0817's is (a runtime on a SQLite with the WAL-reset bug
	// creates its files in DELETE mode).
	Journal string
}

const readme0623 = "Gateway routing index ONLY: maps messaging session keys (agent:main:<platform>:...) to active session IDs. This is NOT the session list. ALL sessions (CLI, TUI, and gateway) live in ~/.hermes/state.db and are shown by `hermes sessions list` and `/sessions`. Seeing only gateway entries here is expected and does not mean CLI sessions are missing."

const readme0705 = "LEGACY MIRROR of the gateway routing index (the primary copy lives in the gateway_routing table in ~/.hermes/state.db). Maps messaging session keys (agent:main:<platform>:...) to active session IDs. This is NOT the session list. ALL sessions (CLI, TUI, and gateway) live in ~/.hermes/state.db and are shown by `hermes sessions list` and `/sessions`. Disable this file with `gateway.write_sessions_json: false` in config.yaml."

// generations lists every supported generation, oldest first.
var generations = []generation{
	{Short: "r0418", Full: "r0418-cb4addaca", FlushedKey: "memory_flushed", EntryLevel: 0, Guild: 0, Journal: "wal"},
	{Short: "r0506", Full: "r0506-3b750715a", FlushedKey: "expiry_finalized", EntryLevel: 1, Guild: 1, Journal: "wal"},
	{Short: "r0525", Full: "r0525-3914089d5", FlushedKey: "expiry_finalized", EntryLevel: 2, Guild: 1, Journal: "wal"},
	{Short: "r0703", Full: "r0703-52d0d671e", Readme: readme0623, FlushedKey: "expiry_finalized", EntryLevel: 3, Guild: 2,
		DelegateConfig: true, Journal: "wal"},
	{Short: "r0715", Full: "r0715-c2a3b9ce5", Readme: readme0705, FlushedKey: "expiry_finalized", EntryLevel: 3, Guild: 2,
		DBPrimary: true, ReapReason: true, DelegateConfig: true, SubagentSource: true, Journal: "wal"},
	{Short: "r0817", Full: "r0817-481156139", Readme: readme0705, FlushedKey: "expiry_finalized", EntryLevel: 4, Guild: 2,
		DBPrimary: true, ReapReason: true, DelegateConfig: true, SubagentSource: true, V26: true, Journal: "delete"},
}

// lookupGeneration finds a generation by its short or full name.
func lookupGeneration(name string) (generation, error) {
	for _, g := range generations {
		if name == g.Short || name == g.Full {
			return g, nil
		}
	}
	names := make([]string, len(generations))
	for i, g := range generations {
		names[i] = g.Short
	}
	return generation{}, fmt.Errorf("unknown generation %q (want one of %s)", name, strings.Join(names, ", "))
}
