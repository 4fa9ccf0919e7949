package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// sessionPageSize bounds how many sessions EachSession holds in memory at once.
const sessionPageSize = 1000

// maxLineageSteps caps parent and tip walks, like the runtime's 100-step walks.
const maxLineageSteps = 100

// Session is one sessions row as the tool needs it. Pointer fields are nil for NULL or, for
// columns a schema generation lacks (session_key before v17, api_call_count before v8), nil.
// started_at, ended_at and api_call_count are also kept as SQLite holds them (Started, Ended,
// APICalls): a TEXT value where the runtime writes a number is read, not refused, and
// compared as SQLite compares it (Compare).
type Session struct {
	ID           string
	Source       string
	UserID       *string
	ParentID     *string
	EndReason    *string
	Title        *string
	SessionKey   *string
	ModelConfig  *string
	StartedAt    float64  // started_at when it is a number (0 otherwise: see Started)
	EndedAt      *float64 // ended_at when it is a number; nil when NULL or not a number (see Ended)
	APICallCount *int64   // api_call_count when it is an integer
	MessageCount int64    // COUNT(*) of messages rows, not the message_count column
	// Started, Ended and APICalls are started_at, ended_at and api_call_count as stored
	// (NULL for a column the schema lacks).
	Started, Ended, APICalls Value
}

// Open reports whether the session has not ended (ended_at IS NULL, as the runtime asks).
func (s Session) Open() bool {
	return s.EndedAt == nil && s.Ended.IsNull()
}

// OddValue is a column holding a value of a class the runtime never writes there: TEXT or a
// BLOB where it writes a time or a count, a fraction where it writes a count.
type OddValue struct {
	Column string
	Value  Value
}

// OddValues lists the odd values of s: started_at not a number, ended_at neither NULL nor a
// number, api_call_count neither NULL nor an integer.
func (s Session) OddValues() []OddValue {
	var out []OddValue
	if !s.Started.IsNull() && !s.Started.IsNumber() {
		out = append(out, OddValue{"started_at", s.Started})
	}
	if !s.Ended.IsNull() && !s.Ended.IsNumber() {
		out = append(out, OddValue{"ended_at", s.Ended})
	}
	if !s.APICalls.IsNull() && s.APICalls.Type != TypeInteger {
		out = append(out, OddValue{"api_call_count", s.APICalls})
	}
	return out
}

// setNumbers fills StartedAt, EndedAt and APICallCount from the stored values.
func (s *Session) setNumbers() {
	if f, ok := s.Started.Number(); ok {
		s.StartedAt = f
	}
	if f, ok := s.Ended.Number(); ok {
		s.EndedAt = &f
	}
	if s.APICalls.Type == TypeInteger {
		n := s.APICalls.Int
		s.APICallCount = &n
	}
}

// Totals are whole-database counts.
type Totals struct {
	Sessions int64
	Open     int64
	Ended    int64
	Messages int64
}

// SessionFilter selects sessions for EachSession. Zero values select everything. Open and
// Ended together select both.
type SessionFilter struct {
	Source string   // exact source
	Open   bool     // ended_at IS NULL
	Ended  bool     // ended_at IS NOT NULL
	IDs    []string // only these ids
	Limit  int      // at most this many (0: no limit)
	// SkipMessageCounts leaves Session.MessageCount at 0 instead of counting messages rows.
	SkipMessageCounts bool
}

// sessionColumns returns the select list for a Session, with NULL for absent columns.
func (db *DB) sessionColumns(alias string) string {
	return db.sessionColumnsWith(alias, true)
}

// sessionColumnsWith is sessionColumns, optionally without the message count subquery. The
// numeric columns are selected as expressions (+col), so the driver reports the stored class.
func (db *DB) sessionColumnsWith(alias string, countMessages bool) string {
	count := "0"
	if countMessages {
		count = "(SELECT COUNT(*) FROM messages mc WHERE mc.session_id = " + alias + ".id)"
	}
	col := func(name string) string {
		if db.schema.SessionColumns[name] {
			return alias + "." + name
		}
		return "NULL"
	}
	return strings.Join([]string{
		alias + ".id", "COALESCE(" + alias + ".source, '')", col("user_id"), col("parent_session_id"),
		col("end_reason"), col("title"), col("session_key"), col("model_config"),
		"+" + alias + ".started_at", "+" + col("ended_at"), "+" + col("api_call_count"), count,
	}, ", ")
}

// scanner is satisfied by *sql.Row and *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

