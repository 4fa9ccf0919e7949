package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
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
	// ActiveAt is the recovered entry's updated_at: last_activity_at, else started_at, read
	// as the runtime reads them (activeAt; r0817; 0 under the earlier lookups, whose callers
	// date the entry now).
	ActiveAt float64
	// HasMessages is the lookup's _has_messages: r0817 sets the rebuilt entry's
	// reset_had_activity from it (the earlier lookups only find rows with messages).
	HasMessages bool
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
var recoverByKey = `SELECT s.id, COALESCE(s.end_reason, ''), +s.last_activity_at, +s.started_at, ` + hasMessages + ` FROM sessions s
	WHERE s.session_key = ? AND s.source = ? AND ` + recoverable + ` AND ` +
	resetFence("b.session_key = s.session_key AND b.source = s.source") + `
	ORDER BY ` + hasMessages + ` DESC, COALESCE(s.last_activity_at, s.started_at) DESC LIMIT 1`

// peerTerms are the peer-tuple conditions of the lookups' fallback: on the candidate s
// (arguments candArgs) and on the reset fence's row b (fenceArgs, r0817). The runtime
// compares COALESCE(col, ”) with COALESCE(?, ”), which no index serves; for each non-empty
// value an equal test (the same rows) is added to the candidate and to the fence, so that
// idx_sessions_gateway_peer (source, user_id, chat_id, chat_type, thread_id) narrows both
// instead of a walk over every row of the source.
func peerTerms(peer *Peer) (cand, fence string, candArgs, fenceArgs []any) {
	cols := []string{"user_id", "chat_id", "chat_type", "thread_id"}
	vals := []*string{peer.UserID, peer.ChatID, peer.ChatType, peer.ThreadID}
	var c, f strings.Builder
	for i, col := range cols {
		fmt.Fprintf(&c, " AND COALESCE(s.%s, '') = COALESCE(?, '')", col)
		candArgs = append(candArgs, nullable(vals[i]))
		fmt.Fprintf(&f, " AND COALESCE(b.%s, '') = COALESCE(s.%s, '')", col, col)
		if vals[i] != nil && *vals[i] != "" {
			fmt.Fprintf(&c, " AND s.%s = ?", col)
			fmt.Fprintf(&f, " AND b.%s = ?", col)
			candArgs, fenceArgs = append(candArgs, *vals[i]), append(fenceArgs, *vals[i])
		}
	}
	return c.String(), f.String(), candArgs, fenceArgs
}

// recoverByPeer is r0817's fallback on the full peer tuple, which still requires messages;
// its arguments follow the source.
func recoverByPeer(peer *Peer) (string, []any) {
	cand, fence, candArgs, fenceArgs := peerTerms(peer)
	query := `SELECT s.id, COALESCE(s.end_reason, ''), +s.last_activity_at, +s.started_at, 1 FROM sessions s
	WHERE s.source = ?` + cand + ` AND ` + recoverable + ` AND ` + hasMessages + ` AND ` +
		resetFence("b.source = s.source"+fence) + `
	ORDER BY COALESCE(s.last_activity_at, s.started_at) DESC LIMIT 1`
	return query, append(candArgs, fenceArgs...)
}

// recoveryQueries is one generation's find_latest_gateway_session_for_peer: its exact-key
// query (arguments: key, source), its peer-tuple fallback (the query and its arguments after
// the source) and the sessions columns they read. Each query selects the id, the end_reason
// ("" while open), last_activity_at and started_at as stored (Recovered.ActiveAt is made of
// them) and whether it has messages.
type recoveryQueries struct {
	byKey   string
	byPeer  func(*Peer) (string, []any)
	columns []string
}

// recoveryBefore26 are the lookups of r0703 and r0715 (hermes_state.py at 52d0d671e and
// c2a3b9ce5): rows with messages only, the latest started_at first, no reset fence. Their
// callers rebuild the entry with updated_at = now, so ActiveAt is not selected (0).
func recoveryBefore26(recoverable string) recoveryQueries {
	const cols = `SELECT s.id, COALESCE(s.end_reason, ''), NULL, 0.0, 1 FROM sessions s WHERE `
	return recoveryQueries{
		byKey: cols + `s.session_key = ? AND s.source = ? AND ` + recoverable + ` AND ` + hasMessages +
			` ORDER BY s.started_at DESC LIMIT 1`,
		byPeer: func(peer *Peer) (string, []any) {
			cand, _, args, _ := peerTerms(peer)
			return cols + `s.source = ?` + cand + ` AND ` + recoverable + ` AND ` + hasMessages + ` ORDER BY s.started_at DESC LIMIT 1`, args
		},
		columns: []string{"session_key", "source", "message_count", "user_id", "chat_id", "chat_type", "thread_id", "started_at"},
	}
}

