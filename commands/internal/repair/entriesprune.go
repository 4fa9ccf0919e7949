package repair

import (
	"context"
	"fmt"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// EntriesPruneSummary is data.entries_prune: what entries prune --older-than D drops (or
// would).
type EntriesPruneSummary struct {
	OlderThan float64 `json:"older_than_seconds"`
	// Cutoff is the naive local time an entry's updated_at must be strictly before.
	Cutoff string `json:"cutoff"`
	// Entries is what the runtime's prune_old_entries returns: the entries it drops.
	Entries int `json:"entries"`
	// SuspendedKept counts the suspended entries as old as that, which it keeps.
	SuspendedKept int `json:"suspended_kept"`
}

// Text is the one-line summary of the plan or the run.
func (s EntriesPruneSummary) Text() string {
	return fmt.Sprintf("entries prune (updated_at before %s, naive local time): %d entr(ies) dropped, %d suspended kept", s.Cutoff, s.Entries, s.SuspendedKept)
}

// EntriesPrune plans, and when applying writes, entries prune --older-than D: the gateway's
// SessionStore.prune_old_entries(max_age_days) of the home's generation
// (sessionsjson.PruneOldEntries) over the entries its store loads, written where the runtime
// reads routing (sessions.json, or the gateway_routing rows and the sessions.json mirror),
// with Routing's refusals and journal. The store's load-time prune of ended rows is not run
// (the fixtures' oracle switches it off too): only the entries the rule names go. Where the
// runtime's comparison raises (an aware updated_at), nothing is planned: a data error.
func EntriesPrune(ctx context.Context, r *Run, maxAge float64) (Outcome, EntriesPruneSummary, error) {
	var sum EntriesPruneSummary
	out, err := Routing(ctx, r, func(_ context.Context, h *home.Home) (RoutingPlan, error) {
		var p RoutingPlan
		var err error
		p, sum, err = planOldEntries(h, maxAge)
		return p, err
	})
	return out, sum, err
}

// planOldEntries removes the entries prune_old_entries drops now.
func planOldEntries(h *home.Home, maxAge float64) (RoutingPlan, EntriesPruneSummary, error) {
	now := h.Opts.Clock.NaiveLocalMicros(time.Local)
	cutoff := sessionsjson.OldEntriesCutoff(now, maxAge)
	sum := EntriesPruneSummary{OlderThan: maxAge, Cutoff: sessionsjson.FormatNaive(cutoff)}
	loaded := h.Loaded()
	entries := make([]sessionsjson.StoreEntry, len(loaded))
	for i, e := range loaded {
		entries[i] = e.StoreEntry()
		if entries[i].Suspended && !entries[i].Aware && entries[i].Updated < cutoff {
			sum.SuspendedKept++
		}
	}
	keys, raises := sessionsjson.PruneOldEntries(entries, cutoff)
	if raises != "" {
		return RoutingPlan{}, sum, failure.Mark(failure.Data, fmt.Errorf("entries prune: %s, so the runtime's prune_old_entries drops nothing on this home; nothing written", raises))
	}
	var p RoutingPlan
	for _, k := range keys {
		p.Edits = append(p.Edits, EntryEdit{Key: k, Remove: true})
	}
	sum.Entries = len(keys)
	return p, sum, nil
}
