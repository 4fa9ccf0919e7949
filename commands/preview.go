package commands

import (
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// Runtime constants the preview and the repairs share.
const (
	crashWindowMicros     = 120 * 1_000_000  // suspend_recently_active: 120 s, inclusive
	freshnessWindowMicros = 3600 * 1_000_000 // auto-continue freshness window W (default 1 h)
	stuckLoopThreshold    = 3
)

// autoResumeReasons are the runtime's _AUTO_RESUME_REASONS.
var autoResumeReasons = map[string]bool{
	"restart_timeout":     true,
	"shutdown_timeout":    true,
	"restart_interrupted": true,
}

// startRules are the generation-dependent start-up behaviours of sessionsjson.md §0.1.
type startRules struct {
	pruneEndedAtLoad bool // 06-28+: entries whose row ended are dropped or healed at load
	autoResume       bool // 05-07+: resume_pending entries are auto-resumed at start
	freshnessGate    bool // 07-01+: a marker older than W expires on the next message
}

func startRulesFor(g sessionsjson.Generation) startRules {
	switch g {
	case sessionsjson.GenR0418, sessionsjson.GenR0506:
		return startRules{}
	case sessionsjson.GenR0525:
		return startRules{autoResume: true}
	default:
		return startRules{pruneEndedAtLoad: true, autoResume: true, freshnessGate: true}
	}
}

// startAction is what the next gateway start will do to one entry.
type startAction struct {
	Key    string `json:"key"`
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// previewStart applies the detected generation's start-up rules (sessionsjson.md §5.1, §4.7,
// §5.3, §4.1, §5.1 step 5) to the routing entries without changing anything.
func previewStart(v *homeView, rows map[string]rowInfo) []startAction {
	now := v.opts.clock.NaiveLocalMicros(time.Local)
	suspended := map[string]bool{}
	var out []startAction
	if !v.cleanShut {
		out = append(out, previewCrashRecovery(v, now, suspended)...)
	}
	out = append(out, previewStuckLoop(v, suspended)...)
	out = append(out, previewStaleRows(v, rows)...)
	out = append(out, previewAutoResume(v, now, suspended)...)
	return out
}

func previewCrashRecovery(v *homeView, now int64, suspended map[string]bool) []startAction {
	var out []startAction
	cutoff := now - crashWindowMicros
	for _, e := range v.loaded() {
		if e.Suspended {
			suspended[e.Key] = true
		}
		if e.ResumePending || e.Suspended {
			continue
		}
		if e.UpdatedAt.Aware {
			out = append(out, startAction{e.Key, "crash", "aware updated_at: the naive/aware comparison raises TypeError at start-up"})
			continue
		}
		if e.UpdatedAt.WallMicros() < cutoff {
			continue
		}
		if v.rules.CrashRecoverySetsSuspended {
			suspended[e.Key] = true
			out = append(out, startAction{e.Key, "suspend", "no .clean_shutdown and updated within 120 s (suspend_recently_active)"})
			continue
		}
		out = append(out, startAction{e.Key, "mark resume_pending (restart_interrupted)", "no .clean_shutdown and updated within 120 s (suspend_recently_active)"})
	}
	return out
}

func previewStuckLoop(v *homeView, suspended map[string]bool) []startAction {
	if v.counts == nil || v.cleanShut {
		return nil
	}
	var out []startAction
	for _, key := range v.counts.Keys {
		n, ok := v.counts.Int(key)
		if !ok || n < stuckLoopThreshold {
			continue
		}
		e := v.entry(key)
		if e == nil || e.Skip != "" || e.Suspended || suspended[key] {
			continue
		}
		suspended[key] = true
		out = append(out, startAction{key, "suspend", "stuck loop: active across restarts (count at or over 3)"})
	}
	return out
}

func previewStaleRows(v *homeView, rows map[string]rowInfo) []startAction {
	if !startRulesFor(v.gen).pruneEndedAtLoad {
		return nil
	}
	var out []startAction
	for _, e := range v.loaded() {
		row, ok := rows[e.SessionID]
		if !ok || row.EndReason == "" {
			continue
		}
		switch {
		case row.EndReason == "compression" && row.Tip != "" && row.Tip != e.SessionID:
			out = append(out, startAction{e.Key, "repoint to " + row.Tip, "row ended by compression; the load-time prune heals to the continuation"})
		case row.EndReason == "agent_close" || row.EndReason == "ws_orphan_reap":
			out = append(out, startAction{e.Key, "recover", "row ended " + row.EndReason + "; recovery reopens it"})
		default:
			out = append(out, startAction{e.Key, "drop", "row ended " + row.EndReason + "; the load-time prune deletes the entry"})
		}
	}
	return out
}

func previewAutoResume(v *homeView, now int64, suspended map[string]bool) []startAction {
	if !startRulesFor(v.gen).autoResume {
		return nil
	}
	var out []startAction
	for _, e := range v.loaded() {
		if !e.ResumePending || e.Suspended || suspended[e.Key] || e.ResumeReason == nil || !autoResumeReasons[*e.ResumeReason] {
			continue
		}
		if markerAge(e, now) <= freshnessWindowMicros {
			out = append(out, startAction{e.Key, "auto-resume", "resume_pending and fresh (within 1 h)"})
			continue
		}
		if startRulesFor(v.gen).freshnessGate {
			out = append(out, startAction{e.Key, "expire on next message", "resume marker older than 1 h: reset with resume_pending_expired"})
		}
	}
	return out
}

// markerAge is now minus last_resume_marked_at (else updated_at), in microseconds.
func markerAge(e *sessionsjson.Entry, now int64) int64 {
	if e.LastResumeMarkedAt != nil {
		return now - e.LastResumeMarkedAt.WallMicros()
	}
	return now - e.UpdatedAt.WallMicros()
}
