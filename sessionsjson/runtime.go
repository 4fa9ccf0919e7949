package sessionsjson

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
