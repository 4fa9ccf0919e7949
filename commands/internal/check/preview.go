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

// PreviewStart applies the generation's start-up rules (sessionsjson.Rules) to the routing
// entries in the runtime's order (GatewayRunner.start), without changing anything:
//
//  1. without .clean_shutdown, suspend_recently_active() is the store's first touch, so the
//     store loads first, with its load-time prune (06-28+, 00d8c2c91): an entry whose row
//     ended is repointed (rebuilt: updated_at = now, flags at their defaults) or dropped;
//     then the 120 s crash recovery marks (or, r0418, suspends) what was updated within it —
//     the entries just repointed included;
//  2. the stuck-loop check (on the clean path the store is not loaded yet: nothing is
//     suspended);
//  3. on the clean path the store loads (and prunes) when resume scheduling first touches it;
//  4. resume scheduling (05-07+, fad684b1f) auto-resumes the resume_pending entries with an
//     origin and a fresh marker, those crash recovery marked at this start included.
func PreviewStart(h *home.Home, rows map[string]home.Row) []StartAction {
	p := &startPreview{h: h, rows: rows, now: h.Opts.Clock.NaiveLocalMicros(time.Local),
		state: map[string]*startState{}, out: []StartAction{}}
	for _, e := range h.Loaded() {
		p.state[e.Key] = &startState{suspended: e.Suspended, pending: e.ResumePending}
	}
	if !h.CleanShutdown {
		p.loadPrune()
		p.crashRecovery()
		p.stuckLoop()
	} else {
		p.loadPrune()
	}
	p.autoResume()
	return p.out
}

// startState is what the start has done to one entry so far.
type startState struct {
	suspended, pending bool
	dropped, rebuilt   bool // the load-time prune deleted the entry, or rebuilt it on a new id
	markedNow          bool // crash recovery marked it resume_pending at this start
}

// startPreview walks the start's passes over the entries.
type startPreview struct {
	h     *home.Home
	rows  map[string]home.Row
	now   int64
	state map[string]*startState
	out   []StartAction
}

func (p *startPreview) add(key, action, why string) {
	p.out = append(p.out, StartAction{key, action, why})
}

// loadPrune is the load-time prune of an ended row's entry.
func (p *startPreview) loadPrune() {
	if !p.h.Rules.PruneEndedAtLoad {
		return
	}
	for _, e := range p.h.Loaded() {
		row, ok := p.rows[e.SessionID]
		if !ok || row.EndReason == "" {
			continue
		}
		st := p.state[e.Key]
		switch {
		case e.OriginPlatform == "": // recovery needs the entry's origin
			st.dropped = true
			p.add(e.Key, "drop", "row ended "+row.EndReason+" and the entry has no origin to recover from; the load-time prune deletes it")
		case row.EndReason == statedb.EndReasonCompression && row.Tip != "" && row.Tip != e.SessionID:
			st.rebuilt, st.suspended, st.pending = true, false, false
			p.add(e.Key, "repoint to "+row.Tip, "row ended by compression; the load-time prune rebuilds the entry on the continuation (updated_at = now, flags reset)")
		case statedb.Recoverable(row.EndReason):
			st.dropped = true
			p.add(e.Key, "recover", "row ended "+row.EndReason+"; the load-time prune reopens it and drops the entry: the next message resumes the session")
		default:
			st.dropped = true
			p.add(e.Key, "drop", "row ended "+row.EndReason+"; the load-time prune deletes the entry")
		}
	}
}

// crashRecovery is suspend_recently_active(): entries updated within 120 s.
func (p *startPreview) crashRecovery() {
	cutoff := p.now - sessionsjson.CrashWindowMicros
	const why = "no .clean_shutdown and updated within 120 s (suspend_recently_active)"
	for _, e := range p.h.Loaded() {
		st := p.state[e.Key]
		if st.dropped || st.pending || st.suspended {
			continue
		}
		if !st.rebuilt {
			if e.UpdatedAt.Aware {
				p.add(e.Key, "crash", "aware updated_at: the naive/aware comparison raises TypeError at start-up")
				continue
			}
			if e.UpdatedAt.WallMicros() < cutoff {
				continue
			}
		}
		if p.h.Rules.CrashRecoverySetsSuspended {
			st.suspended = true
			p.add(e.Key, "suspend", why)
			continue
		}
		st.pending, st.markedNow = true, true
		p.add(e.Key, "mark resume_pending (restart_interrupted)", why)
	}
}

// stuckLoop is _suspend_stuck_loop_sessions() over the counts file.
func (p *startPreview) stuckLoop() {
	counts := p.h.Counts.Parsed
	if counts == nil {
		return
	}
	if _, raises := counts.ComparisonRaises(sessionsjson.StuckLoopThreshold); raises {
		return // the comparison raises before any session is suspended
	}
	for _, key := range counts.Keys {
		st := p.state[key]
		if !counts.ReachesThreshold(key, sessionsjson.StuckLoopThreshold) || st == nil || st.dropped || st.suspended {
			continue
		}
		st.suspended = true
		p.add(key, "suspend", "stuck loop: active across restarts (count at or over 3)")
	}
}

// autoResume is _schedule_resume_pending_sessions().
func (p *startPreview) autoResume() {
	if !p.h.Rules.AutoResume {
		return
	}
	for _, e := range p.h.Loaded() {
		st := p.state[e.Key]
		if st.dropped || !st.pending || st.suspended || e.OriginPlatform == "" {
			continue
		}
		if st.markedNow {
			p.add(e.Key, "auto-resume", "marked by crash recovery at this start (restart_interrupted), so fresh: resume scheduling runs after it")
			continue
		}
		if e.ResumeReason == nil || !sessionsjson.IsAutoResumeReason(*e.ResumeReason) {
			continue
		}
		if !e.StaleMarker(p.now) {
			p.add(e.Key, "auto-resume", "resume_pending and fresh (within 1 h)")
			continue
		}
		if p.h.Rules.FreshnessGate {
			p.add(e.Key, "expire on next message", "resume marker older than 1 h: not auto-resumed; the next message starts a new session (the reset policy's idle or daily check, else the freshness gate: resume_pending_expired)")
		}
	}
}
