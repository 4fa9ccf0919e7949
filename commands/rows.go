package commands

import (
	"context"
	"fmt"

	"github.com/sessionctl/sessionctl/statedb"
)

// rowInfo is the state.db side of one routing entry.
type rowInfo struct {
	Session   statedb.Session
	EndReason string // "" while open
	Tip       string // compression tip when the row ended with compression and has a continuation
}

// rowState is the contract's `row` value: missing, open, or the end_reason.
func rowState(rows map[string]rowInfo, id string) string {
	r, ok := rows[id]
	switch {
	case !ok:
		return "missing"
	case r.Session.EndedAt == nil && r.EndReason == "":
		return "open"
	case r.EndReason == "":
		return "ended"
	default:
		return r.EndReason
	}
}

// loadRows reads the state.db rows the routing entries point at, with compression tips
// under the generation's rule.
func (v *homeView) loadRows(ctx context.Context) (map[string]rowInfo, error) {
	rows := map[string]rowInfo{}
	if v.db == nil {
		return rows, nil
	}
	ids := make([]string, 0, len(v.routing))
	for _, e := range v.routing {
		if e.SessionID != "" {
			ids = append(ids, e.SessionID)
		}
	}
	err := v.db.EachSession(ctx, statedb.SessionFilter{IDs: ids, SkipMessageCounts: true}, func(s statedb.Session) error {
		info := rowInfo{Session: s}
		if s.EndReason != nil {
			info.EndReason = *s.EndReason
		}
		rows[s.ID] = info
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	return rows, v.fillTips(ctx, rows)
}

func (v *homeView) fillTips(ctx context.Context, rows map[string]rowInfo) error {
	rule := statedb.TipRuleForSchema(v.schema.Version)
	if rule == statedb.TipNone {
		return nil
	}
	for id, info := range rows {
		if info.EndReason != "compression" {
			continue
		}
		tip, err := v.db.CompressionTip(ctx, id, rule)
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
