package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// TipRule selects which runtime generation's get_compression_tip rule to follow.
type TipRule int

const (
	// TipNone: runtimes before schema v7 have no compression-tip rule; the tip is the id itself.
	TipNone TipRule = iota
	// TipV11: S11 rule — the most recently started child that started at or after its
	// 'compression'-ended parent ended.
	TipV11
	// TipV17: S21 rule — among children of a 'compression'-ended parent that are not branch,
	// delegate or 'tool' children, prefer compression-ended, then live, then the rest, then the
	// latest activity, started_at and id (all descending).
	TipV17
)

// TipRuleForSchema returns the tip rule of the runtime that wrote a schema version.
func TipRuleForSchema(version int) TipRule {
	switch {
	case version < 7:
		return TipNone
	case version < 17:
		return TipV11
	default:
		return TipV17
	}
}

// tipStepV11 is the S11 step: a child started at or after the parent's compression end.
const tipStepV11 = `SELECT id FROM sessions WHERE parent_session_id = ?1
	AND started_at >= (SELECT ended_at FROM sessions WHERE id = ?1 AND end_reason = 'compression')
	ORDER BY started_at DESC LIMIT 1`

// tipStepV17 is the S21 step (upstream hermes_state.py get_compression_tip, as of 52d0d671e).
const tipStepV17 = `SELECT child.id FROM sessions parent
	JOIN sessions child ON child.parent_session_id = parent.id
	WHERE parent.id = ?1 AND parent.end_reason = 'compression'
	  AND json_extract(COALESCE(child.model_config, '{}'), '$._branched_from') IS NULL
	  AND json_extract(COALESCE(child.model_config, '{}'), '$._delegate_from') IS NULL
	  AND COALESCE(child.source, '') != 'tool'
	ORDER BY CASE WHEN child.end_reason = 'compression' THEN 0
	              WHEN child.ended_at IS NULL THEN 1 ELSE 2 END,
	         COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = child.id),
	                  child.started_at) DESC,
	         child.started_at DESC, child.id DESC
	LIMIT 1`

// CompressionTip walks from id through compression continuations under rule and returns the
// last id reached (id itself when there is no continuation). The walk is cycle-safe and
// stops after 100 steps.
func (db *DB) CompressionTip(ctx context.Context, id string, rule TipRule) (string, error) {
	var step string
	switch rule {
	case TipNone:
		return id, nil
	case TipV11:
		step = tipStepV11
	case TipV17:
		step = tipStepV17
	default:
		return "", fmt.Errorf("compression tip: unknown rule %d", rule)
	}
	cur := id
	seen := map[string]bool{id: true}
	for range maxLineageSteps {
		var next string
		err := db.sql.QueryRowContext(ctx, step, cur).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) {
			return cur, nil
		}
		if err != nil {
			return "", classify(fmt.Sprintf("compression tip of %q", id), err, false)
		}
		if next == "" || seen[next] {
			return cur, nil
		}
		seen[next] = true
		cur = next
	}
	return cur, nil
}
