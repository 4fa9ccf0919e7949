package sessionsjson

import "strings"

// Generation names the runtime generation that wrote a home.
type Generation string

// Known runtime generations.
const (
	GenR0418   Generation = "r0418"   // schema 1–6: cb4addaca, 2026-04-18
	GenR0506   Generation = "r0506"   // schema 7–11
	GenR0525   Generation = "r0525"   // schema 12–16
	GenR0703   Generation = "r0703"   // schema 17–18: _README, path safety
	GenR0715   Generation = "r0715"   // schema 19–21: gateway_routing is primary
	GenV22V25  Generation = "v22-v25" // short-lived builds between r0715 and r0817: read-only
	GenR0817   Generation = "r0817"   // schema 26: 481156139, 2026-08-17
	GenNewer   Generation = "newer"   // schema newer than the table knows: readable, never written
	GenUnknown Generation = "unknown" // no state.db: rules inferred from the file
)

// README texts the runtime writes as the "_README" value.
const (
	READMEr0703 = "Gateway routing index ONLY: maps messaging session keys (agent:main:<platform>:...) to active session IDs. This is NOT the session list. ALL sessions (CLI, TUI, and gateway) live in ~/.hermes/state.db and are shown by `hermes sessions list` and `/sessions`. Seeing only gateway entries here is expected and does not mean CLI sessions are missing."
	READMEr0715 = "LEGACY MIRROR of the gateway routing index (the primary copy lives in the gateway_routing table in ~/.hermes/state.db). Maps messaging session keys (agent:main:<platform>:...) to active session IDs. This is NOT the session list. ALL sessions (CLI, TUI, and gateway) live in ~/.hermes/state.db and are shown by `hermes sessions list` and `/sessions`. Disable this file with `gateway.write_sessions_json: false` in config.yaml."
)

// PathSafety is the load-time check applied to session_key and session_id.
type PathSafety int

// Path-safety rules.
const (
	// PathSafetyNone: no check (before r0703).
	PathSafetyNone PathSafety = iota
	// PathSafetyStrict: key and id reject "..", "/", "\" and a leading "<letter>:" (r0703).
	PathSafetyStrict
	// PathSafetyInteriorSlash: as strict, but a key may contain an interior "/" (r0715+).
	PathSafetyInteriorSlash
)

