package check

import (
	"context"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// Story is one chat's whole story, as `entries show KEY` tells it: what check finds about the
// key (or its session), what the next start does to it, what its next message does, and its
// restart count.
type Story struct {
	Findings     []Finding     `json:"-"`          // the envelope's findings
	NextStart    []StartAction `json:"next_start"` // null where the start is not previewed
	NextMessage  string        `json:"next_message"`
	RestartCount *int64        `json:"restart_count"`
}

// KeyStory tells the story of the routing entry e: the findings of Run whose subject is its
// key or its session id, the actions of PreviewStart on its key, and what its next message
// does once the start has done them (the routing of get_or_create_session: suspended, then
// resume_pending and the freshness gate; the reset policy is not evaluated).
func KeyStory(ctx context.Context, h *home.Home, e *sessionsjson.Entry) (Story, error) {
	st := Story{Findings: []Finding{}}
	findings, err := Run(ctx, h, false)
	if err != nil {
		return st, err
	}
	for _, f := range findings {
		if f.Subject == e.Key || (e.SessionID != "" && f.Subject == e.SessionID) {
			st.Findings = append(st.Findings, f)
		}
	}
	if counts := h.Counts.Parsed; counts != nil {
		if n, ok := counts.Int(e.Key); ok {
			st.RestartCount = &n
		}
	}
	if why := PreviewUnknown(h); why != "" {
		st.NextMessage = "not previewed: " + why
		return st, nil
	}
	rows, err := h.Rows(ctx)
	if err != nil {
		return st, err
	}
	rec, err := h.Recoveries(ctx, rows)
	if err != nil {
		return st, err
	}
	p := previewStart(h, rows, rec)
	st.NextStart = []StartAction{}
	for _, a := range p.out {
		if a.Key == e.Key {
			st.NextStart = append(st.NextStart, a)
		}
	}
	st.NextMessage = p.nextMessage(e, st.NextStart)
	return st, nil
}

// nextMessage is what the next message of e does after the start (actions: the start's on e).
func (p *startPreview) nextMessage(e *sessionsjson.Entry, actions []StartAction) string {
	const policy = " (the reset policy, session_reset in config.yaml, is not evaluated here)"
	st := p.state[e.Key]
	did := func(prefix string) string {
		for _, a := range actions {
			if strings.HasPrefix(a.Action, prefix) {
				return a.Action
			}
		}
		return ""
	}
	id := e.SessionID
	if to := did("repoint to "); to != "" {
		id = strings.TrimPrefix(to, "repoint to ")
	}
	switch {
	case e.Skip != "" || st == nil:
		return "the runtime does not load this entry: the next message routes as for a new key (a new session, or a recovered row of the key)"
	case st.dropped && did("recover") != "":
		return "resumes session " + e.SessionID + ": the load-time prune reopened its row"
	case st.dropped:
		return "the entry is gone: the routing looks for a row of this key to recover, else starts a new session"
	case st.suspended:
		return "resets (auto_reset_reason suspended): a new session"
	case did("auto-resume") != "":
		return "the start resumes session " + id + " (auto-resume); the next message continues it" + policy
	}
	if did("expire on next message") != "" {
		return "resets, a new session" + p.nextMessageReason(e)
	}
	return p.continues(e, id, policy)
}

// continues is the next message of an entry the start leaves in place: it continues session
// id unless the home's reset policy resets it (SessionStore._should_reset, evaluated where
// the preview knows the policy: check.resetPolicy).
func (p *startPreview) continues(e *sessionsjson.Entry, id, unknown string) string {
	pol, ok := p.resetPolicy(e)
	if !ok {
		return "continues session " + id + unknown
	}
	updated := e.UpdatedAt.WallMicros()
	if r := pol.Reason(updated, p.now); r != "" {
		return fmt.Sprintf("resets (auto_reset_reason %s, reset mode %s): a new session, unless a background process of the session is running", r, pol.Mode)
	}
	if at := pol.Starts(updated); at != 0 {
		return fmt.Sprintf("continues session %s if it comes before %s, from then resets (%s, reset mode %s)", id, sessionsjson.FormatNaive(at), pol.Reason(updated, at), pol.Mode)
	}
	return "continues session " + id + " (reset mode " + pol.Mode + " never resets)"
}
