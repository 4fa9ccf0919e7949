package home

import (
	"context"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// EntryRow is a routing entry joined with its state.db row and restart count, as sessionctl
// reports it (data.entries).
type EntryRow struct {
	Key                string  `json:"key"`
	SessionID          string  `json:"session_id"`
	Platform           string  `json:"platform"`
	ResumePending      bool    `json:"resume_pending"`
	ResumeReason       *string `json:"resume_reason"`
	LastResumeMarkedAt *string `json:"last_resume_marked_at"`
	Suspended          bool    `json:"suspended"`
	UpdatedAt          string  `json:"updated_at"`
	Row                string  `json:"row"`
	Tip                string  `json:"compression_tip,omitempty"`
	RestartCount       *int64  `json:"restart_count"`
	Skip               string  `json:"skipped_by_runtime,omitempty"`
	Stale              bool    `json:"stale_marker"`
	// Legacy: only sessions.json holds it on a db-primary home; the runtime imports it at
	// its next load (Routing.Legacy).
	Legacy bool `json:"legacy,omitempty"`
	// Updated is UpdatedAt parsed (the table's age).
	Updated sessionsjson.Timestamp `json:"-"`
}

// EntryQuery selects routing entries.
type EntryQuery struct {
	ResumePending, Suspended, Stale bool
	Platform                        string
	Limit                           int // 0: all
}

// selects reports whether q selects e at now (naive local microseconds), and whether e
// carries a stale marker.
func (q EntryQuery) selects(e *sessionsjson.Entry, now int64) (stale, ok bool) {
	stale = e.StaleMarker(now)
	return stale, !(q.ResumePending && !e.ResumePending) && !(q.Suspended && !e.Suspended) &&
		!(q.Stale && !stale) && (q.Platform == "" || e.Platform == q.Platform)
}

func (h *Home) entryRow(rows map[string]Row, e *sessionsjson.Entry, stale bool) EntryRow {
	r := EntryRow{
		Key: e.Key, SessionID: e.SessionID, Platform: e.Platform,
		ResumePending: e.ResumePending, ResumeReason: e.ResumeReason, Suspended: e.Suspended,
		UpdatedAt: e.UpdatedAt.Raw, Updated: e.UpdatedAt, Row: RowState(rows, e.SessionID), Tip: rows[e.SessionID].Tip,
		Skip: e.Skip, Stale: stale, Legacy: h.IsLegacy(e.Key),
	}
	if e.LastResumeMarkedAt != nil {
		raw := e.LastResumeMarkedAt.Raw
		r.LastResumeMarkedAt = &raw
	}
	if counts := h.Counts.Parsed; counts != nil {
		if n, ok := counts.Int(e.Key); ok {
			r.RestartCount = &n
		}
	}
	return r
}

// LineageRows is the lineage of a session as sessionctl reports it: ancestors (oldest
// first), children, and the compression tip.
type LineageRows struct {
	Ancestors []SessionRow `json:"ancestors"`
	Children  []SessionRow `json:"children"`
	Tip       string       `json:"compression_tip,omitempty"`
}

// LineageRows reads the lineage of session id for output (nil without state.db or id).
func (h *Home) LineageRows(ctx context.Context, id string) (*LineageRows, error) {
	l, err := h.Lineage(ctx, id)
	if l == nil || err != nil {
		return nil, err
	}
	out := &LineageRows{Ancestors: []SessionRow{}, Children: []SessionRow{}, Tip: l.Tip}
	for _, s := range l.Ancestors {
		out.Ancestors = append(out.Ancestors, NewSessionRow(s))
	}
	for _, s := range l.Children {
		out.Children = append(out.Children, NewSessionRow(s))
	}
	return out, nil
}