// Rules are the load, start-up and write rules of one generation.
type Rules struct {
	// Generation the rules belong to.
	Generation Generation
	// SkipUnderscoreKeys: keys starting with "_" are not entries (r0703+).
	SkipUnderscoreKeys bool
	// SkipNonObject: a non-object value is skipped; before r0703 it raises TypeError.
	SkipNonObject bool
	// TypeErrorAborts: a TypeError inside an entry aborts the rest of the load (r0418–r0525).
	TypeErrorAborts bool
	// OriginDictOnly: SessionEntry.from_dict parses origin when it is a dict, an empty one
	// included (which then lacks platform: KeyError, the entry is skipped), and ignores any
	// other value (r0703+; 9c994377e, 2026-06-25: `isinstance(data["origin"], dict)`). Before,
	// it parses any truthy value (a truthy non-dict raises TypeError) and ignores a falsy one,
	// `{}` included (`data["origin"]` truthiness, cb4addaca … 3914089d5).
	OriginDictOnly bool
	// Platforms is what the generation's Platform(value) accepts: its enum and the bundled
	// plugin platforms of its tree (platform.go has each set with its commits).
	Platforms *PlatformSet
	// NormalisePlatform: a value the enum does not hold exactly is stripped and lower-cased
	// before it is looked up, and may name a bundled plugin platform (Platform._missing_,
	// r0506+; 8f144fe36, 2026-04-29). The runtime's save writes the member's value.
	NormalisePlatform bool
	// PathSafety is the session_key/session_id check applied on load.
	PathSafety PathSafety
	// README is the "_README" text the generation writes ("" before r0703).
	README string
	// CrashRecoverySetsSuspended: crash recovery sets suspended (r0418) instead of resume_pending.
	CrashRecoverySetsSuspended bool
	// FinalizedFlag is the field name of the expiry-finalized flag.
	FinalizedFlag string
	// AutoResume: resume_pending entries are auto-resumed at start (05-07, fad684b1f).
	AutoResume bool
	// PruneEndedAtLoad: entries whose state.db row ended are dropped or healed at load
	// (06-28, 00d8c2c91).
	PruneEndedAtLoad bool
	// FreshnessGate: a resume marker older than FreshnessWindowMicros expires on the next
	// message (07-01, a1f62f477).
	FreshnessGate bool
	// DBRepairs: the runtime has finalize_orphaned_compression_sessions and
	// prune_empty_ghost_sessions (from r0506; both arrived in May 2026).
	DBRepairs bool
	// WritesAllowed is false for generations the tool does not know.
	WritesAllowed bool
	// Intermediate: written by a short-lived build no fixture settles (schema v22–v25,
	// 2026-07-16 … 08-15, runtime-v26.md §7 Q1): read-only, and a start of a current gateway
	// migrates the file.
	Intermediate bool
	// Tip is the runtime's get_compression_tip rule.
	Tip TipRule
	// Fields is the set of SessionEntry fields the generation's to_dict writes; any other
	// member is an unknown field (dropped by the runtime's next full save).
	Fields FieldSet
	// TurnMarkers: entries carry the active-turn marker pair (active_turn_token,
	// active_turn_started_at), recover_interrupted_turns runs at an unclean start and
	// discard_active_turn_markers at a clean one (6774760b6, PR #81264).
	TurnMarkers bool
	// PeerRecovery: the load-time prune recovers a stale entry through
	// find_latest_gateway_session_for_peer (rows of the same session_key and source, open or
	// ended agent_close/ws_orphan_reap, messages first, then the latest activity; fenced by
	// later reset rows; d2a4d373e PR #82633, 6e99531c8 PR #82743) instead of the compression
	// tip, and keeps an entry whose lookup raises (d17daf0b1).
	PeerRecovery bool
	// PromptGC: prune_empty_ghost_sessions and prune_sessions also delete every system_prompts
	// row no session references, in the same transaction (7d066c3c5, PR #77755).
	PromptGC bool
	// HealsOnOpen: the runtime's open heals legacy primary keys (_heal_gateway_routing_pk
	// 76b0ea511, _heal_session_model_usage_pk b6ca4fc85), rebuilds a detached FTS index
	// (fts_stale, 1527a81b5) and records legacy FTS as optimisable (9acc4b47f): check
	// reports what the next open will do.
	HealsOnOpen bool
	// ResetDefaultMode is the mode of the gateway's default session reset policy when the
	// home's config sets none (gateway/config.py SessionResetPolicy): "both" until 9c272a306
	// (#60194, 2026-07) turned the auto-reset off, "none" from r0715.
	ResetDefaultMode string
	// SaveRewritesValues: SessionEntry.to_dict rewrites values from_dict read (481156139):
	// metadata as a dict ({} for a falsy value, an object for a list of pairs), the marker and
	// resume times as isoformat() writes them, and origin members written only when truthy
	// (savedValues).
	SaveRewritesValues bool
	// Borrowed: the newest generation's rules, lent to a generation the table lacks (GenNewer)
	// so that its stores can be read; what its runtime does is not verified (Verified).
	Borrowed bool
	// GatewayRouting: the routing index is the gateway_routing table of state.db, which the
	// store's first load fills from sessions.json for the keys it lacks (r0715+;
	// gateway/session.py _ensure_loaded_locked at c2a3b9ce5).
	GatewayRouting bool
	// Recovery is the lookup the load-time prune (PruneEndedAtLoad) recovers a stale entry
	// through (find_latest_gateway_session_for_peer).
	Recovery RecoveryRule
	// Maintenance is what the generation's start runs on state.db besides the latched
	// repairs (DBRepairs): its auto-prune and that rule's defaults.
	Maintenance Maintenance
	// JSONLTranscripts: the gateway's SessionStore.append_to_transcript also appends every
	// message of a gateway session to sessions/<id>.jsonl (cb4addaca, 3b750715a); 351fdcc6e
	// (2026-05-20, before r0525) stopped it, and later runtimes write no transcript file by
	// default (session_<id>.json snapshots are opt-in: sessions.write_json_snapshots).
	JSONLTranscripts bool
}

// RecoveryRule selects which generation's find_latest_gateway_session_for_peer the load-time
// prune calls (statedb/recover.go has the SQL of each).
type RecoveryRule int

