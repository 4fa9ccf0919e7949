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

	"github.com/sessionctl/sessionctl/commands/internal/startup"
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

// The start's prediction, shared with status (package startup).
type (
	// Routing is what the target's loader does with the routing entries.
	Routing = startup.Routing
	// Dropped is an entry the target's loader drops.
	Dropped = startup.Dropped
	// Changed is an entry the target's loader rewrites.
	Changed = startup.Changed
	// StartMaintenance is the start-up maintenance the target runs on its first start.
	StartMaintenance = startup.StartMaintenance
	// Latched is a one-time repair of the start.
	Latched = startup.Latched
	// AutoPrune is maybe_auto_prune_and_vacuum as the target reads config.yaml.
	AutoPrune = startup.AutoPrune
	// EntriesPrune is the gateway's first-hour prune_old_entries.
	EntriesPrune = startup.EntriesPrune
	// Target is the generation an upgrade check predicts for.
	Target = startup.Target
)

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
