package home

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Row is the state.db side of one routing entry.
type Row struct {
	Session   statedb.Session
	EndReason string // "" while open
	Tip       string // compression tip when the row ended with compression and has a continuation
	// TipRaises is set when the runtime's compression-tip lookup for the row raises on a
	// value of the database (statedb.ErrTipLookupRaises): the runtime treats the row as having
	// no continuation, and so does sessionctl (Tip is "").
	TipRaises error
}

// RowState is the contract's `row` value: missing, open, ended or the end_reason.
func RowState(rows map[string]Row, id string) string {
	r, ok := rows[id]
	switch {
	case !ok:
		return "missing"
	case r.Session.Open() && r.EndReason == "":
		return "open"
	case r.EndReason == "":
		return "ended"
	default:
		return r.EndReason
	}
}

// TipRule is the generation's compression-tip rule (TipNone without state.db).
func (h *Home) TipRule() statedb.TipRule {
	if h.DB == nil {
		return statedb.TipNone
	}
	return statedb.TipRuleForSchema(h.Schema.Version)
}

// Rows reads the state.db rows the routing entries point at, with compression tips under
// the generation's rule.
func (h *Home) Rows(ctx context.Context) (map[string]Row, error) {
	return h.rowsOf(ctx, h.Routing.Entries)
}

