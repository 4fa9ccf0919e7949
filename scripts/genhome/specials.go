package main

import (
	"fmt"
	"math/rand/v2"
)

// Orphaned compression families (finalize-orphans), cycled in this order so
// that even a tiny home gets one of each kind.
var orphanKinds = []string{"target", "api", "young", "target", "ended", "nomsg", "target", "userexit",
	"locked", "target", "expired_lock", "edge7d", "target", "target"}

// Ghost kinds (prune-ghosts), cycled the same way.
var ghostKinds = []string{"target", "titled", "target", "with_messages", "young", "target", "with_children",
	"open", "target", "cli", "edge24h", "target", "target", "target"}

// cycleKinds returns n kinds cycling through kinds; the boundary kind appears only in the
// first cycle (one row exactly at a cutoff is enough), later cycles use "target" instead.
func cycleKinds(kinds []string, n int, boundary string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = kinds[i%len(kinds)]
		if out[i] == boundary && i >= len(kinds) {
			out[i] = "target"
		}
	}
	return out
}

// buildOrphans adds compression families whose continuation may be an
// orphan (open, > 7 days, no API calls, with messages) and its near misses.
func (p *plan) buildOrphans() {
	for _, kind := range cycleKinds(orphanKinds, max(len(orphanKinds), p.cfg.Sessions/400), "edge7d") {
		p.orphanFamily(kind)
	}
}

// orphanFamily adds one parent + continuation pair of the given kind.
func (p *plan) orphanFamily(kind string) {
	now := p.cfg.Now
	childStart := p.between(now-85*day, now-7*day-12*hour)
	switch kind {
	case "young":
		childStart = p.between(now-6*day, now-hour)
	case "edge7d":
		childStart = now - 7*day // exactly at the cutoff: kept (strict <)
	}
	src := p.pick("tui", "tui", "cli")
	parentStart := childStart - 50_000 - p.between(hour, 5*day)
	parent := p.add(&session{ID: p.newID(parentStart, 6), Source: src, Started: parentStart,
		Ended: childStart - 50_000, EndReason: "compression", Title: p.newTitle(),
		Model: models[p.r.IntN(len(models))], MsgMode: msgsRequired})
	if kind == "userexit" {
		parent.EndReason = "user_exit"
	}
	child := p.add(p.continuation(parent, 2))
	child.MsgMode, child.NoAPI = msgsRequired, true
	child.MsgEnd = p.between(child.Started+minute, child.Started+2*hour)
	switch kind {
	case "api":
		child.NoAPI, child.APICalls = false, 1+p.r.IntN(9)
	case "ended":
		child.Ended, child.EndReason = child.MsgEnd+minute, "cli_close"
	case "nomsg":
		child.MsgMode = msgsNone
	case "locked":
		p.locks = append(p.locks, p.newLock(child.ID, now-p.between(10*second, 250*second)))
	case "expired_lock":
		p.locks = append(p.locks, p.newLock(child.ID, now-p.between(hour, 2*day)))
	}
}

// newLock returns a compression lock acquired at acquired with the runtime's
// 300 s TTL and holder format.
func (p *plan) newLock(id string, acquired int64) lock { return newLockFrom(p.r, id, acquired) }

// newLockFrom is newLock drawing from r: a lock (or turn lease) row with
// the runtime's 300 s TTL and holder format.
func newLockFrom(r *rand.Rand, id string, acquired int64) lock {
	holder := fmt.Sprintf("pid=%d:tid=%d:agent=7f%s:nonce=%s", 1000+r.IntN(60000),
		139000000000000+r.Int64N(1000000000), hexDigits(r, 10), hexDigits(r, 8))
	return lock{SessionID: id, Holder: holder, Acquired: acquired, ExpiresTime: acquired + 300*second}
}

// buildGhosts adds TUI ghost rows (tui, untitled, ended, no messages,
// > 24 h old) with their transcript files, and the near misses.
func (p *plan) buildGhosts() {
	for _, kind := range cycleKinds(ghostKinds, max(len(ghostKinds), p.cfg.Sessions/100), "edge24h") {
		p.ghost(kind)
	}
}

// ghost adds one ghost-like row of the given kind.
func (p *plan) ghost(kind string) {
	now := p.cfg.Now
	started := p.between(now-80*day, now-25*hour)
	switch kind {
	case "young":
		started = p.between(now-23*hour, now-10*minute)
	case "edge24h":
		started = now - day // exactly at the cutoff: kept (strict <)
	}
	g := p.add(&session{ID: p.newID(started, 6), Source: "tui", Started: started, MsgMode: msgsNone})
	g.Ended, g.EndReason = started+p.between(5*second, 15*minute), p.pick("tui_close", "tui_close", "tui_shutdown")
	g.Ended = min(g.Ended, now-second)
	switch kind {
	case "titled":
		g.Title = p.newTitle()
	case "with_messages":
		g.MsgMode, g.MsgEnd = msgsRequired, g.Ended-second
	case "open":
		g.Ended, g.EndReason = 0, ""
	case "cli":
		g.Source, g.EndReason = "cli", "cli_close"
	case "with_children":
		p.ghostChild(g)
	}
	if kind == "target" || kind == "titled" || kind == "young" || kind == "cli" || kind == "with_children" {
		p.ghostFiles(g.ID)
	}
}

// ghostChild adds a delegate child row under ghost g, which makes the
// runtime's single DELETE fail on the foreign key.
func (p *plan) ghostChild(g *session) {
	c := p.add(&session{ID: p.newID(g.Started+second, 6), Source: "tui", Parent: g.ID,
		Started: g.Started + second, Model: models[0], MsgMode: msgsRequired})
	if p.cfg.Gen.SubagentSource {
		c.Source = "subagent"
	}
	c.ModelConfig = fmt.Sprintf(`{"_delegate_from": "%s"}`, g.ID)
	c.Ended, c.EndReason = g.Ended-second, "agent_close"
	c.MsgEnd = c.Ended - second
}

// ghostFiles adds the transcript files the TUI leaves for session id.
func (p *plan) ghostFiles(id string) {
	empty := fmt.Sprintf(`{"session_id": "%s", "messages": []}`, id)
	dump := fmt.Sprintf(`{"session_id": "%s"}`, id)
	p.files = append(p.files,
		sessionFile{id + ".json", empty}, sessionFile{id + ".jsonl", ""},
		sessionFile{"request_dump_" + id + "_1.json", dump}, sessionFile{"session_" + id + ".json", empty})
	if p.r.IntN(3) == 0 {
		p.files = append(p.files, sessionFile{"request_dump_" + id + "_2.json", dump})
	}
}
