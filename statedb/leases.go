package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TurnLease is a live row of session_turn_leases (r0817, 6e929a969): some process is running
// a turn on the conversation whose lineage root is ConversationID right now.
type TurnLease struct {
	ConversationID string
	Holder         string
	ExpiresAt      Value // as stored: a TEXT expiry is later than any time (Compare)
}

// ExpiresText renders ExpiresAt for messages: a number in decimal, another value as SQL
// writes it.
func (l TurnLease) ExpiresText() string {
	if f, ok := l.ExpiresAt.Number(); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return l.ExpiresAt.Literal()
}

// liveLeases returns the turn leases live at now, by conversation id. Live is
// `expires_at >= now`, the definition sessionctl uses for compression locks too (never a PID
// probe: the holder may run in another PID namespace or on another host), compared in SQL as
// the runtime's SQL compares: an expiry stored as TEXT ('never') is later than every time, so
// the lease is live. Without the table (before r0817) there are none.
func (db *DB) liveLeases(ctx context.Context, q querier, now float64) (map[string]TurnLease, error) {
	if !db.schema.Tables["session_turn_leases"] {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT conversation_id, CAST(holder AS TEXT), +expires_at FROM session_turn_leases
		WHERE expires_at >= ? AND typeof(conversation_id) = 'text' ORDER BY conversation_id`, now)
	if err != nil {
		return nil, fmt.Errorf("read turn leases: %w", err)
	}
	defer rows.Close()
	out := map[string]TurnLease{}
	for rows.Next() {
		var l TurnLease
		var expires any
		if err := rows.Scan(&l.ConversationID, &l.Holder, &expires); err != nil {
			return nil, fmt.Errorf("read turn leases: %w", err)
		}
		if l.ExpiresAt, err = valueFromDriver(expires); err != nil {
			return nil, fmt.Errorf("turn lease of %q: %w", l.ConversationID, err)
		}
		out[l.ConversationID] = l
	}
	return out, rows.Err()
}

// leaseRoot returns the conversation id of a session's turn lease, walked as r0817's
// hermes_state.py _session_turn_lease_key_on_conn walks (481156139): from the session up
// through parents that ended by compression, with the set of ids seen so far, stopping at a
// session without a parent, one whose parent was seen already (a cycle: the key is then the
// last member reached before the repeat), an explicit fork child (_is_explicit_fork_child_row)
// and a parent that is missing or did not end by compression. The runtime's dict(row)
// comparisons are made in SQL, on the values as stored (a BLOB 'compression' or 'tool' is not
// the TEXT), and only a TEXT parent id is followed (the runtime's `WHERE id = ?` with a bytes
// parent finds no TEXT id).
func leaseRoot(ctx context.Context, q querier, id string) (string, error) {
	cur, seen := id, map[string]bool{id: true}
	for {
		var parent, config sql.NullString
		var tool, parentCompression bool
		err := q.QueryRowContext(ctx, `SELECT CASE typeof(s.parent_session_id) WHEN 'text' THEN s.parent_session_id END,
			COALESCE(s.source = 'tool', 0), CASE typeof(s.model_config) WHEN 'text' THEN s.model_config END,
			COALESCE(p.end_reason = 'compression', 0)
			FROM sessions s LEFT JOIN sessions p ON p.id = s.parent_session_id WHERE s.id = ?`, cur).
			Scan(&parent, &tool, &config, &parentCompression)
		if errors.Is(err, sql.ErrNoRows) {
			return cur, nil
		}
		if err != nil {
			return "", fmt.Errorf("lineage root of %q: %w", id, err)
		}
		if !parent.Valid || parent.String == "" || seen[parent.String] || tool || forkMarked(parent.String, config) ||
			!parentCompression {
			return cur, nil
		}
		seen[parent.String] = true
		cur = parent.String
	}
}

// forkMarked is the model_config half of _is_explicit_fork_child_row for a row whose parent
// is parent: the TEXT config loads (json.loads, NaN and Infinity included: LoadJSON) to an
// object whose _branched_from or _delegate_from is the parent's id.
func forkMarked(parent string, config sql.NullString) bool {
	if !config.Valid || config.String == "" {
		return false
	}
	v, err := sessionsjson.LoadJSON([]byte(config.String))
	cfg, ok := v.(map[string]any)
	if err != nil || !ok {
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
		reached := map[string]TurnLease{}
		for frontier := []string{conv}; len(frontier) > 0; {
			for _, id := range frontier {
				reached[id] = l
			}
			if frontier, err = continuations(ctx, q, frontier, reached); err != nil {
				return nil, err
			}
		}
		for id := range reached {
			// When conv is its own key, so is every session reached: the walk up from one
			// retraces the way down and stops at conv as conv's own walk does. Otherwise conv
			// is on a compression cycle (or keyed above), and each session's key is its own
			// walk's end: in a cycle of two, the continuation of one member is keyed by the
			// other.
			if root != conv {
				key, err := leaseRoot(ctx, q, id)
				if err != nil {
					return nil, err
				}
				if key != conv {
					continue
				}
			}
			out[id] = l
		}
	}
	return out, nil
}

// continuations returns the children of parents that share their lease key (the parent ended
// by compression, the child is no fork child) and are not in seen.
func continuations(ctx context.Context, q querier, parents []string, seen map[string]TurnLease) ([]string, error) {
	var next []string
	for _, chunk := range chunks(parents) {
		rows, err := q.QueryContext(ctx, `SELECT CAST(c.id AS TEXT), c.parent_session_id, COALESCE(c.source = 'tool', 0),
			CASE typeof(c.model_config) WHEN 'text' THEN c.model_config END FROM sessions c
			JOIN sessions p ON p.id = c.parent_session_id
			WHERE c.parent_session_id IN (`+placeholders(len(chunk))+`) AND p.end_reason = 'compression'`, stringArgs(chunk)...)
		if err != nil {
			return nil, fmt.Errorf("read continuations: %w", err)
		}
		for rows.Next() {
			var id, parent string
			var tool bool
			var config sql.NullString
			if err := rows.Scan(&id, &parent, &tool, &config); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read continuations: %w", err)
			}
			if _, ok := seen[id]; !ok && !tool && !forkMarked(parent, config) {
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
