// Package startup predicts, read-only, what a runtime generation's next start does to a
// home's storage, under that generation's rules and defaults and the home's config.yaml: the
// gateway's auto-prune, the routing store's first load, the CLI's latched repairs and
// auto-prune, and the gateway's first-hour entries prune. upgrade-check runs it for another
// generation (the first start after an upgrade), status for the home's own (the next start).
package startup

import "github.com/sessionctl/sessionctl/sessionsjson"

// Routing is what the target's loader does with the routing entries.
type Routing struct {
	EntriesBefore int       `json:"entries_before"`
	Kept          int       `json:"kept"`
	Dropped       []Dropped `json:"dropped"`
	Changed       []Changed `json:"changed"`
	Imported      int       `json:"imported"`
	// LoadedByFrom is how many entries the home's own generation loads (a rollback's base).
	LoadedByFrom int `json:"loaded_by_from"`
	// LoadError is why the target's load of sessions.json fails (unreadable or not JSON): none
	// of its entries load.
	LoadError string `json:"load_error,omitempty"`
}

// Dropped is an entry the target's loader drops: Reason is session_ended (EndReason set) or
// loader_failed (Message says why).
type Dropped struct {
	Key       string `json:"key"`
	Reason    string `json:"reason"`
	EndReason string `json:"end_reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// LoadedByFrom: the home's own generation loads this entry (its loss is a regression).
	LoadedByFrom bool `json:"loaded_by_from"`
}

// Changed is an entry the target's loader rewrites (a repoint), with the fields that change.
type Changed struct {
	Key    string   `json:"key"`
	Reason string   `json:"reason"`
	Fields []string `json:"fields"`
	Before string   `json:"session_id_before,omitempty"`
	After  string   `json:"session_id_after,omitempty"`
}

// StartMaintenance is the start-up maintenance the target runs on its first start.
type StartMaintenance struct {
	GhostPrune     Latched      `json:"ghost_prune"`
	OrphanFinalize Latched      `json:"orphan_finalize"`
	AutoPrune      AutoPrune    `json:"auto_prune"`
	EntriesPrune   EntriesPrune `json:"entries_prune"`
}

// Latched is a one-time repair: Latched when its state_meta latch was set before the start,
// WouldChange the rows it changes.
type Latched struct {
	Latched     bool `json:"latched"`
	WouldChange int  `json:"would_change"`
	// Raises is why the runtime's call raises on this home (it then changes nothing and sets
	// no latch: the next CLI start tries again).
	Raises string `json:"raises,omitempty"`
}

// AutoPrune is maybe_auto_prune_and_vacuum as the target reads config.yaml.
type AutoPrune struct {
	Enabled          bool    `json:"enabled"`
	RetentionDays    float64 `json:"retention_days"`
	MinIntervalHours float64 `json:"min_interval_hours"`
	Throttled        bool    `json:"throttled"`
	WouldDelete      int     `json:"would_delete"`
	Vacuum           bool    `json:"vacuum"`
	// Configured: config.yaml sets sessions.auto_prune itself (not the target's default).
	Configured bool `json:"configured"`
	// Raises is why the callers' reading of config.yaml raises (auto-prune then does not run).
	Raises string `json:"raises,omitempty"`
	// Note is what the prediction assumed about config.yaml (e.g. unparseable: defaults).
	Note string `json:"note,omitempty"`
}

// EntriesPrune is the gateway's first-hour prune_old_entries.
type EntriesPrune struct {
	MaxAgeDays float64  `json:"max_age_days"`
	WouldDrop  int      `json:"would_drop"`
	Keys       []string `json:"keys"`
	// Raises is why the prune raises (an aware updated_at compared with the naive cutoff):
	// it drops nothing.
	Raises string `json:"raises,omitempty"`
}

// Target is the generation an upgrade check predicts for: its rules and the schema version
// its runtime writes (its SCHEMA_VERSION).
type Target struct {
	Gen    sessionsjson.Generation
	Rules  sessionsjson.Rules
	Schema int
}
