package main

import (
	"fmt"
	"math/rand/v2"
)

// config holds the command-line parameters.
type config struct {
	Gen                     generation
	Seed                    uint64
	Entries, Sessions, Msgs int
	Now                     int64
	Out                     string
	// TextScale multiplies every message length (1 draws the default
	// sizes; 0.05 fits 2 M messages into about 1.2 GB).
	TextScale float64
}

// plan is the whole generated home, built in memory before anything is
// written. Every random choice is drawn from r in a fixed order, so the same
// config always yields the same plan.
type plan struct {
	cfg      config
	r        *rand.Rand
	ids      map[string]bool
	keys     map[string]bool
	titleN   int
	chatN    int
	entries  []*entry
	sessions []*session
	counts   []field
	locks    []lock
	files    []sessionFile
	roles    []byte // message roles, per session from MsgOffset
	// The rows only r0817 (v26) has, drawn by buildV26 from their own
	// stream so that the rest of the home is the same as r0715's.
	prompts []prompt
	leases  []lock
	hygiene []field // gateway_hygiene_state: session_key -> failure_streak
}

var models = []string{"anthropic/claude-sonnet-4", "anthropic/claude-opus-4.1", "openai/gpt-5",
	"google/gemini-2.5-pro", "nousresearch/hermes-4-405b", "moonshotai/kimi-k2"}

var titleWords = []string{"Plan", "Refactor", "Debug", "Notes", "Trip", "Budget", "Draft", "Review",
	"Research", "Scratch", "Migration", "Recipe", "Workout", "Deploy", "Essay", "Taxes"}

// newPlan seeds the generator.
func newPlan(cfg config) *plan {
	return &plan{
		cfg:  cfg,
		r:    rand.New(rand.NewPCG(cfg.Seed, 0x48_45_52_4d_45_53)), // "HERMES"
		ids:  map[string]bool{},
		keys: map[string]bool{},
	}
}

// hexID returns n random lower-case hex digits.
func (p *plan) hexID(n int) string { return hexDigits(p.r, n) }

// hexDigits returns n lower-case hex digits drawn from r.
func hexDigits(r *rand.Rand, n int) string {
	const hex = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hex[r.IntN(16)]
	}
	return string(b)
}

// newID returns a fresh session id like the runtime's for a session started
// at us: "YYYYMMDD_HHMMSS_" + n hex digits (6: agent/CLI/TUI, 8: gateway).
func (p *plan) newID(us int64, n int) string {
	for {
		id := idStamp(us) + "_" + p.hexID(n)
		if !p.ids[id] {
			p.ids[id] = true
			return id
		}
	}
}

// newCronID returns "cron_<job>_YYYYMMDD_HHMMSS".
func (p *plan) newCronID(us int64) string {
	for {
		id := "cron_" + p.hexID(6) + "_" + idStamp(us)
		if !p.ids[id] {
			p.ids[id] = true
			return id
		}
	}
}

// newTitle returns a title unique across the home (idx_sessions_title_unique).
func (p *plan) newTitle() string {
	p.titleN++
	return fmt.Sprintf("%s %d", titleWords[p.r.IntN(len(titleWords))], p.titleN)
}

// newUniqueChat draws a chat whose key is not used yet.
func (p *plan) newUniqueChat() *chat {
	for {
		p.chatN++
		c := newChat(p.r, p.chatN)
		if !p.keys[c.Key] {
			p.keys[c.Key] = true
			return c
		}
	}
}

// between returns a uniform time in [lo, hi).
func (p *plan) between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + p.r.Int64N(hi-lo)
}

// pick returns one of the choices.
func (p *plan) pick(choices ...string) string { return choices[p.r.IntN(len(choices))] }

// add appends a session row.
func (p *plan) add(s *session) *session {
	p.sessions = append(p.sessions, s)
	return s
}

// gatewaySession returns a SessionStore-created row for chat c.
func (p *plan) gatewaySession(c *chat, started int64) *session {
	return &session{ID: p.newID(started, 8), Source: c.Platform, UserID: c.UserID, Chat: c,
		WithOrigin: true, Started: started, Model: models[p.r.IntN(len(models))]}
}

// continuation returns the compression child of parent, created 50 ms after
// the parent ended, with the same source, peer and "<title> #N" title.
func (p *plan) continuation(parent *session, n int) *session {
	c := &session{ID: p.newID(parent.Ended+50_000, 6), Source: parent.Source, UserID: parent.UserID,
		Chat: parent.Chat, Parent: parent.ID, Started: parent.Ended + 50_000, Model: parent.Model, Cwd: parent.Cwd}
	if parent.Title != "" {
		c.Title = fmt.Sprintf("%s #%d", baseTitle(parent.Title), n)
	}
	return c
}

// baseTitle strips a " #N" lineage suffix.
func baseTitle(t string) string {
	for i := len(t) - 1; i > 0; i-- {
		if t[i] == '#' && t[i-1] == ' ' {
			return t[:i-1]
		}
		if t[i] < '0' || t[i] > '9' {
			break
		}
	}
	return t
}

// build draws the whole home: entries, sessions, locks, files, counts and
// the message allocation.
func (p *plan) build() error {
	need := p.cfg.Entries + p.cfg.Entries/5 + 60
	if p.cfg.Sessions < need {
		return fmt.Errorf("-sessions %d is too small for -entries %d (need at least %d)", p.cfg.Sessions, p.cfg.Entries, need)
	}
	p.buildEntries()
	p.buildOrphans()
	p.buildGhosts()
	if err := p.buildFillers(); err != nil {
		return err
	}
	p.buildLocks()
	p.buildCounts()
	p.buildFiles()
	p.allocateMessages()
	if p.cfg.Gen.V26 {
		p.buildV26()
	}
	return nil
}