// Recovery lookups.
const (
	// RecoveryNone: no load-time prune (before r0703).
	RecoveryNone RecoveryRule = iota
	// RecoveryV17: the row with the entry's session_key and source, else the peer tuple,
	// open or ended agent_close, with messages, the latest started_at first; a lookup that
	// raises drops the entry (86e64900b, d5b4879d4; r0703 at 52d0d671e).
	RecoveryV17
	// RecoveryV21: as RecoveryV17, rows ended ws_orphan_reap recoverable too (ca907480a;
	// r0715 at c2a3b9ce5).
	RecoveryV21
	// RecoveryV26: r0817's: messages no longer required on the key path, ranked by messages
	// then last activity, fenced by later reset rows, and a lookup that raises keeps the
	// entry (d2a4d373e, 6e99531c8, d17daf0b1; 481156139). PeerRecovery marks the same rows.
	RecoveryV26
)

// PruneAge is how prune_sessions measures a session's age against the retention window.
type PruneAge int

// prune_sessions age rules.
const (
	// PruneByStart: started_at < now - days (b8663813b … c2a3b9ce5).
	PruneByStart PruneAge = iota
	// PruneByInactivity: the latest message's timestamp, else started_at, < now - days
	// (a228b8150, PR #72358; r0817).
	PruneByInactivity
)

// PruneFilterSet is which keyword filters a generation's _prune_filter_where has.
type PruneFilterSet int

// The generations' prune filter sets.
const (
	// PruneFiltersSource: prune_sessions(older_than_days, source) takes no other filter
	// (cb4addaca … 52d0d671e).
	PruneFiltersSource PruneFilterSet = iota
	// PruneFiltersV21: _prune_filter_where's keyword filters (040a5e30d, 2026-07-05), the
	// LIKE patterns unescaped (r0715 at c2a3b9ce5, and the v22–v25 builds).
	PruneFiltersV21
	// PruneFiltersV26: the same, with last_active_before/after (a228b8150) and every LIKE
	// pattern escaped with ESCAPE '\' (1d2dabce5, 4bab91944; r0817 at 481156139).
	PruneFiltersV26
)

// Maintenance is a generation's start-up maintenance of state.db beyond the latched repairs:
// maybe_auto_prune_and_vacuum at gateway start and at CLI start, when config.yaml's
// sessions.auto_prune is true.
type Maintenance struct {
	// AutoPrune: the generation has maybe_auto_prune_and_vacuum and calls it at gateway and
	// CLI start (b8663813b, 2026-04-22: r0506 and later).
	AutoPrune bool
	// Age is prune_sessions' age rule.
	Age PruneAge
	// PruneFiles: prune_sessions takes sessions_dir and, after its commit, removes each
	// deleted session's <id>.json, <id>.jsonl and request_dump_<id>_*.json (never
	// session_<id>.json) — 3b60abb6b (#3015), not in cb4addaca, in 3b750715a and later:
	// r0506 on. r0418's removes no file.
	PruneFiles bool
	// VacuumThrottle: VACUUM also waits min_vacuum_interval_days since state_meta.last_vacuum
	// (bd856a02f; r0817).
	VacuumThrottle bool
	// SetArchived: SessionDB.set_session_archived(id, archived) sets sessions.archived (v17)
	// on the session's whole compression lineage (85b65e29f, the lineage since 04b3f1953;
	// r0703 on): unarchive.
	SetArchived bool
	// ArchiveSessions: SessionDB.archive_sessions(older_than_days, source, **filters), the bulk
	// archive over prune's candidates not yet archived (040a5e30d, 2026-07-05; r0715 on):
	// archive --older-than. r0703 has the column and set_session_archived but not this.
	ArchiveSessions bool
	// ArchiveStale: SessionDB.archive_stale_sessions(idle_days, exclude_pinned=True), which
	// archives idle tips and standalone rows, open ones included (f16b80362; r0817): archive
	// --idle.
	ArchiveStale bool
	// NeverActivePrune: SessionDB.prune_never_active_keyed_sessions(older_than_days,
	// sessions_dir), which deletes open keyed rows that never had a turn and the
	// gateway_routing rows naming them (174ce8770; r0817): prune --never-active.
	NeverActivePrune bool
	// PruneFilters is which keyword filters the generation's prune_sessions and
	// archive_sessions take beyond source (_prune_filter_where; statedb.PruneFilterTable).
	PruneFilters PruneFilterSet
	// Defaults are the sessions: defaults of the generation's DEFAULT_CONFIG
	// (hermes_cli/config.py; hermes_cli/config_defaults.py at 481156139).
	Defaults SessionsConfig
	// Vacuum is the generation's SessionDB.vacuum(), which `compact` runs.
	Vacuum VacuumRule
	// OptimizeFTS is the generation's optimize_fts(), which vacuum() runs before VACUUM.
	OptimizeFTS FTSOptimize
}

