package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// TurnLease is a live row of session_turn_leases (r0817, 6e929a969): some process is running
// a turn on the conversation whose lineage root is ConversationID right now.
type TurnLease struct {
	ConversationID string
	Holder         string
	ExpiresAt      float64
}

// liveLeases returns the turn leases live at now, by conversation id. Live is
// `expires_at >= now`, the definition sessionctl uses for compression locks too (never a PID
// probe: the holder may run in another PID namespace or on another host). Without the table
// (before r0817) there are none.
func (db *DB) liveLeases(ctx context.Context, q querier, now float64) (map[string]TurnLease, error) {
	if !db.schema.Tables["session_turn_leases"] {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT conversation_id, holder, +expires_at FROM session_turn_leases
		WHERE expires_at >= ? ORDER BY conversation_id`, now)
	if err != nil {
		return nil, fmt.Errorf("read turn leases: %w", err)
	}
	defer rows.Close()
	out := map[string]TurnLease{}
	for rows.Next() {
		var l TurnLease
		var expires sql.NullFloat64
		if err := rows.Scan(&l.ConversationID, &l.Holder, &expires); err != nil {
			return nil, fmt.Errorf("read turn leases: %w", err)
		}
		l.ExpiresAt = expires.Float64
		out[l.ConversationID] = l
	}
	return out, rows.Err()
}

// leaseRoot returns the conversation id of a session's turn lease: the lineage root reached
// by walking parents that ended by compression, stopping at an explicit fork child (r0817
// hermes_state.py _session_turn_lease_key_on_conn and _is_explicit_fork_child_row: a 'tool'
// child, or one whose model_config names its parent in _branched_from or _delegate_from).
func leaseRoot(ctx context.Context, q querier, id string) (string, error) {
	cur, seen := id, map[string]bool{id: true}
	for {
		var parent, source, config, parentEnd sql.NullString
		err := q.QueryRowContext(ctx, `SELECT s.parent_session_id, s.source, s.model_config, p.end_reason
			FROM sessions s LEFT JOIN sessions p ON p.id = s.parent_session_id WHERE s.id = ?`, cur).
			Scan(&parent, &source, &config, &parentEnd)
		if errors.Is(err, sql.ErrNoRows) {
			return cur, nil
		}
		if err != nil {
			return "", fmt.Errorf("lineage root of %q: %w", id, err)
		}
		if !parent.Valid || parent.String == "" || seen[parent.String] || forkChild(parent.String, source, config) ||
			parentEnd.String != EndReasonCompression {
			return cur, nil
		}
		seen[parent.String] = true
		cur = parent.String
	}
}

// forkChild is _is_explicit_fork_child_row for a row with a parent.
func forkChild(parent string, source, config sql.NullString) bool {
	if source.String == "tool" {
		return true
	}
	var cfg map[string]any
	if !config.Valid || json.Unmarshal([]byte(config.String), &cfg) != nil {
		return false
	}
	return cfg["_branched_from"] == parent || cfg["_delegate_from"] == parent
}

// leasedAmong returns, for each of ids whose lineage root holds a live turn lease at now,
// that lease. It reads nothing more when no lease is live; otherwise it walks down from each
// leased root to the sessions whose lease key it is (leasedSessions), a few queries per live
// lease rather than a walk up from every id.
func (db *DB) leasedAmong(ctx context.Context, q querier, now float64, ids []string) (map[string]TurnLease, error) {
	leases, err := db.liveLeases(ctx, q, now)
	if err != nil || len(leases) == 0 {
		return nil, err
	}
	keyed, err := leasedSessions(ctx, q, leases)
	if err != nil {
		return nil, err
	}
	out := map[string]TurnLease{}
	for _, id := range ids {
		if l, ok := keyed[id]; ok {
			out[id] = l
		}
	}
	return out, nil
}

// leasedSessions maps every session whose lease key (leaseRoot) is the conversation of a live
// lease to that lease: the root itself (when it is one: a conversation id that is not its own
// root names no session's key) and the descendants reached through compression-ended parents
// and children that are not fork children.
func leasedSessions(ctx context.Context, q querier, leases map[string]TurnLease) (map[string]TurnLease, error) {
	out := map[string]TurnLease{}
	for conv, l := range leases {
		root, err := leaseRoot(ctx, q, conv)
		if err != nil {
			return nil, err
		}
		if root != conv {
			continue
		}
		for frontier := []string{conv}; len(frontier) > 0; {
			for _, id := range frontier {
				out[id] = l
			}
			if frontier, err = continuations(ctx, q, frontier, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// continuations returns the children of parents that share their lease key (the parent ended
// by compression, the child is no fork child) and are not in seen.
func continuations(ctx context.Context, q querier, parents []string, seen map[string]TurnLease) ([]string, error) {
	var next []string
	for _, chunk := range chunks(parents) {
		rows, err := q.QueryContext(ctx, `SELECT c.id, c.parent_session_id, c.source, c.model_config FROM sessions c
			JOIN sessions p ON p.id = c.parent_session_id
			WHERE c.parent_session_id IN (`+placeholders(len(chunk))+`) AND p.end_reason = 'compression'`, stringArgs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read continuations: %w", err)
		}
		for rows.Next() {
			var id, parent string
			var source, config sql.NullString
			if err := rows.Scan(&id, &parent, &source, &config); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read continuations: %w", err)
			}
			if _, ok := seen[id]; !ok && !forkChild(parent, source, config) {
				next = append(next, id)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read continuations: %w", err)
		}
	}
	return next, nil
}
