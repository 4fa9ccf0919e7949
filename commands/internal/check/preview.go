package check

import (
	"fmt"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/startup"
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
//
// From r0817 (Rules.TurnMarkers, Rules.PeerRecovery; gateway/run.py GatewayRunner.start at
// 481156139) the store loads on both paths first; the load-time prune recovers through
// find_latest_gateway_session_for_peer (rec, by entry key) under the default reset policy
// (mode none); the unclean path runs recover_interrupted_turns before the 120 s crash
// recovery and the clean path discard_active_turn_markers; the stuck-loop check runs on both.
func PreviewStart(h *home.Home, rows map[string]home.Row, rec map[string]home.Recovery) []StartAction {
	return previewStart(h, rows, rec).out
}

// previewStart runs the start's passes (PreviewStart) and returns what they did to each entry.
func previewStart(h *home.Home, rows map[string]home.Row, rec map[string]home.Recovery) *startPreview {
	p := &startPreview{h: h, rows: rows, rec: rec, now: h.Opts.Clock.NaiveLocalMicros(time.Local),
		state: map[string]*startState{}, out: []StartAction{}}
	for _, e := range h.Loaded() {
		p.state[e.Key] = &startState{suspended: e.Suspended, pending: e.ResumePending}
	}
	if h.Rules.TurnMarkers {
		p.loadPrune()
		if h.CleanShutdown {
			p.discardTurnMarkers()
		} else {
			p.recoverInterruptedTurns()
			p.crashRecovery()
		}
		p.stuckLoop()
		p.autoResume()
		return p
	}
	if !h.CleanShutdown {
		p.loadPrune()
		p.crashRecovery()
		p.stuckLoop()
	} else {
		p.loadPrune()
	}
	p.autoResume()
	return p
}

// startState is what the start has done to one entry so far.
type startState struct {
	suspended, pending bool
	dropped, rebuilt   bool // the load-time prune deleted the entry, or rebuilt it on a new id
	markedNow          bool // crash recovery marked it resume_pending at this start
	// rebuiltAt is the naive local time (µs) the r0817 load-time prune gives a rebuilt
	// entry's updated_at: the recovered row's last activity, else its start.
	rebuiltAt int64
}

// startPreview walks the start's passes over the entries.
type startPreview struct {
	h     *home.Home
	rows  map[string]home.Row
	rec   map[string]home.Recovery
	now   int64
	state map[string]*startState
	out   []StartAction
	reset *resetView // read when first needed
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
		if p.h.Rules.PeerRecovery {
			p.recoverPeer(e, row, st)
			continue
		}
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

// recoverPeer is r0817's load-time prune of one entry whose row ended (gateway/session.py
// _prune_stale_sessions_locked at 481156139), under the default reset policy (mode none: no
// recovered row is promoted to a reset).
func (p *startPreview) recoverPeer(e *sessionsjson.Entry, row home.Row, st *startState) {
	r := p.rec[e.Key]
	switch home.StaleEntryAction(p.h.Rules, e, r) {
	case home.StaleDrop:
		st.dropped = true
		if e.OriginPlatform == "" {
			p.add(e.Key, "drop", "row ended "+row.EndReason+" and the entry has no origin to recover from; the load-time prune deletes it")
		} else {
			p.add(e.Key, "drop", "row ended "+row.EndReason+" and no open or recoverable row has this key (find_latest_gateway_session_for_peer); the load-time prune deletes the entry")
		}
	case home.StaleKeep:
		p.add(e.Key, "keep", "row ended "+row.EndReason+"; the load-time recovery lookup fails ("+oneLine(r.Err)+"), so the runtime keeps the entry unchanged (d17daf0b1)")
	case home.StaleReopen:
		st.dropped = true
		p.add(e.Key, "recover", "row ended "+row.EndReason+"; the load-time prune reopens it and drops the entry: the next message resumes the session")
	default:
		st.rebuilt, st.suspended, st.pending = true, false, false
		st.rebuiltAt = sessionsjson.ClockFromUnix(r.Target.ActiveAt).NaiveLocalMicros(time.Local)
		why := "row ended " + row.EndReason + "; the load-time prune rebuilds the entry on the latest row of this key (find_latest_gateway_session_for_peer: messages first, then last activity; updated_at = its last activity, flags reset)"
		if r.Target.EndReason != "" {
			why += "; it reopens that row (ended " + r.Target.EndReason + ")"
		}
		if row.Tip != "" && row.Tip != r.Target.ID {
			why += "; sessionctl repoint would choose the compression tip " + row.Tip + " instead"
		}
		p.add(e.Key, "repoint to "+r.Target.ID, why)
	}
}

// recoverInterruptedTurns is r0817's recover_interrupted_turns(max_age_seconds=3600) on the
// unclean path (6774760b6, PR #81264): an entry with an active-turn marker started within
// the hour and not suspended is marked resume_pending (restart_interrupted) unless it already
// is; every marker is cleared.
func (p *startPreview) recoverInterruptedTurns() {
	for _, e := range p.h.Loaded() {
		st := p.state[e.Key]
		started, ok := e.TurnStartedAt()
		if st.dropped || st.rebuilt || !ok { // a rebuilt entry has no marker
			continue
		}
		fresh := !started.Aware && p.now-started.WallMicros() <= sessionsjson.InterruptedTurnMaxAgeMicros
		switch {
		case !fresh || st.suspended:
			p.add(e.Key, "clear turn marker", "a turn was running when the gateway stopped, but too long ago (over 1 h) or the entry is suspended: recover_interrupted_turns only clears the marker")
		case st.pending:
			p.add(e.Key, "clear turn marker", "a turn was running when the gateway stopped; already resume_pending: recover_interrupted_turns keeps the marker's reason and clears the turn marker")
		default:
			st.pending, st.markedNow = true, true
			p.add(e.Key, "mark resume_pending (restart_interrupted)", "a turn was running when the gateway stopped, within the hour (recover_interrupted_turns)")
		}
	}
}

// discardTurnMarkers is r0817's discard_active_turn_markers() on the clean path.
func (p *startPreview) discardTurnMarkers() {
	for _, e := range p.h.Loaded() {
		_, marked := e.TurnStartedAt()
		if st := p.state[e.Key]; marked && !st.dropped && !st.rebuilt {
			p.add(e.Key, "clear turn marker", ".clean_shutdown present: discard_active_turn_markers clears it (the turn ended with the clean shutdown)")
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
		if st.rebuilt && p.h.Rules.PeerRecovery {
			if st.rebuiltAt < cutoff {
				continue
			}
		} else if !st.rebuilt {
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
		if p.h.Rules.PeerRecovery {
			p.add(e.Key, "not auto-resumed", "resume marker older than 1 h: not auto-resumed; under reset mode none (the default) the freshness gate is skipped (9fc0074ba), so the next message continues this session")
			continue
		}
		if p.h.Rules.FreshnessGate {
			p.add(e.Key, "expire on next message", "resume marker older than 1 h: not auto-resumed; the next message starts a new session"+p.nextMessageReason(e))
		}
	}
}

// nextMessageReason names the reset reason of a stale resume_pending entry's next message
// (gateway/session.py get_or_create_session at 52d0d671e and c2a3b9ce5: the reset policy's
// _should_reset runs first, then the freshness gate's resume_pending_expired), under the
// home's reset policy (startup.ReadResetPolicy, the generation's defaults included). Where the
// policy is not known, or the entry's updated_at is aware, it says which checks decide.
func (p *startPreview) nextMessageReason(e *sessionsjson.Entry) string {
	const unknown = " (the reset policy's idle or daily check, else the freshness gate: resume_pending_expired)"
	pol, ok := p.resetPolicy(e)
	if !ok {
		return unknown
	}
	updated := e.UpdatedAt.WallMicros()
	policy := "reset mode " + pol.Mode
	if r := pol.Reason(updated, p.now); r != "" {
		return fmt.Sprintf(": reason %s (%s, the reset policy's check runs before the freshness gate), unless a background process of the session is running", r, policy)
	}
	at := pol.Starts(updated)
	if at == 0 {
		return ": reason resume_pending_expired (the freshness gate; " + policy + " never resets)"
	}
	return fmt.Sprintf(": reason resume_pending_expired (the freshness gate) if it comes before %s, from then %s (%s)",
		sessionsjson.FormatNaive(at), pol.Reason(updated, at), policy)
}

// resetPolicy is the home's reset policy as it applies to e's next message (read once), ok
// false where sessionctl cannot know it: its sources (startup.ReadResetPolicy), an aware
// updated_at (the comparison with the naive now raises), or a generation whose policy code
// it has not ported (only r0703 and r0715, Rules.FreshnessGate without PeerRecovery).
func (p *startPreview) resetPolicy(e *sessionsjson.Entry) (startup.ResetPolicy, bool) {
	if !p.h.Rules.FreshnessGate || p.h.Rules.PeerRecovery || e.UpdatedAt.Aware {
		return startup.ResetPolicy{}, false
	}
	if p.reset == nil {
		pol, ok := startup.ReadResetPolicy(p.h.Opts.Home, p.h.Rules)
		p.reset = &resetView{pol, ok}
	}
	return p.reset.policy, p.reset.known
}

// resetView is the home's reset policy as the preview read it, once.
type resetView struct {
	policy startup.ResetPolicy
	known  bool
}
