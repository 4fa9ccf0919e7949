package check

import (
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// StartAction is what the next gateway start will do to one entry.
type StartAction struct {
	Key    string `json:"key"`
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// PreviewStart applies the generation's start-up rules (sessionsjson.Rules: crash recovery,
// the stuck-loop breaker, the load-time prune, auto-resume) to the routing entries, in the
// runtime's order, without changing anything.
func PreviewStart(h *home.Home, rows map[string]home.Row) []StartAction {
	now := h.Opts.Clock.NaiveLocalMicros(time.Local)
	suspended := map[string]bool{}
	out := []StartAction{}
	if !h.CleanShutdown {
		out = append(out, previewCrashRecovery(h, now, suspended)...)
	}
	out = append(out, previewStuckLoop(h, suspended)...)
	out = append(out, previewStaleRows(h, rows)...)
	out = append(out, previewAutoResume(h, now, suspended)...)
	return out
}

func previewCrashRecovery(h *home.Home, now int64, suspended map[string]bool) []StartAction {
	var out []StartAction
	cutoff := now - sessionsjson.CrashWindowMicros
	const why = "no .clean_shutdown and updated within 120 s (suspend_recently_active)"
	for _, e := range h.Loaded() {
		if e.Suspended {
			suspended[e.Key] = true
		}
		if e.ResumePending || e.Suspended {
			continue
		}
		if e.UpdatedAt.Aware {
			out = append(out, StartAction{e.Key, "crash", "aware updated_at: the naive/aware comparison raises TypeError at start-up"})
			continue
		}
		if e.UpdatedAt.WallMicros() < cutoff {
			continue
		}
		if h.Rules.CrashRecoverySetsSuspended {
			suspended[e.Key] = true
			out = append(out, StartAction{e.Key, "suspend", why})
			continue
		}
		out = append(out, StartAction{e.Key, "mark resume_pending (restart_interrupted)", why})
	}
	return out
}

func previewStuckLoop(h *home.Home, suspended map[string]bool) []StartAction {
	counts := h.Counts.Parsed
	if counts == nil || h.CleanShutdown {
		return nil
	}
	if _, raises := counts.ComparisonRaises(sessionsjson.StuckLoopThreshold); raises {
		return nil // the comparison raises before any session is suspended
	}
	var out []StartAction
	for _, key := range counts.Keys {
		if !counts.ReachesThreshold(key, sessionsjson.StuckLoopThreshold) {
			continue
		}
		e := h.Entry(key)
		if e == nil || e.Skip != "" || e.Suspended || suspended[key] {
			continue
		}
		suspended[key] = true
		out = append(out, StartAction{key, "suspend", "stuck loop: active across restarts (count at or over 3)"})
	}
	return out
}

func previewStaleRows(h *home.Home, rows map[string]home.Row) []StartAction {
	if !h.Rules.PruneEndedAtLoad {
		return nil
	}
	var out []StartAction
	for _, e := range h.Loaded() {
		row, ok := rows[e.SessionID]
		if !ok || row.EndReason == "" {
			continue
		}
		switch {
		case row.EndReason == statedb.EndReasonCompression && row.Tip != "" && row.Tip != e.SessionID:
			out = append(out, StartAction{e.Key, "repoint to " + row.Tip, "row ended by compression; the load-time prune heals to the continuation"})
		case statedb.Recoverable(row.EndReason):
			out = append(out, StartAction{e.Key, "recover", "row ended " + row.EndReason + "; recovery reopens it"})
		default:
			out = append(out, StartAction{e.Key, "drop", "row ended " + row.EndReason + "; the load-time prune deletes the entry"})
		}
	}
	return out
}

func previewAutoResume(h *home.Home, now int64, suspended map[string]bool) []StartAction {
	if !h.Rules.AutoResume {
		return nil
	}
	var out []StartAction
	for _, e := range h.Loaded() {
		if !e.ResumePending || e.Suspended || suspended[e.Key] || e.ResumeReason == nil || !sessionsjson.IsAutoResumeReason(*e.ResumeReason) {
			continue
		}
		if !e.StaleMarker(now) {
			out = append(out, StartAction{e.Key, "auto-resume", "resume_pending and fresh (within 1 h)"})
			continue
		}
		if h.Rules.FreshnessGate {
			out = append(out, StartAction{e.Key, "expire on next message", "resume marker older than 1 h: reset with resume_pending_expired"})
		}
	}
	return out
}
