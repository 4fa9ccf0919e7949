package sessionsjson

import (
	"math"
	"slices"
	"strconv"
)

// Start-up and routing constants of the runtime, shared by the next-start preview, the
// checks and the repairs. Each is the runtime's value at the commit named.
const (
	// CrashWindowMicros: suspend_recently_active() acts on entries updated within 120 s,
	// inclusive (2026-04-11, 2d328d5c7).
	CrashWindowMicros = 120 * 1_000_000
	// InterruptedTurnMaxAgeMicros: recover_interrupted_turns marks an entry whose active turn
	// started at most this long ago (max(3600, 2 × HERMES_AGENT_TIMEOUT) s; the default
	// 3600 s; r0817, 6774760b6, PR #81264).
	InterruptedTurnMaxAgeMicros = 3600 * 1_000_000
	// FreshnessWindowMicros: the auto-continue freshness window W, 1 h (2026-07-01, a1f62f477);
	// a marker older than W (strictly) is stale.
	FreshnessWindowMicros = 3600 * 1_000_000
	// StuckLoopThreshold: a key active across this many restarts is suspended at start
	// (.restart_failure_counts, 2026-04-14, 6c8930643).
	StuckLoopThreshold = 3
	// SessionStoreMaxAgeDays: the gateway's hourly prune_old_entries drops entries not
	// updated for this many days (strictly older), suspended ones kept; gateway config
	// session_store_max_age_days, default 90 (eb07c0564, 2026-04-17; unchanged at 481156139).
	SessionStoreMaxAgeDays = 90
)

// autoResumeReasons are the runtime's _AUTO_RESUME_REASONS (2026-05-07, fad684b1f).
var autoResumeReasons = map[string]bool{
	"restart_timeout":     true,
	"shutdown_timeout":    true,
	"restart_interrupted": true,
}

// IsAutoResumeReason reports whether the runtime auto-resumes a marker with this reason.
func IsAutoResumeReason(reason string) bool {
	return autoResumeReasons[reason]
}

// MarkerAgeMicros is now minus last_resume_marked_at (else updated_at), in microseconds on
// the WallMicros scale.
func (e *Entry) MarkerAgeMicros(now int64) int64 {
	if e.LastResumeMarkedAt != nil {
		return now - e.LastResumeMarkedAt.WallMicros()
	}
	return now - e.UpdatedAt.WallMicros()
}

// StaleMarker reports a resume_pending entry whose marker is older than the freshness window
// (strictly: a marker exactly W old is still fresh).
func (e *Entry) StaleMarker(now int64) bool {
	return e.ResumePending && e.MarkerAgeMicros(now) > FreshnessWindowMicros
}

// StoreEntry is what SessionStore.prune_old_entries reads of an entry in the gateway's store:
// its key, whether it is suspended, and updated_at (on the WallMicros scale; Aware when the
// text carried an offset).
type StoreEntry struct {
	Key       string
	Suspended bool
	Aware     bool
	Updated   int64
}

// StoreEntry returns what prune_old_entries reads of e as loaded.
func (e *Entry) StoreEntry() StoreEntry {
	return StoreEntry{Key: e.Key, Suspended: e.Suspended, Aware: e.UpdatedAt.Aware, Updated: e.UpdatedAt.WallMicros()}
}

// OldEntriesCutoff is prune_old_entries' cutoff, `_now() - timedelta(days=max_age_days)`,
// for the naive local now (WallMicros scale) and max_age_days given in seconds: timedelta
// rounds the age to the microsecond, half to even.
func OldEntriesCutoff(now int64, maxAgeSeconds float64) int64 {
	return now - int64(math.RoundToEven(maxAgeSeconds*1e6))
}

// PruneOldEntries is SessionStore.prune_old_entries over the store's entries in its order:
// the keys (sorted) of the entries not suspended whose updated_at is strictly before cutoff
// (resume_pending ones too); an entry with an active background process is kept as well, which
// only a running gateway knows of. The first entry not suspended with an aware updated_at
// makes the comparison with the naive cutoff raise TypeError: raises then names it and nothing
// is dropped (gateway/session.py prune_old_entries, eb07c0564; the same rule at cb4addaca,
// 3b750715a, 3914089d5, 52d0d671e, c2a3b9ce5 and 481156139).
func PruneOldEntries(entries []StoreEntry, cutoff int64) (drop []string, raises string) {
	for _, e := range entries {
		switch {
		case e.Suspended:
		case e.Aware:
			return nil, "entry " + strconv.Quote(e.Key) + " has an aware updated_at: comparing it with the naive cutoff raises TypeError"
		case e.Updated < cutoff:
			drop = append(drop, e.Key)
		}
	}
	slices.Sort(drop)
	return drop, ""
}
