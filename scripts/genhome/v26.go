package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
)

// buildV26 draws the rows only r0817 (schema v26) holds, from a stream of
// their own so that every other row is the same as in the r0715 home of the
// same flags (the two homes differ only by what v22-v26 added):
//
//   - system_prompts: a pool of shared prompts (a few used by most
//     sessions), prompts of one session each, and prompts no session
//     references (left behind by deletes that did not collect them), so that
//     prune-ghosts' collection of unreferenced prompts has work; the
//     sessions reference them through system_prompt_hash;
//   - sessions.last_activity_at on some rows with messages;
//   - session_turn_leases: live and expired leases on a few open routed
//     sessions;
//   - gateway_hygiene_state: failure streaks of a few routing keys.
func (p *plan) buildV26() {
	x := rand.New(rand.NewPCG(p.cfg.Seed, 0x56_32_36)) // "V26"
	t := &textGen{r: x, scale: p.cfg.TextScale}
	p.assignPrompts(x, t)
	p.drawActivity(x)
	p.drawLeases(x)
	p.drawHygiene(x)
}

// newPrompt appends a system_prompts row whose text starts with head and
// returns its hash.
func (p *plan) newPrompt(t *textGen, head string) string {
	text := promptText(t, head)
	sum := sha256.Sum256([]byte(text))
	h := hex.EncodeToString(sum[:])
	p.prompts = append(p.prompts, prompt{Hash: h, Text: text})
	return h
}

// promptText is a system prompt like the runtime assembles: identity,
// persona, memory notes and the tool list, a few KB at text scale 1.
func promptText(t *textGen, head string) string {
	var b strings.Builder
	b.WriteString("You are Hermes Agent, an intelligent AI assistant created by Nous Research. ")
	b.WriteString(head)
	b.WriteString("\n\n# Persona\n")
	b.WriteString(t.sentences(t.length(600, 900)))
	b.WriteString("\n\n# Memory\n")
	for range 3 + t.r.IntN(8) {
		b.WriteString("- ")
		b.WriteString(t.sentences(t.length(40, 120)))
		b.WriteByte('\n')
	}
	b.WriteString("\n# Tools\n")
	b.WriteString(strings.Join(toolNames, ", "))
	return b.String()
}

// assignPrompts fills system_prompts and points the sessions at it: tool
// rows and about one row in twelve have no prompt (NULL), one in twenty a
// prompt of its own, the rest one of the shared prompts, the first few far
// more often than the others. About one prompt in a thousand sessions is
// referenced by none.
func (p *plan) assignPrompts(x *rand.Rand, t *textGen) {
	shared := make([]string, max(3, len(p.sessions)/250))
	for i := range shared {
		shared[i] = p.newPrompt(t, fmt.Sprintf("Profile %d.", i+1))
	}
	for _, s := range p.sessions {
		switch r := x.IntN(100); {
		case s.Source == "tool" || r < 8:
		case r < 13:
			s.PromptHash = p.newPrompt(t, "Session "+s.ID+".")
		default:
			u := x.Float64()
			s.PromptHash = shared[int(float64(len(shared))*u*u*u)]
		}
	}
	for i := range max(2, len(p.sessions)/1000) {
		p.newPrompt(t, fmt.Sprintf("Retired profile %d.", i+1))
	}
}

// drawActivity sets last_activity_at on about two in five sessions with
// messages and a known end: the activity heartbeat a little before the
// session's last message time (or its end), never after now.
func (p *plan) drawActivity(x *rand.Rand) {
	for _, s := range p.sessions {
		end := s.MsgEnd
		if end == 0 {
			end = s.Ended
		}
		if s.MsgCount == 0 || end == 0 || x.IntN(5) >= 2 {
			continue
		}
		s.LastActivity = max(s.Started, min(end, p.cfg.Now-second)-x.Int64N(30*second))
	}
}

// drawLeases adds turn leases on open sessions of ordinary routing entries
// (a gateway row is its own lineage root): one per thousand entries and at
// least two, alternately live (acquired in the last 200 s, 300 s TTL) and
// expired.
func (p *plan) drawLeases(x *rand.Rand) {
	byID := make(map[string]*session, len(p.sessions))
	for _, s := range p.sessions {
		byID[s.ID] = s
	}
	want := max(2, len(p.entries)/1000)
	for _, i := range x.Perm(len(p.entries)) {
		if len(p.leases) == want {
			return
		}
		e := p.entries[i]
		if s := byID[e.SessionID]; e.Role != "normal" || s == nil || s.Ended != 0 {
			continue
		}
		acquired := p.cfg.Now - second - x.Int64N(199*second)
		if len(p.leases)%2 == 1 {
			acquired = p.cfg.Now - hour - x.Int64N(47*hour)
		}
		p.leases = append(p.leases, newLockFrom(x, e.SessionID, acquired))
	}
}

// drawHygiene adds gateway_hygiene_state rows: failure streaks of 1-3 for
// one routing key in five hundred, at least one.
func (p *plan) drawHygiene(x *rand.Rand) {
	if len(p.entries) == 0 {
		return
	}
	for _, i := range x.Perm(len(p.entries))[:max(1, len(p.entries)/500)] {
		p.hygiene = append(p.hygiene, field{p.entries[i].Chat.Key, 1 + x.IntN(3)})
	}
}