// VacuumRule selects which generation's SessionDB.vacuum() `compact` runs (statedb/vacuum.go
// has the statements of each).
type VacuumRule int

// vacuum() rules.
const (
	// VacuumNone: the generation has no vacuum() (r0418; it arrived with b8663813b).
	VacuumNone VacuumRule = iota
	// VacuumCheckpointFirst: a TRUNCATE checkpoint (errors ignored), then VACUUM
	// (b8663813b, 2026-04-22; r0506 … r0715).
	VacuumCheckpointFirst
	// VacuumCheckpointAround: a PASSIVE checkpoint (errors ignored), VACUUM, then a TRUNCATE
	// checkpoint (errors ignored): ba80f3b86 made the first one PASSIVE, 9cf4fe551 added the
	// last (r0817).
	VacuumCheckpointAround
)

// FTSOptimize selects the FTS5 tables a generation's optimize_fts() merges, each only when it
// is queryable (Tables).
type FTSOptimize int

// optimize_fts() rules.
const (
	// FTSOptimizeNone: no optimize_fts() (before 38695254f: r0418 … r0525).
	FTSOptimizeNone FTSOptimize = iota
	// FTSOptimizeV17: messages_fts and messages_fts_trigram (38695254f, 2026-05-29; r0703,
	// r0715).
	FTSOptimizeV17
	// FTSOptimizeV26: messages_fts_cjk too (f13f84511; r0817).
	FTSOptimizeV26
)

// Tables lists the FTS5 tables of the rule, in the runtime's order.
func (f FTSOptimize) Tables() []string {
	switch f {
	case FTSOptimizeV17:
		return []string{"messages_fts", "messages_fts_trigram"}
	case FTSOptimizeV26:
		return []string{"messages_fts", "messages_fts_trigram", "messages_fts_cjk"}
	}
	return nil
}

// SessionsConfig is the sessions: section of config.yaml as maybe_auto_prune_and_vacuum's
// callers read it.
type SessionsConfig struct {
	AutoPrune             bool
	RetentionDays         int64
	MinIntervalHours      int64
	VacuumAfterPrune      bool
	MinVacuumIntervalDays int64 // read only where VacuumThrottle is set
}

// defaultSessionsConfig: the sessions: defaults, the same from 3b750715a to 481156139
// (auto_prune false, retention_days 90, vacuum_after_prune true, min_interval_hours 24;
// min_vacuum_interval_days 30 with bd856a02f).
var defaultSessionsConfig = SessionsConfig{RetentionDays: 90, MinIntervalHours: 24, VacuumAfterPrune: true, MinVacuumIntervalDays: 30}

// Verified reports whether the rules are a generation's of the table, settled against what
// is known of its runtime. A generation newer than the table (GenNewer) borrows the newest
// generation's rules so that its stores can be read (Borrowed), but what its runtime does is
// not verified: sessionctl then claims no runtime behaviour from them (no skipped entry, no
// next-start preview, no field dropped on save) and writes nothing.
func (r Rules) Verified() bool { return !r.Borrowed }

// TipRule selects which runtime generation's get_compression_tip rule to follow.
type TipRule int

// Compression-tip rules (statedb/tip.go has the SQL of each).
const (
	// TipNone: no compression-tip rule (before schema v7); the tip is the id itself.
	TipNone TipRule = iota
	// TipV11: the v11–v16 rule (3b750715a, 3914089d5): the latest child started at or after
	// its parent's compression end; 100 steps, no record of the ids seen.
	TipV11
	// TipV17: the v17–v23 rule (52d0d671e, c2a3b9ce5): continuation children ranked by class,
	// then the latest message (else started_at).
	TipV17
	// TipV24: as TipV17, ranked by _sql_session_last_active: the freshest of
	// last_activity_at and the latest message, else started_at (c2088efe9, PR #76354; r0817).
	TipV24
)

// generationRow is one generation's facts: the schema versions it wrote and its rules.
type generationRow struct {
	minSchema, maxSchema int
	code                 int    // the SCHEMA_VERSION of the generation's commit (what its open writes)
	readmePrefix         string // how its _README text starts ("" when it writes none)
	rules                Rules
}

