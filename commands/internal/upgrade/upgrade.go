// Package upgrade predicts what the runtime of another generation does to a home the first
// time it opens and starts on it (`sessionctl upgrade-check --to GEN`): the schema steps of its
// open, what its routing loader keeps, drops, rewrites and imports, the start-up maintenance it
// runs under its own rules and defaults, and the full-text rebuild it triggers. It only reads
// the home. Every prediction comes from the rule tables the repairs use (sessionsjson's
// generation table, statedb's queries), in the order of the runtime's first start
// (testdata/upgrade/README.md "What B's first open and start is"):
//
//  1. open: SessionDB's schema migration;
//  2. gateway-init: maybe_auto_prune_and_vacuum when config.yaml enables sessions.auto_prune;
//  3. gateway-load: the routing store's first load (import into gateway_routing on v19+, the
//     load-time prune on v17+);
//  4. cli-start: the latched ghost prune and orphan finalize, then auto-prune (throttled);
//  5. first-hour: prune_old_entries(session_store_max_age_days).
package upgrade

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// Report is `data.upgrade` of the contract (cli-contract.md, upgrade-check).
type Report struct {
	From             Side             `json:"from"`
	To               Side             `json:"to"`
	SchemaSteps      []SchemaStep     `json:"schema_steps"`
	DataBackfills    []Backfill       `json:"data_backfills"`
	Routing          Routing          `json:"routing"`
	StartMaintenance StartMaintenance `json:"start_maintenance"`
	FTSRebuild       FTSRebuild       `json:"fts_rebuild"`
	Downgrade        *Downgrade       `json:"downgrade,omitempty"`
}

// Side names a generation and the schema version of the home on that side.
type Side struct {
	Generation string `json:"generation"`
	Schema     int    `json:"schema"`
}

// SchemaStep is one DDL difference between the home's file and the file after the target's
// open: Kind is create_table, add_column (Object "table.column"), rebuild_table,
// create_index, drop_index, replace_index, create_trigger, drop_trigger, replace_trigger,
// create_view, create_virtual_table, replace_virtual_table, drop_virtual_table or
// set_schema_version (Object "schema_version", Before/After). Its JSON carries the fields of
// its kind only, as summary.json of the upgrade fixtures does (MarshalJSON, schemadiff.go).
type SchemaStep struct {
	Kind   string `json:"kind"`
	Object string `json:"object"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
	Note   string `json:"note,omitempty"`
	// Commit is the upstream commit of the rule that makes the step.
	Commit string `json:"commit,omitempty"`
	// Table is the table of a column, index or trigger.
	Table string `json:"table,omitempty"`
	// Column, Type, NotNull, Default: an added column as PRAGMA table_info gives it after the
	// open (Default is the default's SQL text, nil without one).
	Column  string  `json:"column,omitempty"`
	Type    string  `json:"type,omitempty"`
	NotNull bool    `json:"notnull,omitempty"`
	Default *string `json:"default,omitempty"`
	// Columns: a created table's columns, an index's key columns.
	Columns []string `json:"columns,omitempty"`
	// Unique, Partial: of an index.
	Unique  bool `json:"unique,omitempty"`
	Partial bool `json:"partial,omitempty"`
	// Event is a trigger's timing and operation ("AFTER UPDATE").
	Event string `json:"event,omitempty"`
	// Module and SQL: of a virtual table.
	Module string `json:"module,omitempty"`
	SQL    string `json:"sql,omitempty"`
}

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

// FTSRebuild is the full-text index work the target's open does.
type FTSRebuild struct {
	Triggered         bool     `json:"triggered"`
	Tables            []string `json:"tables"`
	Rows              int64    `json:"rows"`
	OptimizeAvailable string   `json:"optimize_available,omitempty"`
	// EstimateSeconds is the rebuild's time at a measured indexing rate (docs/upgrade.md).
	EstimateSeconds float64 `json:"estimate_seconds,omitempty"`
}

// Downgrade is what the home's own generation does when started again on the upgraded home.
type Downgrade struct {
	Generation     string `json:"generation"`
	DBOpens        bool   `json:"db_opens"`
	EntriesLoaded  int    `json:"entries_loaded"`
	EntriesInIndex int    `json:"entries_in_upgraded_home"`
}

// Target is the generation an upgrade check predicts for: its rules and the schema version
// its runtime writes (its SCHEMA_VERSION).
type Target struct {
	Gen    sessionsjson.Generation
	Rules  sessionsjson.Rules
	Schema int
}

// ErrUnknownTarget is returned for a --to value that names no generation sessionctl knows.
var ErrUnknownTarget = errors.New("not a generation this sessionctl knows")

// ResolveTarget reads --to: a generation name (r0715, or a fixture-style r0715-c2a3b9ce5) or
// a schema version (v21, 21) of a generation sessionctl writes.
func ResolveTarget(name string) (Target, error) {
	v := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "v")
	if n, err := strconv.Atoi(v); err == nil {
		if !sessionsjson.SchemaWritable(n) {
			return Target{}, fmt.Errorf("--to %s: schema v%d: %w (known: %s)", name, n, ErrUnknownTarget, knownTargets())
		}
		r := sessionsjson.RulesForSchema(n)
		return Target{Gen: r.Generation, Rules: r, Schema: sessionsjson.CodeSchema(r.Generation)}, nil
	}
	g := sessionsjson.Generation(strings.SplitN(strings.ToLower(strings.TrimSpace(name)), "-", 2)[0])
	r := sessionsjson.RulesFor(g)
	if !r.WritesAllowed || r.Generation != g || sessionsjson.CodeSchema(g) == 0 {
		return Target{}, fmt.Errorf("--to %s: %w (known: %s)", name, ErrUnknownTarget, knownTargets())
	}
	return Target{Gen: g, Rules: r, Schema: sessionsjson.CodeSchema(g)}, nil
}

func knownTargets() string {
	var names []string
	for _, g := range sessionsjson.Generations() {
		if sessionsjson.RulesFor(g).WritesAllowed {
			names = append(names, string(g))
		}
	}
	return strings.Join(names, ", ")
}
