package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ResetEndReasons are r0817's _RESET_END_REASONS (hermes_state.py at 481156139): rows ended
// for one of them are intentional conversation boundaries, which fence the gateway's
// recovery of an older row of the same peer (6e99531c8, 91c7a67f4, PR #82743).
var ResetEndReasons = []string{"session_reset", "session_switch", "idle", "daily", "suspended", "resume_pending_expired"}

// Peer is the routing peer of an entry's origin, for the recovery lookup's fallback (nil
// values are NULL).
type Peer struct {
	UserID, ChatID, ChatType, ThreadID *string
}

// Recovered is the row the r0817 gateway recovers for a stale routing entry.
type Recovered struct {
	ID        string
	EndReason string // "" while open; agent_close or ws_orphan_reap: the gateway reopens it
	// ActiveAt is COALESCE(last_activity_at, started_at): the recovered entry's updated_at.
	ActiveAt float64
}

// resetFence is the NOT EXISTS clause rejecting a candidate s behind a later reset boundary b
// of the same peer (match: the peer columns b shares with s).
func resetFence(match string) string {
	return `NOT EXISTS (SELECT 1 FROM sessions b WHERE ` + match + ` AND b.ended_at IS NOT NULL
		AND b.end_reason IN ('` + strings.Join(ResetEndReasons, "', '") + `')
		AND b.ended_at > COALESCE(s.last_activity_at, s.started_at))`
}

// recoverable is the candidate condition both lookups share.
const recoverable = `(s.ended_at IS NULL OR s.end_reason IN ('agent_close', 'ws_orphan_reap'))`

// hasMessages is the lookups' _has_messages.
const hasMessages = `(COALESCE(s.message_count, 0) > 0 OR EXISTS (SELECT 1 FROM messages WHERE messages.session_id = s.id LIMIT 1))`

// recoverByKey is the exact-key query of r0817's find_latest_gateway_session_for_peer
// (d2a4d373e PR #82633: no longer requires messages, ranks by messages then recency).
var recoverByKey = `SELECT s.id, COALESCE(s.end_reason, ''), COALESCE(s.last_activity_at, s.started_at) FROM sessions s
	WHERE s.session_key = ? AND s.source = ? AND ` + recoverable + ` AND ` +
	resetFence("b.session_key = s.session_key AND b.source = s.source") + `
	ORDER BY ` + hasMessages + ` DESC, COALESCE(s.last_activity_at, s.started_at) DESC LIMIT 1`

// recoverByPeer is its fallback on the full peer tuple, which still requires messages. The
// runtime compares COALESCE(col, ”) with COALESCE(?, ”), which no index serves; for each
// non-empty value an equal test (the same rows) is added to the candidate and to the fence,
// so that idx_sessions_gateway_peer (source, user_id, chat_id, chat_type, thread_id) narrows
// both instead of a walk over every row of the source.
func recoverByPeer(peer *Peer) (string, []any) {
	cols := []string{"user_id", "chat_id", "chat_type", "thread_id"}
	vals := []*string{peer.UserID, peer.ChatID, peer.ChatType, peer.ThreadID}
	var cand, fence strings.Builder
	var candArgs, fenceArgs []any
	for i, c := range cols {
		fmt.Fprintf(&cand, " AND COALESCE(s.%s, '') = COALESCE(?, '')", c)
		candArgs = append(candArgs, nullable(vals[i]))
		fmt.Fprintf(&fence, " AND COALESCE(b.%s, '') = COALESCE(s.%s, '')", c, c)
		if vals[i] != nil && *vals[i] != "" {
			fmt.Fprintf(&cand, " AND s.%s = ?", c)
			fmt.Fprintf(&fence, " AND b.%s = ?", c)
			candArgs, fenceArgs = append(candArgs, *vals[i]), append(fenceArgs, *vals[i])
		}
	}
	query := `SELECT s.id, COALESCE(s.end_reason, ''), COALESCE(s.last_activity_at, s.started_at) FROM sessions s
	WHERE s.source = ?` + cand.String() + ` AND ` + recoverable + ` AND ` + hasMessages + ` AND ` +
		resetFence("b.source = s.source"+fence.String()) + `
	ORDER BY COALESCE(s.last_activity_at, s.started_at) DESC LIMIT 1`
	return query, append(candArgs, fenceArgs...)
}

// RecoverGatewaySession is r0817's find_latest_gateway_session_for_peer (hermes_state.py at
// 481156139): the row the gateway's load-time prune recovers for a routing entry whose row
// ended. The exact-key query runs first; the peer-tuple fallback only when peer is not nil
// and has a chat id and chat type (the caller passes nil where the gateway allows no
// fallback). found is false when neither finds a row. It needs the v26 columns, else the
// error wraps ErrUnsupportedSchema.
func (db *DB) RecoverGatewaySession(ctx context.Context, key, source string, peer *Peer) (r Recovered, found bool, err error) {
	const op = "recover gateway session"
	if err := db.requireSessionColumns(op, "session_key", "source", "last_activity_at", "message_count",
		"user_id", "chat_id", "chat_type", "thread_id"); err != nil {
		return r, false, err
	}
	if key == "" {
		return r, false, nil
	}
	err = db.sql.QueryRowContext(ctx, recoverByKey, key, source).Scan(&r.ID, &r.EndReason, &r.ActiveAt)
	if err == nil {
		return r, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return r, false, classify(op, err, false)
	}
	if peer == nil || peer.ChatID == nil || peer.ChatType == nil {
		return r, false, nil
	}
	query, args := recoverByPeer(peer)
	err = db.sql.QueryRowContext(ctx, query, append([]any{source}, args...)...).Scan(&r.ID, &r.EndReason, &r.ActiveAt)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, classify(op, err, false)
	}
	return r, true, nil
}

func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
