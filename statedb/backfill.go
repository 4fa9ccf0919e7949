package statedb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The counts below predict the version-gated data steps of a runtime's open (hermes_state.py
// _init_schema; statedb.md §2.2). They only read.

// branchChildSQL, compressionChildSQL and resetChildSQL are the runtime's lineage predicates
// for a row aliased s (_BRANCH_CHILD_SQL, _COMPRESSION_CHILD_SQL; r0817's _RESET_CHILD_SQL
// with its pre-marker same-key fallback, ce89afa59 and 91c7a67f4).
const (
	branchChildSQL = `json_extract(COALESCE(s.model_config, '{}'), '$._branched_from') IS NOT NULL
		OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id
			AND p.end_reason = 'branched' AND s.started_at >= p.ended_at)`
	compressionChildSQL = `EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id
		AND p.end_reason = 'compression')`
	resetMarkerSQL  = `json_extract(COALESCE(s.model_config, '{}'), '$._reset_from') IS NOT NULL`
	resetSameKeySQL = `EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id
		AND p.end_reason IN ('session_reset', 'session_switch', 'idle', 'daily', 'suspended', 'resume_pending_expired')
		AND s.session_key IS NOT NULL AND s.session_key != '' AND s.session_key = p.session_key)`
	delegateFromUnset = `json_extract(COALESCE(s.model_config, '{}'), '$._delegate_from') IS NULL`
)

// CountDelegateTags counts the rows the v16 step tags with model_config._delegate_from
// (d62979a6f): children that are neither branches nor compression continuations (nor, when
// resetAware — r0817 —, reset continuations), and tool-using childless roots of at most 25
// messages without a title. The step runs after the reconciler: a file without
// sessions.session_key has it NULL then.
func (db *DB) CountDelegateTags(ctx context.Context, resetAware bool) (int64, error) {
	child := "s.parent_session_id IS NOT NULL AND " + delegateFromUnset +
		" AND NOT (" + branchChildSQL + ") AND NOT (" + compressionChildSQL + ")"
	if resetAware {
		reset := resetMarkerSQL
		if db.schema.SessionColumns["session_key"] {
			reset += " OR " + resetSameKeySQL
		}
		child += " AND NOT (" + reset + ")"
	}
	root := "s.parent_session_id IS NULL AND " + delegateFromUnset +
		` AND json_extract(COALESCE(s.model_config, '{}'), '$._branched_from') IS NULL
		AND s.title IS NULL AND s.message_count <= 25
		AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.role = 'tool')
		AND NOT EXISTS (SELECT 1 FROM sessions ch WHERE ch.parent_session_id = s.id)`
	return db.countWhere(ctx, "sessions s", "("+child+") OR ("+root+")")
}

// CountUsageSeeds counts the rows the v20 step inserts into session_model_usage
// (cb7f6bbb2): one per session with tokens, unless the table already holds its
// (session, model, provider, base URL, mode) row with the main-loop task (INSERT OR IGNORE).
func (db *DB) CountUsageSeeds(ctx context.Context) (int64, error) {
	where := `COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0) + COALESCE(s.cache_read_tokens, 0)
		+ COALESCE(s.cache_write_tokens, 0) + COALESCE(s.reasoning_tokens, 0) > 0`
	for _, c := range []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
		"billing_provider", "billing_base_url", "billing_mode"} {
		if !db.schema.SessionColumns[c] {
			where = strings.ReplaceAll(where, "s."+c, "NULL")
		}
	}
	if db.schema.Tables["session_model_usage"] {
		where += ` AND NOT EXISTS (SELECT 1 FROM session_model_usage u WHERE u.session_id = s.id
			AND u.model = COALESCE(s.model, 'unknown'))`
	}
	return db.countWhere(ctx, "sessions s", where)
}

// CountInlinePrompts counts the sessions whose system_prompt the v25 step moves into
// system_prompts (7d066c3c5), and the distinct prompts among them.
func (db *DB) CountInlinePrompts(ctx context.Context) (sessions, prompts int64, err error) {
	err = db.sql.QueryRowContext(ctx,
		`SELECT COUNT(*), COUNT(DISTINCT system_prompt) FROM sessions WHERE system_prompt IS NOT NULL`).Scan(&sessions, &prompts)
	if err != nil {
		return 0, 0, classify("count inline system prompts", err, false)
	}
	return sessions, prompts, nil
}

// GatewayMetadataColumns are the columns the v18 step fills from sessions.json (747386ecf),
// expiry_finalized last.
var GatewayMetadataColumns = []string{"session_key", "chat_id", "chat_type", "thread_id", "display_name", "origin_json", "expiry_finalized"}

// GatewayMetadataUnset returns, for each id of ids with a sessions row, which of
// GatewayMetadataColumns hold nothing yet: NULL, and for expiry_finalized NULL or 0. A column
// the file lacks is unset (the reconciler adds it empty before the step runs).
func (db *DB) GatewayMetadataUnset(ctx context.Context, ids []string) (map[string]map[string]bool, error) {
	exprs := make([]string, len(GatewayMetadataColumns))
	for i, c := range GatewayMetadataColumns {
		switch {
		case !db.schema.SessionColumns[c]:
			exprs[i] = "1"
		case c == "expiry_finalized":
			exprs[i] = "COALESCE(expiry_finalized, 0) = 0"
		default:
			exprs[i] = quoteIdent(c) + " IS NULL"
		}
	}
	out := map[string]map[string]bool{}
	for _, chunk := range chunks(ids) {
		q := "SELECT id, " + strings.Join(exprs, ", ") + " FROM sessions WHERE id IN (" + placeholders(len(chunk)) + ")"
		if err := db.scanUnset(ctx, q, stringArgs(chunk), out); err != nil {
			return nil, classify("read gateway metadata", err, false)
		}
	}
	return out, nil
}

// scanUnset reads the rows of a GatewayMetadataUnset query into out.
func (db *DB) scanUnset(ctx context.Context, q string, args []any, out map[string]map[string]bool) error {
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		flags := make([]bool, len(GatewayMetadataColumns))
		dest := []any{&id}
		for i := range flags {
			dest = append(dest, &flags[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		unset := map[string]bool{}
		for i, c := range GatewayMetadataColumns {
			unset[c] = flags[i]
		}
		out[id] = unset
	}
	return rows.Err()
}

// CountNullActive counts the messages whose active flag is NULL, which r0703+ set to 1 on
// open (#51646); 0 when the column does not exist yet (the reconciler adds it with DEFAULT 1).
func (db *DB) CountNullActive(ctx context.Context) (int64, error) {
	if !db.schema.MessageColumns["active"] {
		return 0, nil
	}
	return db.countWhere(ctx, "messages", "active IS NULL")
}

// countWhere counts the rows of from matching where.
func (db *DB) countWhere(ctx context.Context, from, where string) (int64, error) {
	var n sql.NullInt64
	if err := db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+from+" WHERE "+where).Scan(&n); err != nil {
		return 0, classify(fmt.Sprintf("count %s", from), err, false)
	}
	return n.Int64, nil
}
