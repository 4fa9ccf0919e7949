package main

import (
	"fmt"
	"slices"
)

// Background rows that fill -sessions, by weight (percent).
var fillerKinds = []struct {
	name   string
	weight int
}{
	{"gateway_old", 30}, {"cli", 18}, {"tui", 14}, {"cron", 14}, {"tool", 6},
	{"subagent", 6}, {"compression", 12},
}

// buildFillers adds ordinary rows until there are exactly -sessions rows.
func (p *plan) buildFillers() error {
	left := p.cfg.Sessions - len(p.sessions)
	if left < 0 {
		return fmt.Errorf("-sessions %d is too small: the entries and special rows already need %d", p.cfg.Sessions, len(p.sessions))
	}
	total := 0
	for _, k := range fillerKinds {
		total += k.weight
	}
	for len(p.sessions) < p.cfg.Sessions {
		w := p.r.IntN(total)
		for _, k := range fillerKinds {
			if w < k.weight {
				p.filler(k.name)
				break
			}
			w -= k.weight
		}
	}
	p.sessions = p.sessions[:p.cfg.Sessions] // a compression pair may overshoot by one
	return nil
}

// filler adds one background row (two for a compression pair).
func (p *plan) filler(kind string) {
	now := p.cfg.Now
	started := p.between(now-90*day, now-minute)
	s := &session{Started: started, Model: models[p.r.IntN(len(models))]}
	switch kind {
	case "gateway_old":
		p.olderIncarnation(s)
	case "cli", "tui":
		s.ID, s.Source = p.newID(started, 6), kind
		s.Cwd = "/home/hermes/projects/" + p.pick("api", "blog", "infra", "notes", "thesis")
		if p.r.IntN(10) < 7 {
			s.Title = p.newTitle()
		}
		p.endMaybe(s, 85, "cli_close", "new_session", "resumed_other", "tui_close", "tui_shutdown")
		if kind == "tui" && s.Title == "" {
			s.MsgMode = msgsRequired // an untitled ended TUI row without messages would be a ghost
		}
	case "cron":
		s.ID, s.Source = p.newCronID(started), "cron"
		p.endMaybe(s, 97, "cron_complete")
	case "tool":
		s.ID, s.Source = p.newID(started, 6), "tool"
		p.endMaybe(s, 60, "agent_close", "cli_close")
	case "subagent":
		p.subagent(s)
	case "compression":
		p.compressionPair(s)
		return
	}
	p.add(s)
}

// endMaybe ends s (with percent probability) a little after it started.
func (p *plan) endMaybe(s *session, percent int, reasons ...string) {
	if p.r.IntN(100) >= percent {
		return
	}
	s.Ended = min(s.Started+p.between(minute, 6*hour), p.cfg.Now-second)
	s.EndReason = reasons[p.r.IntN(len(reasons))]
}

// olderIncarnation makes s an ended, replaced session of an existing chat.
func (p *plan) olderIncarnation(s *session) {
	var c *chat
	if len(p.entries) > 0 {
		c = p.entries[p.r.IntN(len(p.entries))].Chat
	} else {
		c = p.newUniqueChat()
	}
	*s = *p.gatewaySession(c, s.Started)
	s.Ended = min(s.Started+p.between(10*minute, 3*day), p.cfg.Now-second)
	s.EndReason = p.pick("session_reset", "session_reset", "session_switch", "agent_close")
}

// subagent makes s a delegate child of an earlier cli/tui row.
func (p *plan) subagent(s *session) {
	parent := p.sessions[p.r.IntN(len(p.sessions))]
	for tries := 0; tries < 50 && !delegateParent(parent); tries++ {
		parent = p.sessions[p.r.IntN(len(p.sessions))]
	}
	if !delegateParent(parent) {
		s.ID, s.Source = p.newID(s.Started, 6), "tool"
		return
	}
	s.Started = min(parent.Started+p.between(second, hour), p.cfg.Now-second)
	s.ID, s.Parent, s.Source = p.newID(s.Started, 6), parent.ID, parent.Source
	if p.cfg.Gen.SubagentSource {
		s.Source = "subagent"
	}
	if p.cfg.Gen.DelegateConfig {
		s.ModelConfig = fmt.Sprintf(`{"_delegate_from": "%s"}`, parent.ID)
	}
	s.Ended = min(s.Started+p.between(30*second, 20*minute), p.cfg.Now-second)
	s.EndReason = "agent_close"
}

// delegateParent reports whether a subagent may hang under s without
// changing what the repairs see (no ghost, no compression parent).
func delegateParent(s *session) bool {
	return (s.Source == "cli" || s.Source == "tui") && s.EndReason != "compression" && s.MsgMode != msgsNone
}

// compressionPair adds an ordinary compression parent and continuation that
// is not an orphan (it is young, ended, or made API calls).
func (p *plan) compressionPair(s *session) {
	now := p.cfg.Now
	s.ID, s.Source, s.Title = p.newID(s.Started, 6), p.pick("cli", "tui"), p.newTitle()
	s.Ended = min(s.Started+p.between(20*minute, 2*day), now-2*minute)
	s.EndReason, s.MsgMode = "compression", msgsRequired
	p.add(s)
	c := p.add(p.continuation(s, 2))
	c.MsgMode = msgsRequired
	switch p.r.IntN(3) {
	case 0:
		p.endMaybe(c, 100, "cli_close", "tui_close")
	default:
		c.APICalls = 1 + p.r.IntN(40)
	}
}

// buildLocks adds live compression locks on a few open rows (plus the ones
// buildOrphans placed); the table exists from schema v14.
func (p *plan) buildLocks() {
	for range max(2, len(p.sessions)/2000) {
		s := p.sessions[p.r.IntN(len(p.sessions))]
		if s.Ended != 0 || slices.ContainsFunc(p.locks, func(l lock) bool { return l.SessionID == s.ID }) {
			continue
		}
		p.locks = append(p.locks, p.newLock(s.ID, p.cfg.Now-p.between(second, 200*second)))
	}
}

// buildCounts writes .restart_failure_counts: the counted_* entries plus a
// few keys that have no entry, in the runtime's insertion order.
func (p *plan) buildCounts() {
	for _, e := range p.entries {
		switch e.Role {
		case "counted_stuck":
			p.counts = append(p.counts, field{e.Chat.Key, 3 + p.r.IntN(4)})
		case "counted_low", "both":
			p.counts = append(p.counts, field{e.Chat.Key, 1 + p.r.IntN(2)})
		}
	}
	for range max(1, len(p.entries)/500) {
		c := p.newUniqueChat()
		p.counts = append(p.counts, field{c.Key, 1 + p.r.IntN(5)})
	}
}