func scanSession(sc scanner, extra ...any) (Session, error) {
	var s Session
	var userID, parent, reason, title, key, cfg sql.NullString
	var started, ended, calls any
	dest := append([]any{&s.ID, &s.Source, &userID, &parent, &reason, &title, &key, &cfg,
		&started, &ended, &calls, &s.MessageCount}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return s, err
	}
	s.UserID, s.ParentID, s.EndReason = strPtr(userID), strPtr(parent), strPtr(reason)
	s.Title, s.SessionKey, s.ModelConfig = strPtr(title), strPtr(key), strPtr(cfg)
	var err error
	for _, v := range []struct {
		raw any
		dst *Value
	}{{started, &s.Started}, {ended, &s.Ended}, {calls, &s.APICalls}} {
		if *v.dst, err = valueFromDriver(v.raw); err != nil {
			return s, fmt.Errorf("session %q: %w", s.ID, err)
		}
	}
	s.setNumbers()
	return s, nil
}

func strPtr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	return &n.String
}

// querySessions runs a query whose select list is sessionColumns and collects the rows.
func (db *DB) querySessions(ctx context.Context, q querier, query string, args ...any) ([]Session, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Totals counts sessions (open and ended) and messages.
func (db *DB) Totals(ctx context.Context) (Totals, error) {
	var t Totals
	err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*),
		COALESCE(SUM(ended_at IS NULL), 0), COALESCE(SUM(ended_at IS NOT NULL), 0),
		(SELECT COUNT(*) FROM messages) FROM sessions`).Scan(&t.Sessions, &t.Open, &t.Ended, &t.Messages)
	if err != nil {
		return t, classify("count sessions", err, false)
	}
	return t, nil
}

// EachSession calls fn for every session matching f, newest first (started_at DESC, id DESC).
// Rows are read in keyset pages of 1000, so memory stays flat on large databases; fn runs
// outside any open query and may itself query db. An error from fn stops the walk and is
// returned unchanged.
func (db *DB) EachSession(ctx context.Context, f SessionFilter, fn func(Session) error) error {
	if f.IDs != nil {
		return db.eachSessionByID(ctx, f, fn)
	}
	where, args, err := sessionWhere(f)
	if err != nil {
		return err
	}
	remaining := f.Limit
	var last *Session
	for {
		page, err := db.sessionPage(ctx, where, args, last, pageSize(remaining), f.SkipMessageCounts)
		if err != nil {
			return classify("list sessions", err, false)
		}
		for _, s := range page {
			if err := fn(s); err != nil {
				return err
			}
		}
		if len(page) < sessionPageSize {
			return nil
		}
		if remaining > 0 {
			if remaining -= len(page); remaining == 0 {
				return nil
			}
		}
		last = &page[len(page)-1]
	}
}

func pageSize(remaining int) int {
	if remaining > 0 && remaining < sessionPageSize {
		return remaining
	}
	return sessionPageSize
}

// sessionWhere turns f into WHERE conditions (joined by AND) and their arguments.
func sessionWhere(f SessionFilter) ([]string, []any, error) {
	var where []string
	var args []any
	if f.Source != "" {
		where, args = append(where, "s.source = ?"), append(args, f.Source)
	}
	if f.Open && !f.Ended {
		where = append(where, "s.ended_at IS NULL")
	}
	if f.Ended && !f.Open {
		where = append(where, "s.ended_at IS NOT NULL")
	}
	if f.IDs != nil {
		ids, err := json.Marshal(f.IDs)
		if err != nil {
			return nil, nil, fmt.Errorf("encode session ids: %w", err)
		}
		where = append(where, "s.id IN (SELECT value FROM json_each(?))")
		args = append(args, string(ids))
	}
	return where, args, nil
}

// sessionPage reads one keyset page after last (nil: from the start).
func (db *DB) sessionPage(ctx context.Context, where []string, args []any, last *Session, n int, skipCounts bool) ([]Session, error) {
	if last != nil {
		where = append(where[:len(where):len(where)],
			"(s.started_at < ? OR (s.started_at = ? AND s.id < ?))")
		args = append(args[:len(args):len(args)], last.Started.arg(), last.Started.arg(), last.ID)
	}
	query := "SELECT " + db.sessionColumnsWith("s", !skipCounts) + " FROM sessions s"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY s.started_at DESC, s.id DESC LIMIT ?"
	return db.querySessions(ctx, db.sql, query, append(args, n)...)
}

// Session returns the session with exactly this id, or an error wrapping ErrNotFound.
func (db *DB) Session(ctx context.Context, id string) (Session, error) {
	return db.sessionQ(ctx, db.sql, id)
}

func (db *DB) sessionQ(ctx context.Context, q querier, id string) (Session, error) {
	row := q.QueryRowContext(ctx, "SELECT "+db.sessionColumns("s")+" FROM sessions s WHERE s.id = ?", id)
	s, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return s, classify(fmt.Sprintf("read session %q", id), err, false)
	}
	return s, nil
}

// ResolveID resolves an exact id or a unique id prefix like the runtime's
// resolve_session_id. Several matches yield ErrAmbiguous, none ErrNotFound.
func (db *DB) ResolveID(ctx context.Context, prefix string) (string, error) {
	var id string
	err := db.sql.QueryRowContext(ctx, "SELECT id FROM sessions WHERE id = ?", prefix).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", classify("resolve session id", err, false)
	}
	ids, err := queryStrings(ctx, db.sql, `SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\'
		ORDER BY started_at DESC LIMIT 2`, likeEscape(prefix)+"%")
	if err != nil {
		return "", classify("resolve session id", err, false)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("session %q: %w", prefix, ErrNotFound)
	case 1:
		return ids[0], nil
	default:
		return "", fmt.Errorf("session prefix %q: %w", prefix, ErrAmbiguous)
	}
}

// SessionIDs lists every session id, newest first (started_at, then id): what a shell
// completes a session id from.
func (db *DB) SessionIDs(ctx context.Context) ([]string, error) {
	ids, err := queryStrings(ctx, db.sql, "SELECT id FROM sessions ORDER BY started_at DESC, id DESC")
	if err != nil {
		return nil, classify("list session ids", err, false)
	}
	return ids, nil
}

// Children returns the sessions whose parent_session_id is id, oldest first.
func (db *DB) Children(ctx context.Context, id string) ([]Session, error) {
	out, err := db.querySessions(ctx, db.sql, "SELECT "+db.sessionColumns("s")+
		" FROM sessions s WHERE s.parent_session_id = ? ORDER BY s.started_at, s.id", id)
	if err != nil {
		return nil, classify(fmt.Sprintf("read children of %q", id), err, false)
	}
	return out, nil
}

// Ancestors returns the parent chain of id, nearest parent first. The walk stops at a missing
// parent, on a cycle, or after 100 steps. An unknown id yields ErrNotFound.
func (db *DB) Ancestors(ctx context.Context, id string) ([]Session, error) {
	cur, err := db.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{id: true}
	var out []Session
	for len(out) < maxLineageSteps && cur.ParentID != nil && !seen[*cur.ParentID] {
		seen[*cur.ParentID] = true
		parent, err := db.Session(ctx, *cur.ParentID)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		out = append(out, parent)
		cur = parent
	}
	return out, nil
}

// idChunk bounds the ids looked up per query by eachSessionByID.
const idChunk = 900

// eachSessionByID looks the given ids up by primary key, a chunk at a time (no sort over the
// filtered set per page), then calls fn in the usual order (started_at DESC, id DESC) up to
// f.Limit. Memory is bounded by the number of ids asked for.
func (db *DB) eachSessionByID(ctx context.Context, f SessionFilter, fn func(Session) error) error {
	ids := f.IDs
	f.IDs = nil
	where, args, err := sessionWhere(f)
	if err != nil {
		return err
	}
	where = append(where, "s.id IN (SELECT value FROM json_each(?))")
	query := "SELECT " + db.sessionColumnsWith("s", !f.SkipMessageCounts) + " FROM sessions s WHERE " + strings.Join(where, " AND ")
	var all []Session
	for start := 0; start < len(ids); start += idChunk {
		chunk, err := json.Marshal(ids[start:min(start+idChunk, len(ids))])
		if err != nil {
			return fmt.Errorf("encode session ids: %w", err)
		}
		page, err := db.querySessions(ctx, db.sql, query, append(args[:len(args):len(args)], string(chunk))...)
		if err != nil {
			return classify("look up sessions", err, false)
		}
		all = append(all, page...)
	}
	sort.Slice(all, func(i, j int) bool { // ORDER BY started_at DESC, id DESC, as SQLite orders them
		if c := Compare(all[i].Started, all[j].Started); c != 0 {
			return c > 0
		}
		return all[i].ID > all[j].ID
	})
	if f.Limit > 0 && len(all) > f.Limit {
		all = all[:f.Limit]
	}
	for _, s := range all {
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}
