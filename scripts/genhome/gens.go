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
	// 3 = #21-#25 (model_override when set).
	EntryLevel int
	// Guild selects the Discord origin extras: 0 none, 1 guild_id,
	// 2 scope_id and guild_id.
	Guild int
	// DBPrimary is true when the routing index lives in gateway_routing.
	DBPrimary bool
	// ReapReason is true when the generation writes end_reason
	// 'ws_orphan_reap' (07-14+).
	ReapReason bool
}

const readme0623 = "Gateway routing index ONLY: maps messaging session keys (agent:main:<platform>:...) to active session IDs. This is NOT the session list. ALL sessions (CLI, TUI, and gateway) live in ~/.hermes/state.db and are shown by `hermes sessions list` and `/sessions`. Seeing only gateway entries here is expected and does not mean CLI sessions are missing."

const readme0705 = "LEGACY MIRROR of the gateway routing index (the primary copy lives in the gateway_routing table in ~/.hermes/state.db). Maps messaging session keys (agent:main:<platform>:...) to active session IDs. This is NOT the session list. ALL sessions (CLI, TUI, and gateway) live in ~/.hermes/state.db and are shown by `hermes sessions list` and `/sessions`. Disable this file with `gateway.write_sessions_json: false` in config.yaml."

// generations lists every supported generation, oldest first.
var generations = []generation{
	{Short: "r0418", Full: "r0418-cb4addaca", FlushedKey: "memory_flushed", EntryLevel: 0, Guild: 0},
	{Short: "r0506", Full: "r0506-3b750715a", FlushedKey: "expiry_finalized", EntryLevel: 1, Guild: 1},
	{Short: "r0525", Full: "r0525-3914089d5", FlushedKey: "expiry_finalized", EntryLevel: 2, Guild: 1},
	{Short: "r0703", Full: "r0703-52d0d671e", Readme: readme0623, FlushedKey: "expiry_finalized", EntryLevel: 3, Guild: 2},
	{Short: "r0715", Full: "r0715-c2a3b9ce5", Readme: readme0705, FlushedKey: "expiry_finalized", EntryLevel: 3, Guild: 2, DBPrimary: true, ReapReason: true},
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
