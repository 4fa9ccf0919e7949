package main

import "fmt"

// Entry roles and their share of -entries (per mille). Whatever is left
// over is "normal".
var entryRoles = []struct {
	name     string
	perMille int
}{
	{"resume_fresh", 20},       // resume_pending, marked < 1 h ago
	{"resume_stale", 30},       // resume_pending, marked (or updated) > 1 h ago
	{"suspended", 20},          // suspended
	{"both", 5},                // suspended and resume_pending
	{"stale_chain", 12},        // points at a compression parent with a continuation
	{"stale_chain2", 5},        // two-hop compression chain
	{"stale_nochild", 3},       // compression parent without continuation
	{"missing_row", 10},        // session_id has no state.db row
	{"ended_row", 20},          // row ended (reset, switch, agent_close, ...)
	{"crash_window", 5},        // updated within the 120 s crash window
	{"future", 1},              // updated_at in the future
	{"reset_consumed", 10},     // was_auto_reset / is_fresh_reset set
	{"counted_stuck", 5},       // restart count >= 3 (see buildCounts)
	{"counted_low", 5},         // restart count 1..2
	{"unknown_fields", 5},      // carries fields the runtime does not know
	{"model_override", 10},     // /model override (r0703+ writes it)
	{"high_prompt_tokens", 20}, // last_prompt_tokens > 0
}

// roleList returns the role of every entry, shuffled.
func (p *plan) roleList() []string {
	n := p.cfg.Entries
	roles := make([]string, 0, n)
	for _, er := range entryRoles {
		k := n * er.perMille / 1000
		if k == 0 && n >= 20 {
			k = 1
		}
		for range k {
			if len(roles) < n {
				roles = append(roles, er.name)
			}
		}
	}
	for len(roles) < n {
		roles = append(roles, "normal")
	}
	p.r.Shuffle(len(roles), func(i, j int) { roles[i], roles[j] = roles[j], roles[i] })
	return roles
}

// buildEntries creates every routing entry and the rows it points at.
func (p *plan) buildEntries() {
	now := p.cfg.Now
	for _, role := range p.roleList() {
		c := p.newUniqueChat()
		created := p.between(now-60*day, now-10*minute)
		if role == "stale_chain" || role == "stale_chain2" || role == "stale_nochild" {
			created = p.between(now-60*day, now-2*day)
		}
		e := &entry{Chat: c, Created: created, Role: role}
		e.Updated = p.between(created, now-2*minute)
		s := p.gatewaySession(c, created)
		e.SessionID = s.ID
		p.applyEntryRole(e, s)
		if role != "missing_row" {
			p.add(s)
		}
		if role == "stale_chain" || role == "stale_chain2" || role == "stale_nochild" {
			p.compressEntry(e, s)
		}
		if s.Ended == 0 {
			s.MsgEnd = e.Updated
		}
		p.entries = append(p.entries, e)
	}
}

// applyEntryRole sets the entry flags (and row end) for its role.
func (p *plan) applyEntryRole(e *entry, s *session) {
	now := p.cfg.Now
	reasons := []string{"restart_timeout", "shutdown_timeout", "restart_interrupted"}
	switch e.Role {
	case "resume_fresh":
		e.ResumePending, e.ResumeReason = true, reasons[p.r.IntN(3)]
		e.Marked = p.between(now-55*minute, now-time2s)
		e.Updated = e.Marked - 2*second
	case "resume_stale":
		e.ResumePending, e.ResumeReason = true, reasons[p.r.IntN(3)]
		e.Marked = p.between(now-7*day, now-90*minute)
		e.Updated = e.Marked - 2*second
		if p.r.IntN(5) == 0 { // marker time lost: the age falls back to updated_at
			e.Marked = 0
		}
	case "suspended", "counted_stuck":
		e.Suspended = e.Role == "suspended" || p.r.IntN(4) == 0
	case "both":
		e.Suspended, e.ResumePending, e.ResumeReason = true, true, "restart_interrupted"
		e.Marked = p.between(now-3*day, now-2*hour)
		e.Updated = e.Marked - 2*second
	case "ended_row":
		reasons := []string{"session_reset", "session_switch", "agent_close", "cli_close", "new_session"}
		if p.cfg.Gen.ReapReason {
			reasons = append(reasons, "ws_orphan_reap")
		}
		s.EndReason = reasons[p.r.IntN(len(reasons))]
		s.Ended = p.between(e.Updated, p.cfg.Now-minute)
	case "crash_window":
		e.Updated = p.between(now-120*second, now-second)
	case "future":
		e.Updated = p.between(now+10*second, now+10*minute)
	case "reset_consumed":
		e.IsFreshReset = p.r.IntN(2) == 0
		e.WasAutoReset, e.ResetHadActivity = !e.IsFreshReset, true
		if e.WasAutoReset {
			e.AutoResetReason = p.pick("idle", "daily", "suspended")
		}
	case "unknown_fields":
		e.Unknown = []field{{"x_sessionctl_test_note", fmt.Sprintf("hand-edited %d", p.r.IntN(1000))},
			{"legacy_counter", p.r.IntN(50)}}
	case "model_override":
		e.ModelOverride = []field{{"model", models[p.r.IntN(len(models))]}, {"provider", "openrouter"}}
	case "high_prompt_tokens":
		e.LastPromptTokens = 1000 + p.r.IntN(120000)
	}
}

// time2s is two seconds, the gap between the runtime's last update and mark.
const time2s = 2 * second

// compressEntry turns the entry's row into a compression parent that the
// entry still points at (a stale mapping), with one or two continuations.
func (p *plan) compressEntry(e *entry, s *session) {
	s.Ended = p.between(s.Started+10*minute, min(e.Updated, p.cfg.Now-3*hour))
	s.EndReason = "compression"
	if e.Role == "stale_nochild" {
		return
	}
	child := p.add(p.continuation(s, 2))
	child.WithOrigin = false
	if e.Role == "stale_chain2" {
		child.Ended = p.between(child.Started+10*minute, p.cfg.Now-hour)
		child.EndReason = "compression"
		child = p.add(p.continuation(child, 3))
	}
	child.MsgEnd = p.between(child.Started+minute, p.cfg.Now-minute)
}