// rowsOf reads the state.db rows entries point at, with their compression tips.
func (h *Home) rowsOf(ctx context.Context, entries []*sessionsjson.Entry) (map[string]Row, error) {
	rows := map[string]Row{}
	if h.DB == nil {
		return rows, nil
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.SessionID != "" {
			ids = append(ids, e.SessionID)
		}
	}
	err := h.DB.EachSessionByID(ctx, ids, func(s statedb.Session) error {
		info := Row{Session: s}
		if s.EndReason != nil {
			info.EndReason = *s.EndReason
		}
		rows[s.ID] = info
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	return rows, h.fillTips(ctx, rows)
}

func (h *Home) fillTips(ctx context.Context, rows map[string]Row) error {
	rule := h.TipRule()
	if rule == statedb.TipNone {
		return nil
	}
	for id, info := range rows {
		if info.EndReason != statedb.EndReasonCompression {
			continue
		}
		tip, err := h.DB.CompressionTip(ctx, id, rule)
		if errors.Is(err, statedb.ErrTipLookupRaises) {
			info.TipRaises = err
			rows[id] = info
			continue
		}
		if err != nil {
			return fmt.Errorf("compression tip of %s: %w", id, err)
		}
		if tip != id {
			info.Tip = tip
			rows[id] = info
		}
	}
	return nil
}

// Lineage is a session's ancestors (oldest first), children and compression tip.
type Lineage struct {
	Ancestors []statedb.Session
	Children  []statedb.Session
	Tip       string // "" when the session is its own tip or the generation has no tip rule
}

// Lineage reads the lineage of session id (nil without state.db or id).
func (h *Home) Lineage(ctx context.Context, id string) (*Lineage, error) {
	if h.DB == nil || id == "" {
		return nil, nil
	}
	anc, err := h.DB.Ancestors(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ancestors of %s: %w", id, err)
	}
	kids, err := h.DB.Children(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", id, err)
	}
	l := &Lineage{Children: kids}
	for i := len(anc) - 1; i >= 0; i-- {
		l.Ancestors = append(l.Ancestors, anc[i])
	}
	if rule := h.TipRule(); rule != statedb.TipNone {
		tip, err := h.DB.CompressionTip(ctx, id, rule)
		if err != nil && !errors.Is(err, statedb.ErrTipLookupRaises) { // raises: no continuation, as the runtime takes it
			return nil, fmt.Errorf("compression tip of %s: %w", id, err)
		}
		if tip != id {
			l.Tip = tip
		}
	}
	return l, nil
}

// SessionRow is a state.db session as sessionctl reports it (data.sessions, a deleted row's
// before-image). A time that is not a number (TEXT, a BLOB) is shown as stored, with no Unix
// value; OddValues lists such values exactly (statedb.Session.OddValues).
type SessionRow struct {
	ID              string                   `json:"id"`
	Source          string                   `json:"source"`
	ParentSessionID *string                  `json:"parent_session_id"`
	StartedAt       string                   `json:"started_at"`
	StartedAtUnix   *float64                 `json:"started_at_unix"`
	EndedAt         *string                  `json:"ended_at"`
	EndedAtUnix     *float64                 `json:"ended_at_unix"`
	EndReason       *string                  `json:"end_reason"`
	Title           *string                  `json:"title"`
	MessageCount    int64                    `json:"message_count"`
	APICallCount    *int64                   `json:"api_call_count,omitempty"`
	SessionKey      *string                  `json:"session_key,omitempty"`
	OddValues       map[string]statedb.Value `json:"odd_values,omitempty"`
}

// NewSessionRow renders s for output.
func NewSessionRow(s statedb.Session) SessionRow {
	r := SessionRow{ID: s.ID, Source: s.Source, ParentSessionID: s.ParentID, EndReason: s.EndReason, Title: s.Title,
		MessageCount: s.MessageCount, APICallCount: s.APICallCount, SessionKey: s.SessionKey}
	started := s.StartedAt
	r.StartedAt, r.StartedAtUnix = timeText(s.Started, &started)
	if !s.Open() {
		t, unix := timeText(s.Ended, s.EndedAt)
		r.EndedAt, r.EndedAtUnix = &t, unix
	}
	for _, odd := range s.OddValues() {
		if r.OddValues == nil {
			r.OddValues = map[string]statedb.Value{}
		}
		r.OddValues[odd.Column] = odd.Value
	}
	return r
}

// timeText renders a stored time: RFC 3339 with its Unix value for a number (or, when v was
// not read, for the number given), else the text as stored (a BLOB as an SQL literal) and no
// Unix value.
func timeText(v statedb.Value, number *float64) (string, *float64) {
	if f, ok := v.Number(); ok {
		number = &f
	}
	switch {
	case v.Type == statedb.TypeText:
		return v.Text, nil
	case v.Type == statedb.TypeBlob:
		return v.Literal(), nil
	case number == nil:
		return "", nil
	case math.IsInf(*number, 1):
		return "Infinity", nil // no RFC 3339 time and no JSON number: shown as Python writes it
	case math.IsInf(*number, -1):
		return "-Infinity", nil
	case math.IsNaN(*number):
		return "NaN", nil
	}
	return UnixToRFC3339(*number), number
}

// LockExpiry renders a compression lock's expires_at like timeText.
func LockExpiry(l *statedb.CompressionLock) string {
	t, _ := timeText(l.Expires, &l.ExpiresAt)
	return t
}

// UnixToRFC3339 renders a state.db REAL timestamp as RFC 3339 UTC with microseconds.
func UnixToRFC3339(sec float64) string {
	whole, frac := math.Modf(sec)
	return time.Unix(int64(whole), int64(math.Round(frac*1e6))*1000).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
}

// Recovery is what r0817's load-time prune finds for an entry whose row ended
// (statedb.RecoverGatewaySession): Found and Target, or Err when the lookup raises (the
// runtime then keeps the entry unchanged, d17daf0b1).
type Recovery struct {
	Found  bool
	Target statedb.Recovered
	Err    error
}

// Recoveries runs the generation's load-time recovery lookup (Rules.PeerRecovery, r0817) for
// every loaded entry with an origin whose row ended, by entry key. The Slack legacy-key
// claim, the scope and the profile checks of the runtime are not modelled
// (docs/generations.md).
func (h *Home) Recoveries(ctx context.Context, rows map[string]Row) (map[string]Recovery, error) {
	out := map[string]Recovery{}
	if h.DB == nil || !h.Rules.PeerRecovery {
		return out, nil
	}
	for _, e := range h.Loaded() {
		row, ok := rows[e.SessionID]
		if !ok || row.EndReason == "" || e.OriginPlatform == "" {
			continue
		}
		target, found, err := h.DB.RecoverGatewaySession(ctx, e.Key, e.OriginPlatform, RecoveryPeer(e, h.Rules))
		if err != nil && !errors.Is(err, statedb.ErrUnsupportedSchema) {
			return nil, fmt.Errorf("load-time recovery of %q: %w", e.Key, err) // sessionctl's read failed, not the runtime's lookup
		}
		out[e.Key] = Recovery{Found: found, Target: target, Err: err}
	}
	return out, nil
}

// StaleAction is what the load-time prune does with an entry whose row ended.
type StaleAction int

// Load-time prune actions.
const (
	// StaleDrop: the entry is deleted (no origin, no row recovered, or a lookup that raised
	// where the generation drops then).
	StaleDrop StaleAction = iota
	// StaleKeep: the lookup raised and the generation keeps the entry unchanged (r0817,
	// d17daf0b1).
	StaleKeep
	// StaleReopen: the lookup found the entry's own row: the row is reopened and the entry
	// deleted (the next message resumes the session).
	StaleReopen
	// StaleRepoint: the lookup found another row: the entry is rebuilt on it, and the row
	// reopened when it had ended.
	StaleRepoint
)

// StaleEntryAction decides the load-time prune of an entry whose row ended, from its origin
// and what the recovery lookup of rules found for it (gateway/session.py
// _prune_stale_sessions_locked: 52d0d671e and c2a3b9ce5 drop the entry when the lookup
// raises, 481156139 keeps it).
func StaleEntryAction(rules sessionsjson.Rules, e *sessionsjson.Entry, r Recovery) StaleAction {
	switch {
	case e.OriginPlatform == "": // recovery needs the entry's origin
		return StaleDrop
	case r.Err != nil && rules.Recovery == sessionsjson.RecoveryV26:
		return StaleKeep
	case r.Err != nil || !r.Found:
		return StaleDrop
	case r.Target.ID == e.SessionID:
		return StaleReopen
	}
	return StaleRepoint
}

// RecoveryPeer is the peer tuple of an entry's origin for the fallback of the recovery
// lookup of rules, nil where the runtime allows none (r0817: a Slack origin with a workspace
// scope_id, _legacy_slack_session_key; r0703 and r0715 always pass the origin's peer).
func RecoveryPeer(e *sessionsjson.Entry, rules sessionsjson.Rules) *statedb.Peer {
	if rules.Recovery != sessionsjson.RecoveryV26 {
		return peerOf(e)
	}
	return originPeer(e)
}

// originPeer is the peer tuple of an entry's origin for r0817's fallback, nil where the
// runtime allows none (a Slack origin with a workspace scope_id: _legacy_slack_session_key).
func originPeer(e *sessionsjson.Entry) *statedb.Peer {
	if e.OriginPlatform == "slack" {
		if id := originString(e, "scope_id"); id != nil && *id != "" {
			return nil
		}
	}
	return peerOf(e)
}

// peerOf is the peer tuple of an entry's origin (string members only).
func peerOf(e *sessionsjson.Entry) *statedb.Peer {
	str := func(name string) *string { return originString(e, name) }
	return &statedb.Peer{UserID: str("user_id"), ChatID: str("chat_id"), ChatType: str("chat_type"), ThreadID: str("thread_id")}
}

// originString is origin.<name> when it is a JSON string, else nil.
func originString(e *sessionsjson.Entry, name string) *string {
	raw, ok := sessionsjson.MemberPath(e.Text(), "origin."+name)
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return nil
	}
	v, err := sessionsjson.LoadJSON(raw)
	s, isString := v.(string)
	if err != nil || !isString {
		return nil
	}
	return &s
}