// loader rule sets, by the upstream commits that introduced them.
var (
	// legacyLoad: before 06-21 (3a6a43cb8) and 06-25 (9c994377e): a TypeError aborts the load.
	legacyLoad = Rules{ResetDefaultMode: "both", TypeErrorAborts: true, FinalizedFlag: "expiry_finalized", DBRepairs: true, WritesAllowed: true,
		Platforms: platformsR0525, NormalisePlatform: true, Tip: TipV11, Fields: fieldsR0715, JSONLTranscripts: true,
		Maintenance: Maintenance{AutoPrune: true, PruneFiles: true, Defaults: defaultSessionsConfig, Vacuum: VacuumCheckpointFirst}}
	// modernLoad: 06-21..06-25 (3a6a43cb8, 0ef86febe, 9c994377e): path safety, _README,
	// non-objects skipped; 06-28 (00d8c2c91) load-time prune; 07-01 (a1f62f477) freshness gate.
	modernLoad = Rules{ResetDefaultMode: "both", SkipUnderscoreKeys: true, SkipNonObject: true, OriginDictOnly: true,
		Platforms: platformsR0703, NormalisePlatform: true,
		FinalizedFlag: "expiry_finalized", AutoResume: true, PruneEndedAtLoad: true, FreshnessGate: true,
		DBRepairs: true, WritesAllowed: true, Tip: TipV17, Fields: fieldsR0715, Recovery: RecoveryV17,
		Maintenance: Maintenance{AutoPrune: true, PruneFiles: true, SetArchived: true, Defaults: defaultSessionsConfig, Vacuum: VacuumCheckpointFirst, OptimizeFTS: FTSOptimizeV17}}
)

// generations is the table of known generations, oldest first: a new generation is a row.
var generations = []generationRow{
	{1, 6, 6, "", with(legacyLoad, func(r *Rules) { // cb4addaca, 2026-04-18: no Platform._missing_ yet
		r.Generation, r.CrashRecoverySetsSuspended, r.FinalizedFlag, r.DBRepairs = GenR0418, true, "memory_flushed", false
		r.Platforms, r.NormalisePlatform, r.Tip = platformsR0418, false, TipNone
		r.Maintenance = Maintenance{Defaults: defaultSessionsConfig} // no maybe_auto_prune_and_vacuum nor vacuum() before b8663813b
	})},
	{7, 11, 11, "", with(legacyLoad, func(r *Rules) { r.Generation, r.Platforms = GenR0506, platformsR0506 })}, // 3b750715a
	{12, 16, 13, "", with(legacyLoad, func(r *Rules) { // 3914089d5; auto-resume since fad684b1f
		r.Generation, r.AutoResume, r.JSONLTranscripts = GenR0525, true, false
	})},
	{17, 18, 17, "Gateway routing index ONLY", with(modernLoad, func(r *Rules) { // 52d0d671e
		r.Generation, r.PathSafety, r.README = GenR0703, PathSafetyStrict, READMEr0703
	})},
	{19, 21, 21, "LEGACY MIRROR of the gateway routing index", with(modernLoad, func(r *Rules) { // c2a3b9ce5; interior "/" in keys since 83f14b2f2
		r.Generation, r.PathSafety, r.README, r.ResetDefaultMode = GenR0715, PathSafetyInteriorSlash, READMEr0715, "none" // 9c272a306
		r.GatewayRouting, r.Recovery, r.Maintenance.ArchiveSessions = true, RecoveryV21, true
		r.Maintenance.PruneFilters = PruneFiltersV21 // 040a5e30d
	})},
	// v22 eb6aa0360 (07-16), v23 9acc4b47f, v24 c2088efe9/53a5983af, v25 7d066c3c5 (08-03):
	// builds that lived days each; their routing rules changed inside the range.
	{22, 23, 23, "", with(modernLoad, func(r *Rules) {
		r.Generation, r.PathSafety, r.README, r.WritesAllowed, r.Intermediate = GenV22V25, PathSafetyInteriorSlash, READMEr0715, false, true
		r.ResetDefaultMode = "none"
		r.Fields, r.GatewayRouting, r.Recovery, r.Maintenance.ArchiveSessions = fieldsR0817, true, RecoveryV21, true
		r.Maintenance.PruneFilters = PruneFiltersV21
	})},
	{24, 25, 25, "", with(modernLoad, func(r *Rules) {
		r.Generation, r.PathSafety, r.README, r.WritesAllowed, r.Intermediate = GenV22V25, PathSafetyInteriorSlash, READMEr0715, false, true
		r.ResetDefaultMode = "none"
		r.Fields, r.Tip, r.GatewayRouting, r.Recovery = fieldsR0817, TipV24, true, RecoveryV21 // the ranking and fences changed inside v25
		r.Maintenance.ArchiveSessions, r.Maintenance.PruneFilters = true, PruneFiltersV21
	})},
	{26, 26, 26, "", with(modernLoad, func(r *Rules) { // 481156139, 2026-08-17; v26 e89532d97
		r.Generation, r.PathSafety, r.README, r.ResetDefaultMode = GenR0817, PathSafetyInteriorSlash, READMEr0715, "none"
		r.Platforms, r.Fields, r.Tip = platformsR0817, fieldsR0817, TipV24
		r.TurnMarkers, r.PeerRecovery, r.PromptGC, r.HealsOnOpen = true, true, true, true
		r.SaveRewritesValues = true
		r.GatewayRouting, r.Recovery = true, RecoveryV26
		r.Maintenance.Age, r.Maintenance.VacuumThrottle = PruneByInactivity, true                                    // a228b8150, bd856a02f
		r.Maintenance.Vacuum, r.Maintenance.OptimizeFTS = VacuumCheckpointAround, FTSOptimizeV26                     // 9cf4fe551, f13f84511
		r.Maintenance.ArchiveSessions, r.Maintenance.ArchiveStale, r.Maintenance.NeverActivePrune = true, true, true // 040a5e30d, f16b80362, 174ce8770
		r.Maintenance.PruneFilters = PruneFiltersV26                                                                 // a228b8150, 1d2dabce5
	})},
}

