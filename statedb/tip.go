package statedb

import (
	"github.com/sessionctl/sessionctl/sessionsjson"

	"context"
	"database/sql"
	"errors"
	"fmt"
)

// TipRule selects which runtime generation's get_compression_tip rule to follow; the
// generation table (sessionsjson.Rules.Tip) says which generation follows which.
type TipRule = sessionsjson.TipRule

// The compression-tip rules (sessionsjson has what each follows and its upstream commits).
// Under TipV11 the walk keeps no record of the ids it has seen and does not stop at an empty
// id: it takes up to 100 steps and returns where it stands, and its callers
// (hermes_cli/main.py: `get_compression_tip(id) or id`) fall back to the starting id when
// that is ”. Under TipV17 and TipV24 the walk stops at an empty id or an id it has seen
// (returning where it stands), and after 100 steps; its gateway caller (gateway/session.py
// _compression_tip_for_session_id) catches any exception of the lookup and keeps the
// starting id: see ErrTipLookupRaises.
const (
	TipNone = sessionsjson.TipNone
	TipV11  = sessionsjson.TipV11
	TipV17  = sessionsjson.TipV17
	TipV24  = sessionsjson.TipV24
)

// TipRuleForSchema returns the tip rule of the runtime that wrote a schema version.
func TipRuleForSchema(version int) TipRule {
	if version < 1 {
		return TipNone // not a version any runtime wrote
	}
	return sessionsjson.RulesForSchema(version).Tip
}

// ErrTipLookupRaises reports a compression-tip lookup whose SQL raises on a value of the
// database (a child's model_config that is not JSON makes json_extract fail). The runtime's
// gateway catches it and treats the session as having no continuation; CompressionTip then
// returns the starting id with an error wrapping this.
var ErrTipLookupRaises = errors.New("the runtime's compression-tip lookup raises")

// tipStepV11 is the v11 step: a child started at or after the parent's compression end.
const tipStepV11 = `SELECT id FROM sessions WHERE parent_session_id = ?1
	AND started_at >= (SELECT ended_at FROM sessions WHERE id = ?1 AND end_reason = 'compression')
	ORDER BY started_at DESC LIMIT 1`

// tipStep is the v17 step ranked by activity: continuation children of a compression-ended
// parent that are not branch, delegate or 'tool' children, by class, then activity, then
// started_at and id (upstream hermes_state.py get_compression_tip).
func tipStep(activity string) string {
	return `SELECT child.id FROM sessions parent
	JOIN sessions child ON child.parent_session_id = parent.id
	WHERE parent.id = ?1 AND parent.end_reason = 'compression'
	  AND json_extract(COALESCE(child.model_config, '{}'), '$._branched_from') IS NULL
	  AND json_extract(COALESCE(child.model_config, '{}'), '$._delegate_from') IS NULL
	  AND COALESCE(child.source, '') != 'tool'
	ORDER BY CASE WHEN child.end_reason = 'compression' THEN 0
	              WHEN child.ended_at IS NULL THEN 1 ELSE 2 END,
	         ` + activity + ` DESC, child.started_at DESC, child.id DESC
	LIMIT 1`
}

var (
	// tipStepV17 is the v17 step (as of 52d0d671e): activity is the latest message, else
	// started_at.
	tipStepV17 = tipStep(`COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = child.id), child.started_at)`)
	// tipStepV24 is the r0817 step (481156139): _sql_session_last_active(child)
	// (hermes_state_common.py), the freshest of last_activity_at and the latest message, else
	// started_at (c2088efe9).
	tipStepV24 = tipStep(lastActiveExpr("child"))
)

// CompressionTip walks from id through compression continuations under rule and returns the
// id the runtime of that rule resolves id to (id itself when there is no continuation). Under
// TipV17, a step whose SQL raises on a value of the database returns id and an error
// wrapping ErrTipLookupRaises (the runtime's gateway keeps the starting id).
func (db *DB) CompressionTip(ctx context.Context, id string, rule TipRule) (string, error) {
	if rule == TipV24 && !db.schema.SessionColumns["last_activity_at"] {
		rule = TipV17 // the same order when the column is absent (all NULL)
	}
	switch rule {
	case TipNone:
		return id, nil
	case TipV11:
		return db.tipV11(ctx, id)
	case TipV17:
		return db.tipWalk(ctx, id, tipStepV17)
	case TipV24:
		return db.tipWalk(ctx, id, tipStepV24)
	default:
		return "", fmt.Errorf("compression tip: unknown rule %d", rule)
	}
}

// tipStep runs one step from cur; ok is false when there is no continuation.
func (db *DB) tipStep(ctx context.Context, step, cur string) (next string, ok bool, err error) {
	err = db.queryRow(ctx, step, cur).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return next, err == nil, err
}

// tipV11 follows the v11 rule: 100 steps with no record of the ids seen, then the caller's
// `or id` (an empty result means id).
func (db *DB) tipV11(ctx context.Context, id string) (string, error) {
	cur := id
	for range maxLineageSteps {
		next, ok, err := db.tipStep(ctx, tipStepV11, cur)
		if err != nil {
			return "", classify(fmt.Sprintf("compression tip of %q", id), err, false)
		}
		if !ok {
			break
		}
		cur = next
	}
	if cur == "" {
		return id, nil
	}
	return cur, nil
}

// tipWalk follows the v17 and v24 rules (step is the rule's query): stop at an empty id or
// one already seen, at most 100 steps.
func (db *DB) tipWalk(ctx context.Context, id, step string) (string, error) {
	cur := id
	seen := map[string]bool{}
	if id != "" {
		seen[id] = true
	}
	for range maxLineageSteps {
		next, ok, err := db.tipStep(ctx, step, cur)
		if err != nil && raisesOnData(err) {
			return id, fmt.Errorf("compression tip of %q (at %q): %v: %w", id, cur, err, ErrTipLookupRaises)
		}
		if err != nil {
			return "", classify(fmt.Sprintf("compression tip of %q", id), err, false)
		}
		if !ok || next == "" || seen[next] {
			return cur, nil
		}
		seen[next] = true
		cur = next
	}
	return cur, nil
}