// recoveries are the lookups by generation rule.
var recoveries = map[sessionsjson.RecoveryRule]recoveryQueries{
	// 86e64900b (2026-06-28), d5b4879d4: agent_close rows are recoverable.
	sessionsjson.RecoveryV17: recoveryBefore26(`(s.ended_at IS NULL OR s.end_reason = 'agent_close')`),
	// ca907480a (#63207): ws_orphan_reap rows too.
	sessionsjson.RecoveryV21: recoveryBefore26(recoverable),
	sessionsjson.RecoveryV26: {recoverByKey, recoverByPeer, []string{"session_key", "source", "last_activity_at", "message_count",
		"user_id", "chat_id", "chat_type", "thread_id"}},
}

// RecoverGatewaySession is r0817's find_latest_gateway_session_for_peer (hermes_state.py at
// 481156139): the row the gateway's load-time prune recovers for a routing entry whose row
// ended. The exact-key query runs first; the peer-tuple fallback only when peer is not nil
// and has a chat id and chat type (the caller passes nil where the gateway allows no
// fallback). found is false when neither finds a row. It needs the v26 columns, else the
// error wraps ErrUnsupportedSchema.
func (db *DB) RecoverGatewaySession(ctx context.Context, key, source string, peer *Peer) (r Recovered, found bool, err error) {
	const op = "recover gateway session"
	rq := recoveries[sessionsjson.RecoveryV26]
	if err := db.requireSessionColumns(op, rq.columns...); err != nil {
		return r, false, err
	}
	return recoverWith(ctx, db, rq, "", key, source, peer)
}

// recoverWith runs the lookup rq, each query preceded by with (a WITH clause without
// arguments; "" for none).
func recoverWith(ctx context.Context, db *DB, rq recoveryQueries, with, key, source string, peer *Peer) (r Recovered, found bool, err error) {
	const op = "recover gateway session"
	if key == "" {
		return r, false, nil
	}
	var last, started any
	err = db.queryRow(ctx, with+rq.byKey, key, source).Scan(&r.ID, &r.EndReason, &last, &started, &r.HasMessages)
	if err == nil {
		r.ActiveAt = activeAt(last, started)
		return r, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return r, false, classify(op, err, false)
	}
	if peer == nil || peer.ChatID == nil || peer.ChatType == nil {
		return r, false, nil
	}
	query, args := rq.byPeer(peer)
	err = db.queryRow(ctx, with+query, append([]any{source}, args...)...).Scan(&r.ID, &r.EndReason, &last, &started, &r.HasMessages)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, classify(op, err, false)
	}
	r.ActiveAt = activeAt(last, started)
	return r, true, nil
}

// Python's datetime.fromtimestamp accepts the years 1 to 9999 (a day inside each end, for
// the local offset).
const (
	minTimestamp = -62135596800 + 86400
	maxTimestamp = 253402300800 - 86400
)

// activeAt is the updated_at r0817's _create_entry_from_recovered_row (gateway/session.py at
// 481156139) gives the entry it rebuilds on the recovered row: fromtimestamp(float(
// last_activity_at)) when it is not NULL, else created_at = fromtimestamp(float(started_at));
// a value float() or fromtimestamp() raises on (a TEXT 'recent', NaN, a year past 9999)
// falls back, last_activity_at to created_at and started_at to the epoch ("must look old,
// never freshly active"). The lookups' ORDER BY and fence compare the stored values in SQL,
// as the runtime's do.
func activeAt(lastRaw, startedRaw any) float64 {
	stamp := func(raw any) (float64, bool) {
		v, err := valueFromDriver(raw)
		if err != nil {
			return 0, false
		}
		f, ok := v.PyFloat()
		return f, ok && f > minTimestamp && f < maxTimestamp // false for NaN and the infinities too
	}
	created, _ := stamp(startedRaw)
	if lastRaw == nil {
		return created
	}
	if f, ok := stamp(lastRaw); ok {
		return f
	}
	return created
}

func nullable(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
