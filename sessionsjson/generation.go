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
	GenNewer   Generation = "newer"   // schema > 21: readable, never written
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

// Rules are the load and write rules of one generation.
type Rules struct {
	// Generation the rules belong to.
	Generation Generation
	// SkipUnderscoreKeys: keys starting with "_" are not entries (r0703+).
	SkipUnderscoreKeys bool
	// SkipNonObject: a non-object value is skipped; before r0703 it raises TypeError.
	SkipNonObject bool
	// TypeErrorAborts: a TypeError inside an entry aborts the rest of the load (r0418–r0525).
	TypeErrorAborts bool
	// IgnoreNonObjectOrigin: a truthy non-object origin means "no origin" (r0703+); before, it
	// raises TypeError.
	IgnoreNonObjectOrigin bool
	// PathSafety is the session_key/session_id check applied on load.
	PathSafety PathSafety
	// README is the "_README" text the generation writes ("" before r0703).
	README string
	// CrashRecoverySetsSuspended: crash recovery sets suspended (r0418) instead of resume_pending.
	CrashRecoverySetsSuspended bool
	// FinalizedFlag is the field name of the expiry-finalized flag.
	FinalizedFlag string
	// WritesAllowed is false for generations the tool does not know.
	WritesAllowed bool
}

// GenerationForSchema maps a state.db schema_version to the generation that wrote it.
func GenerationForSchema(version int) Generation {
	switch {
	case version > 21:
		return GenNewer
	case version >= 19:
		return GenR0715
	case version >= 17:
		return GenR0703
	case version >= 12:
		return GenR0525
	case version >= 7:
		return GenR0506
	case version >= 1:
		return GenR0418
	}
	return GenUnknown
}

// GenerationFromREADME infers the generation of a home without state.db from the "_README"
// text of its sessions.json: "" (no _README) gives GenR0525 (json-primary, pre-06-23 rules),
// the 06-23..07-05 text gives GenR0703, the LEGACY MIRROR text gives GenR0715, and any other
// text gives GenNewer (read-only).
func GenerationFromREADME(text string) Generation {
	switch {
	case text == "":
		return GenR0525
	case strings.HasPrefix(text, "Gateway routing index ONLY"):
		return GenR0703
	case strings.HasPrefix(text, "LEGACY MIRROR of the gateway routing index"):
		return GenR0715
	}
	return GenNewer
}

// RulesFor returns the rules of a generation. GenUnknown (no state.db, nothing better known)
// gets the r0525 rules with writes allowed; callers that have the file should prefer
// RulesFor(GenerationFromREADME(text)). GenNewer gets the r0715 rules with writes refused.
func RulesFor(g Generation) Rules {
	r := Rules{Generation: g, FinalizedFlag: "expiry_finalized", WritesAllowed: true}
	switch g {
	case GenR0418:
		r.TypeErrorAborts = true
		r.CrashRecoverySetsSuspended = true
		r.FinalizedFlag = "memory_flushed"
	case GenR0506, GenR0525, GenUnknown:
		r.TypeErrorAborts = true
	case GenR0703:
		r.modern(PathSafetyStrict, READMEr0703)
	default: // GenR0715, GenNewer and anything unrecognised
		r.modern(PathSafetyInteriorSlash, READMEr0715)
		r.WritesAllowed = g == GenR0715
	}
	return r
}

func (r *Rules) modern(p PathSafety, readme string) {
	r.SkipUnderscoreKeys = true
	r.SkipNonObject = true
	r.IgnoreNonObjectOrigin = true
	r.PathSafety = p
	r.README = readme
}
