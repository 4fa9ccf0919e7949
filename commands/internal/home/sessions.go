package home

import (
	"context"
	"fmt"

	"github.com/sessionctl/sessionctl/statedb"
)

// SessionQuery selects state.db sessions: by source, open or ended, and the candidates of
// the runtime's repairs (at their default ages).
type SessionQuery struct {
	Source          string
	Open, Ended     bool
	Orphans, Ghosts bool // finalize-orphans / prune-ghosts candidates (both: sessions that are both)
	Limit           int  // 0: all
}

// EachSession streams the sessions q selects, newest first.
func (h *Home) EachSession(ctx context.Context, q SessionQuery, fn func(statedb.Session) error) error {
	return h.eachSession(ctx, q, false, fn)
}

// CountSessions is the number of sessions q selects without its limit, given that shown of
// them were listed: shown itself unless the limit may have cut the list, else a second walk
// that reads no message counts.
func (h *Home) CountSessions(ctx context.Context, q SessionQuery, shown int) (int, error) {
	if q.Limit == 0 || shown < q.Limit {
		return shown, nil
	}
	q.Limit = 0
	total := 0
	err := h.eachSession(ctx, q, true, func(statedb.Session) error {
		total++
		return nil
	})
	return total, err
}

// progressRows is how often a listing reports its progress, in rows.
const progressRows = 10000

// eachSession streams the sessions q selects, newest first; skipCounts leaves the message
// counts at 0.
func (h *Home) eachSession(ctx context.Context, q SessionQuery, skipCounts bool, fn func(statedb.Session) error) error {
	wanted, err := h.candidateIDs(ctx, q)
	if err != nil {
		return err
	}
	if wanted != nil && len(wanted) == 0 {
		return nil
	}
	filter := statedb.SessionFilter{Source: q.Source, Open: q.Open, Ended: q.Ended, IDs: wanted, Limit: q.Limit, SkipMessageCounts: skipCounts}
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