func with(base Rules, edit func(*Rules)) Rules {
	edit(&base)
	return base
}

// Generations lists the generations of the table, oldest first (the v22–v25 builds once).
func Generations() []Generation {
	var out []Generation
	for _, g := range generations {
		if len(out) == 0 || out[len(out)-1] != g.rules.Generation {
			out = append(out, g.rules.Generation)
		}
	}
	return out
}

// CodeSchema is the schema_version the runtime of generation g writes (the SCHEMA_VERSION of
// its commit), 0 for a generation the table lacks.
func CodeSchema(g Generation) int {
	v := 0
	for _, row := range generations {
		if row.rules.Generation == g {
			v = row.code
		}
	}
	return v
}

// NewestKnownSchema is the newest schema_version of the generation table.
func NewestKnownSchema() int {
	return generations[len(generations)-1].maxSchema
}

// GenerationForSchema maps a state.db schema_version to the generation that wrote it.
func GenerationForSchema(version int) Generation {
	return RulesForSchema(version).Generation
}

// RulesForSchema returns the rules of the generation that writes schema_version version:
// GenNewer's (the newest generation's, writes refused) above the table, GenUnknown's below it.
func RulesForSchema(version int) Rules {
	if version > NewestKnownSchema() {
		return RulesFor(GenNewer)
	}
	for _, g := range generations {
		if version >= g.minSchema && version <= g.maxSchema {
			return g.rules
		}
	}
	return RulesFor(GenUnknown)
}

// SchemaWritable reports whether sessionctl writes to a state.db of schema_version version:
// the table has a generation for it whose rules allow writes.
func SchemaWritable(version int) bool {
	return version >= 1 && version <= NewestKnownSchema() && RulesForSchema(version).WritesAllowed
}

// GenerationFromREADME infers the generation of a home without state.db from the "_README"
// text of its sessions.json: "" (no _README) gives GenR0525 (json-primary, pre-06-23 rules),
// the 06-23..07-05 text gives GenR0703, the LEGACY MIRROR text gives GenR0715, and any other
// text gives GenNewer (read-only).
func GenerationFromREADME(text string) Generation {
	if text == "" {
		return GenR0525
	}
	for _, g := range generations {
		if g.readmePrefix != "" && strings.HasPrefix(text, g.readmePrefix) {
			return g.rules.Generation
		}
	}
	return GenNewer
}

// RulesFor returns the rules of a generation. GenUnknown (no state.db, nothing better known)
// gets the r0525 rules with writes allowed; callers that have the file should prefer
// RulesFor(GenerationFromREADME(text)). GenNewer, and any name the table lacks, gets the
// newest generation's rules with writes refused.
func RulesFor(g Generation) Rules {
	if g == GenUnknown { // no entries reach the start-up rules without a file to infer from
		r := RulesFor(GenR0525)
		r.Generation, r.PruneEndedAtLoad, r.FreshnessGate = GenUnknown, true, true
		return r
	}
	for _, row := range generations {
		if row.rules.Generation == g {
			return row.rules
		}
	}
	r := generations[len(generations)-1].rules
	r.Generation, r.WritesAllowed, r.Borrowed = g, false, true
	return r
}
