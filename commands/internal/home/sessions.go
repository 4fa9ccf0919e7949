package home

import (
	"context"
	"fmt"

	"github.com/sessionctl/sessionctl/statedb"
)

// SessionQuery selects state.db sessions: by source, open or ended, start time, title and
// message count, and the candidates of the runtime's repairs (at their default ages); in an
// order, up to a limit.
type SessionQuery struct {
	Source          string
	Open, Ended     bool
	Orphans, Ghosts bool     // finalize-orphans / prune-ghosts candidates (both: sessions that are both)
	Since, Until    *float64 // Since <= started_at < Until (Unix seconds)
	Title           string   // title contains this (ASCII case-insensitive)
	MinMessages     int
	Order           statedb.SessionOrder
	Reverse         bool
	Limit           int // 0: all
}

// EachSession streams the sessions q selects, in q's order.
func (h *Home) EachSession(ctx context.Context, q SessionQuery, fn func(statedb.Session) error) error {
	filter, err := h.sessionFilter(ctx, q)
	if err != nil || (filter.IDs != nil && len(filter.IDs) == 0) {
		return err
	}
	var n int64
	err = h.DB.EachSession(ctx, filter, func(s statedb.Session) error {
		if n++; n%progressRows == 0 {
			h.Opts.Report("sessions", n, 0)
		}
		return fn(s)
	})
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	return nil
}

// progressRows is how often a listing reports its progress, in rows.
const progressRows = 10000

// CountSessions is the number of sessions q selects without its limit, given that shown of
// them were listed: shown itself unless the limit may have cut the list, else counted.
func (h *Home) CountSessions(ctx context.Context, q SessionQuery, shown int) (int, error) {
	if q.Limit == 0 || shown < q.Limit {
		return shown, nil
	}
	filter, err := h.sessionFilter(ctx, q)
	if err != nil || (filter.IDs != nil && len(filter.IDs) == 0) {
		return 0, err
	}
	n, err := h.DB.CountSessions(ctx, filter)
	if err != nil {
		return 0, fmt.Errorf("state.db: %w", err)
	}
	return n, nil
}

// sessionFilter is q as statedb selects it; IDs empty (not nil) when the candidates asked
// for are none.
func (h *Home) sessionFilter(ctx context.Context, q SessionQuery) (statedb.SessionFilter, error) {
	wanted, err := h.candidateIDs(ctx, q)
	return statedb.SessionFilter{Source: q.Source, Open: q.Open, Ended: q.Ended, IDs: wanted, Since: q.Since, Until: q.Until,
		Title: q.Title, MinMessages: q.MinMessages, Order: q.Order, Reverse: q.Reverse, Limit: q.Limit}, err
}

// candidateIDs narrows the listing to repair candidates; nil means no narrowing.
func (h *Home) candidateIDs(ctx context.Context, q SessionQuery) ([]string, error) {
	if !q.Orphans && !q.Ghosts {
		return nil, nil
	}
	now := h.Opts.Clock.Unix
	ids := []string{}
	if q.Orphans {
		orphans, err := h.DB.FinalizeCandidates(ctx, now, statedb.DefaultOrphanMinAge)
		if err != nil {
			return nil, fmt.Errorf("--orphans: %w", err)
		}
		for _, c := range orphans {
			ids = append(ids, c.Session.ID)
		}
	}
	if q.Ghosts {
		ghosts, err := h.DB.GhostCandidates(ctx, now, statedb.DefaultGhostMinAge)
		if err != nil {
			return nil, fmt.Errorf("--ghosts: %w", err)
		}
		ghostIDs := make([]string, 0, len(ghosts))
		for _, g := range ghosts {
			ghostIDs = append(ghostIDs, g.Session.ID)
		}
		ids = intersectOrSet(ids, ghostIDs, q.Orphans)
	}
	return ids, nil
}

// intersectOrSet returns have ∩ add when intersect, else add.
func intersectOrSet(have, add []string, intersect bool) []string {
	if !intersect {
		return add
	}
	in := map[string]bool{}
	for _, id := range add {
		in[id] = true
	}
	out := []string{}
	for _, id := range have {
		if in[id] {
			out = append(out, id)
		}
	}
	return out
}
