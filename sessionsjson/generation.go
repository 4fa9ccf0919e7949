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
}

// Verified reports whether the rules are a known generation's own, each checked against
// that generation's runtime. A generation newer than the table (GenNewer) borrows the newest
// known generation's rules so that its stores can be read, but what its runtime does is not
// verified: sessionctl then claims no runtime behaviour from them (no skipped entry, no
// next-start preview, no field dropped on save) and writes nothing. Every row of the table
// is verified and writable, and only rows are: the two facts coincide (WritesAllowed).
func (r Rules) Verified() bool { return r.WritesAllowed }

// generationRow is one generation's facts: the schema versions it wrote and its rules.
type generationRow struct {
	minSchema, maxSchema int
	readmePrefix         string // how its _README text starts ("" when it writes none)
	rules                Rules
}

// loader rule sets, by the upstream commits that introduced them.
var (
	// legacyLoad: before 06-21 (3a6a43cb8) and 06-25 (9c994377e): a TypeError aborts the load.
	legacyLoad = Rules{TypeErrorAborts: true, FinalizedFlag: "expiry_finalized", DBRepairs: true, WritesAllowed: true,
		Platforms: platformsR0525, NormalisePlatform: true}
	// modernLoad: 06-21..06-25 (3a6a43cb8, 0ef86febe, 9c994377e): path safety, _README,
	// non-objects skipped; 06-28 (00d8c2c91) load-time prune; 07-01 (a1f62f477) freshness gate.
	modernLoad = Rules{SkipUnderscoreKeys: true, SkipNonObject: true, OriginDictOnly: true,
		Platforms: platformsR0703, NormalisePlatform: true,
		FinalizedFlag: "expiry_finalized", AutoResume: true, PruneEndedAtLoad: true, FreshnessGate: true,
		DBRepairs: true, WritesAllowed: true}
)

// generations is the table of known generations, oldest first: a new generation is a row.
var generations = []generationRow{
	{1, 6, "", with(legacyLoad, func(r *Rules) { // cb4addaca, 2026-04-18: no Platform._missing_ yet
		r.Generation, r.CrashRecoverySetsSuspended, r.FinalizedFlag, r.DBRepairs = GenR0418, true, "memory_flushed", false
		r.Platforms, r.NormalisePlatform = platformsR0418, false
	})},
	{7, 11, "", with(legacyLoad, func(r *Rules) { r.Generation, r.Platforms = GenR0506, platformsR0506 })}, // 3b750715a
	{12, 16, "", with(legacyLoad, func(r *Rules) { // 3914089d5; auto-resume since fad684b1f
		r.Generation, r.AutoResume = GenR0525, true
	})},
	{17, 18, "Gateway routing index ONLY", with(modernLoad, func(r *Rules) { // 52d0d671e
		r.Generation, r.PathSafety, r.README = GenR0703, PathSafetyStrict, READMEr0703
	})},
	{19, 21, "LEGACY MIRROR of the gateway routing index", with(modernLoad, func(r *Rules) { // c2a3b9ce5; interior "/" in keys since 83f14b2f2
		r.Generation, r.PathSafety, r.README = GenR0715, PathSafetyInteriorSlash, READMEr0715
	})},
}

func with(base Rules, edit func(*Rules)) Rules {
	edit(&base)
	return base
}

// NewestKnownSchema is the newest schema_version of the generation table.
func NewestKnownSchema() int {
	return generations[len(generations)-1].maxSchema
}

// GenerationForSchema maps a state.db schema_version to the generation that wrote it.
func GenerationForSchema(version int) Generation {
	if version > NewestKnownSchema() {
		return GenNewer
	}
	for _, g := range generations {
		if version >= g.minSchema && version <= g.maxSchema {
			return g.rules.Generation
		}
	}
	return GenUnknown
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
	r.Generation, r.WritesAllowed = g, false
	return r
}
