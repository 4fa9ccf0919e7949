package upgrade

import (
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// Upstream commits of the migration rules an open applies (hermes_state.py; statedb.md §2.2,
// runtime-v26.md §1). Declarative steps (CREATE … IF NOT EXISTS from SCHEMA_SQL) cite the
// generation's own commit.
const (
	// commitReconcile: _reconcile_columns adds every declared column a table lacks
	// (461ef8870, 2026-04-27).
	commitReconcile = "461ef8870"
	// commitV11FTS: the v11 FTS rewrite — drop the six triggers and both FTS tables, recreate
	// them inline (content || tool_name || tool_calls) and fill them from messages (8d76d69d4).
	commitV11FTS = "8d76d69d4"
	// commitTriggerRepair: fewer than the six FTS triggers → ensure the DDL and rebuild both
	// indexes from messages (_fts_trigger_count, 355af2c20, 2026-05-30).
	commitTriggerRepair = "355af2c20"
	// commitHealRouting: gateway_routing rebuilt when its primary key is not
	// (scope, session_key) (_heal_gateway_routing_pk, 76b0ea511).
	commitHealRouting = "76b0ea511"
	// commitHealUsage: session_model_usage rebuilt when task is not in its primary key
	// (_heal_session_model_usage_pk, b6ca4fc85; the v22 block eb6aa0360 does the same).
	commitHealUsage = "b6ca4fc85"
	// commitOptIn: v23 keeps a legacy FTS layout on existing files and only sets
	// state_meta.fts_optimize_available; files without one get the external-content layout
	// (9acc4b47f).
	commitOptIn = "9acc4b47f"
	// commitNarrowTriggers: broad FTS UPDATE triggers dropped and re-created as
	// AFTER UPDATE OF content, tool_name, tool_calls (_migrate_broad_fts_update_triggers,
	// dab7c8860).
	commitNarrowTriggers = "dab7c8860"
	// commitStaleFTS: state_meta.fts_stale → the FTS triggers are dropped and the layout
	// recreated and rebuilt in one transaction (_recover_stale_fts, 1527a81b5).
	commitStaleFTS = "1527a81b5"
)

// columnRule is how a runtime adds the columns its DDL declares to an existing table.
type columnRule int

const (
	// columnsByVersion: only the version-gated ALTER TABLE steps of the runtime (r0418, before
	// the reconciler): a column is added when the file's version is below its step.
	columnsByVersion columnRule = iota
	// columnsReconciled: every declared column the table lacks is added (commitReconcile).
	columnsReconciled
)

// ftsRule is how a runtime's open treats the FTS tables and their triggers.
type ftsRule int

const (
	// ftsCreateMissing (r0418): FTS_SQL runs only when messages_fts does not exist; nothing
	// is filled.
	ftsCreateMissing ftsRule = iota
	// ftsInline (r0506, r0525): the v11 rewrite when the file is below v11; otherwise a
	// missing FTS table is created with its triggers, unfilled.
	ftsInline
	// ftsInlineRepair (r0703, r0715): as ftsInline, and fewer than six FTS triggers make the
	// open ensure the DDL and rebuild both indexes (commitTriggerRepair).
	ftsInlineRepair
	// ftsOptIn (r0817): no v11 rewrite; a legacy layout (messages_fts without tool_name) is
	// kept with the legacy DDL (the inline layout's, UPDATE triggers narrowed), other files
	// get the external-content layout; a trigger repair rebuilds; fts_stale recovers;
	// broad UPDATE triggers are narrowed (commitOptIn, commitStaleFTS, commitNarrowTriggers).
	ftsOptIn
)

// chainStep is a version-gated column addition of a runtime without the reconciler.
type chainStep struct {
	version int // added when the file's version is below this
	table   string
	columns []string
	commit  string
}

// openRules is what one generation's SessionDB._init_schema does beyond running its DDL
// (CREATE … IF NOT EXISTS of every table, index and trigger it declares).
type openRules struct {
	commit  string // the generation's upstream commit
	columns columnRule
	chain   []chainStep // columnsByVersion only
	// healsKeys: gateway_routing and session_model_usage are rebuilt when their primary key
	// is an older one (commitHealRouting, commitHealUsage).
	healsKeys bool
	fts       ftsRule
	// legacyFTS is the generation whose inline FTS DDL this runtime keeps on legacy files
	// (ftsOptIn): r0817's LEGACY_FTS_SQL is r0715's with the UPDATE triggers narrowed.
	legacyFTS sessionsjson.Generation
	// data lists the version-gated data steps the runtime has (backfill.go), each run when
	// the file's version is below it.
	data []int
	// activeEveryOpen: the NULL active heal runs on every open (r0715+), not only below v12.
	activeEveryOpen bool
	// resetAwareTags: the v16 step leaves reset continuations untagged (r0817).
	resetAwareTags bool
}

// knowsOptimizeFlag reports whether the runtime has state_meta.fts_optimize_available.
func (r openRules) knowsOptimizeFlag() bool {
	return r.fts == ftsOptIn
}

// r0418Chain is cb4addaca's version chain (hermes_state.py _init_schema): v2
// messages.finish_reason (b33ed9176), v3 sessions.title (60b6abefd), v5 the billing columns
// (d417ba2a4), v6 the reasoning columns (42fec1915).
var r0418Chain = []chainStep{
	{2, "messages", []string{"finish_reason"}, "b33ed9176"},
	{3, "sessions", []string{"title"}, "60b6abefd"},
	{5, "sessions", []string{"cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "billing_provider",
		"billing_base_url", "billing_mode", "estimated_cost_usd", "actual_cost_usd", "cost_status", "cost_source",
		"pricing_version"}, "d417ba2a4"},
	{6, "messages", []string{"reasoning", "reasoning_details", "codex_reasoning_items"}, "42fec1915"},
}

// generationOpenRules holds the open rules of every generation sessionctl replays (each
// with a runtime schema in statedb/schema; a test holds both tables together).
var generationOpenRules = map[sessionsjson.Generation]openRules{
	sessionsjson.GenR0418: {commit: "cb4addaca", columns: columnsByVersion, chain: r0418Chain, fts: ftsCreateMissing},
	sessionsjson.GenR0506: {commit: "3b750715a", columns: columnsReconciled, fts: ftsInline},
	sessionsjson.GenR0525: {commit: "3914089d5", columns: columnsReconciled, fts: ftsInline},
	sessionsjson.GenR0703: {commit: "52d0d671e", columns: columnsReconciled, fts: ftsInlineRepair,
		data: []int{stepActive, stepDelegateTags}},
	sessionsjson.GenR0715: {commit: "c2a3b9ce5", columns: columnsReconciled, fts: ftsInlineRepair,
		data: []int{stepDelegateTags, stepGatewayMetadata, stepUsageSeed}, activeEveryOpen: true},
	sessionsjson.GenR0817: {commit: "481156139", columns: columnsReconciled, healsKeys: true, fts: ftsOptIn,
		legacyFTS:       sessionsjson.GenR0715,
		data:            []int{stepDelegateTags, stepGatewayMetadata, stepUsageSeed, stepOptimizeFlag, stepSystemPrompts},
		activeEveryOpen: true, resetAwareTags: true},
}
