package main

import (
	"cmp"
	"math"
	"slices"
)

// Message roles as stored in plan.roles.
const (
	roleUser      byte = 'u'
	roleAssistant byte = 'a'
	roleCall1     byte = 'A' // assistant with one tool call
	roleCall2     byte = 'B' // assistant with two tool calls
	roleTool      byte = 't'
)

// allocateMessages spreads -messages over the sessions (heavy-tailed, at
// least one where a role needs messages, none where it must have none),
// decides every message's role and sets message_count, tool_call_count,
// api_call_count and tokens to match.
func (p *plan) allocateMessages() {
	counts := p.messageCounts()
	p.roles = make([]byte, 0, p.cfg.Msgs)
	for i, s := range p.sessions {
		s.MsgOffset, s.MsgCount = len(p.roles), counts[i]
		assistants := 0
		state, pending := roleUser, 0
		for range counts[i] {
			var role byte
			role, state, pending = p.nextRole(state, pending)
			p.roles = append(p.roles, role)
			switch role {
			case roleAssistant:
				assistants++
			case roleCall1:
				assistants++
				s.ToolCalls++
			case roleCall2:
				assistants++
				s.ToolCalls += 2
			}
		}
		p.setUsage(s, assistants)
	}
}

// nextRole is the conversation state machine: user, assistant (sometimes
// calling tools), one tool result per call, assistant again.
func (p *plan) nextRole(state byte, pending int) (role, next byte, left int) {
	switch {
	case state == roleUser:
		return roleUser, roleAssistant, 0
	case state == roleTool:
		if pending <= 1 {
			return roleTool, roleAssistant, 0
		}
		return roleTool, roleTool, pending - 1
	case p.r.IntN(100) < 35:
		if p.r.IntN(10) == 0 {
			return roleCall2, roleTool, 2
		}
		return roleCall1, roleTool, 1
	default:
		return roleAssistant, roleUser, 0
	}
}

// setUsage fills api_call_count and the token columns from the messages.
func (p *plan) setUsage(s *session, assistants int) {
	if s.NoAPI {
		s.APICalls = 0
		return
	}
	if s.APICalls == 0 {
		s.APICalls = assistants
	}
	if s.APICalls > 0 {
		s.InTokens = s.APICalls * (2000 + p.r.IntN(30000))
		s.OutTokens = s.APICalls * (100 + p.r.IntN(1500))
	}
}

// messageCounts returns the number of messages of every session; they sum
// to -messages unless no session may hold messages.
func (p *plan) messageCounts() []int {
	counts := make([]int, len(p.sessions))
	left := p.cfg.Msgs
	for i, s := range p.sessions {
		if s.MsgMode == msgsRequired && left > 0 {
			counts[i], left = 1, left-1
		}
	}
	weights := make([]float64, len(p.sessions))
	total := 0.0
	for i, s := range p.sessions {
		if s.MsgMode == msgsNone || (s.MsgMode == msgsAny && p.r.IntN(100) < 3) {
			continue
		}
		weights[i] = math.Exp(p.r.NormFloat64() * 1.1)
		total += weights[i]
	}
	if total == 0 {
		return counts
	}
	given := 0
	for i, w := range weights {
		k := int(float64(left) * w / total)
		counts[i] += k
		given += k
	}
	for i := 0; given < left; i = (i + 1) % len(weights) {
		if weights[i] > 0 {
			counts[i]++
			given++
		}
	}
	return counts
}

// msgRef is one message in the global timeline: its time, its session and
// its position inside the session.
type msgRef struct {
	TS   int64
	Sess int32
	Seq  int32
}

// timeline returns every message ordered by time (then session, position),
// the order in which a runtime would have appended them.
func (p *plan) timeline() []msgRef {
	refs := make([]msgRef, 0, len(p.roles))
	now := p.cfg.Now
	for i, s := range p.sessions {
		if s.MsgCount == 0 {
			continue
		}
		lo, hi := p.messageWindow(s, now)
		ts := make([]int64, s.MsgCount)
		for k := range ts {
			ts[k] = p.between(lo, hi+1)
		}
		slices.Sort(ts)
		for k, t := range ts {
			refs = append(refs, msgRef{TS: t, Sess: int32(i), Seq: int32(k)})
		}
	}
	slices.SortFunc(refs, func(a, b msgRef) int {
		return cmp.Or(cmp.Compare(a.TS, b.TS), cmp.Compare(a.Sess, b.Sess), cmp.Compare(a.Seq, b.Seq))
	})
	return refs
}

// messageWindow is the time span a session's messages fall into.
func (p *plan) messageWindow(s *session, now int64) (lo, hi int64) {
	lo = s.Started + 500_000
	switch {
	case s.MsgEnd != 0:
		hi = s.MsgEnd
	case s.Ended != 0:
		hi = s.Ended
	default:
		hi = s.Started + p.between(10*minute, 3*day)
	}
	hi = min(hi, now-second)
	if s.Ended != 0 {
		hi = min(hi, s.Ended)
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}
