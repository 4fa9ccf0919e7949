package statedb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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
	// Since and Until bound started_at (Unix seconds): Since <= started_at < Until. A bound
	// given selects only sessions whose started_at is a number.
	Since, Until *float64
	Title        string // title contains this, case-insensitive for ASCII (SQLite's LIKE)
	MinMessages  int    // at least this many messages rows (0: any)
	Order        SessionOrder
	Reverse      bool // ascending instead of the order's descending default
	Limit        int  // at most this many (0: no limit)
	// SkipMessageCounts leaves Session.MessageCount at 0 instead of counting messages rows.
	SkipMessageCounts bool
}

// SessionOrder is the order EachSession walks sessions in: descending (newest, most
// recently ended, most messages, highest id first) unless SessionFilter.Reverse; ties are
// broken by id in the same direction. SQLite's comparison decides (NULL before numbers
// before TEXT before BLOB), so an open session comes last by OrderEnded.
type SessionOrder int

// The session orders.
const (
	OrderStarted  SessionOrder = iota // started_at
	OrderEnded                        // ended_at
	OrderMessages                     // the number of messages rows
	OrderID                           // id
)

// sessionColumns returns the select list for a Session, with NULL for absent columns.
func (db *DB) sessionColumns(alias string) string {
	return db.sessionColumnsWith(alias, true)
}

// sessionColumnsWith is sessionColumns, optionally without the message count subquery. The
// numeric columns are selected as expressions (+col), so the driver reports the stored class.
func (db *DB) sessionColumnsWith(alias string, countMessages bool) string {
	count := "0"
	if countMessages {
		count = messageCount(alias)
	}
	col := func(name string) string { return db.sessionCol(alias, name) }
	return strings.Join([]string{
		alias + ".id", "COALESCE(" + alias + ".source, '')", col("user_id"), col("parent_session_id"),
		col("end_reason"), col("title"), col("session_key"), col("model_config"),
		"+" + alias + ".started_at", "+" + col("ended_at"), "+" + col("api_call_count"), count,
	}, ", ")
}

// sessionCol is alias.name, or NULL where the schema has no such sessions column.
func (db *DB) sessionCol(alias, name string) string {
	if db.schema.SessionColumns[name] {
		return alias + "." + name
	}
	return "NULL"
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

// EachSession calls fn for every session matching f, in f.Order. The orders an index serves
// (started_at, id) are read in keyset pages of 1000; the others (ended_at, message count)
// and an id list rank the ids first and read the rows a chunk at a time in that order. Either
// way memory stays flat on large databases (bar the ranked ids), and fn runs outside any open
// query and may itself query db. An error from fn stops the walk and is returned unchanged.
func (db *DB) EachSession(ctx context.Context, f SessionFilter, fn func(Session) error) error {
	where, args, err := db.sessionWhere(f)
	if err != nil {
		return err
	}
	if f.IDs != nil || (f.Order != OrderStarted && f.Order != OrderID) {
		return db.eachRanked(ctx, f, where, args, fn)
	}
	remaining := f.Limit
	var last *Session
	for {
		page, err := db.sessionPage(ctx, f, where, args, last, pageSize(remaining))
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

// CountSessions is the number of sessions f selects, without its limit.
func (db *DB) CountSessions(ctx context.Context, f SessionFilter) (int, error) {
	where, args, err := db.sessionWhere(f)
	if err != nil {
		return 0, err
	}
	var n int
	if err := db.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions s"+whereClause(where), args...).Scan(&n); err != nil {
		return 0, classify("count sessions", err, false)
	}
	return n, nil
}

func pageSize(remaining int) int {
	if remaining > 0 && remaining < sessionPageSize {
		return remaining
	}
	return sessionPageSize
}

// sessionWhere turns f into WHERE conditions (joined by AND) and their arguments.
func (db *DB) sessionWhere(f SessionFilter) ([]string, []any, error) {
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where, args = append(where, cond), append(args, a...)
	}
	if f.Source != "" {
		add("s.source = ?", f.Source)
	}
	if f.Open && !f.Ended {
		add(db.sessionCol("s", "ended_at") + " IS NULL")
	}
	if f.Ended && !f.Open {
		add(db.sessionCol("s", "ended_at") + " IS NOT NULL")
	}
	if f.Since != nil {
		add("s.started_at >= ? AND typeof(s.started_at) IN ('integer', 'real')", *f.Since)
	}
	if f.Until != nil {
		add("s.started_at < ? AND typeof(s.started_at) IN ('integer', 'real')", *f.Until)
	}
	if f.Title != "" {
		add(db.sessionCol("s", "title")+` LIKE ? ESCAPE '\'`, "%"+likeEscape(f.Title)+"%")
	}
	if f.MinMessages > 0 {
		add(messageCount("s")+" >= ?", f.MinMessages)
	}
	if f.IDs != nil {
		ids, err := json.Marshal(f.IDs)
		if err != nil {
			return nil, nil, fmt.Errorf("encode session ids: %w", err)
		}
		add("s.id IN (SELECT value FROM json_each(?))", string(ids))
	}
	return where, args, nil
}

// whereClause is " WHERE a AND b …", or "" for no conditions.
func whereClause(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(where, " AND ")
}

// messageCount is the number of messages rows of the session aliased alias.
func messageCount(alias string) string {
	return "(SELECT COUNT(*) FROM messages mc WHERE mc.session_id = " + alias + ".id)"
}

// orderBy is f's ORDER BY list.
func (db *DB) orderBy(f SessionFilter) string {
	dir := " DESC"
	if f.Reverse {
		dir = " ASC"
	}
	var key string
	switch f.Order {
	case OrderEnded:
		key = db.sessionCol("s", "ended_at") + dir + ", "
	case OrderMessages:
		key = messageCount("s") + dir + ", "
	case OrderStarted:
		key = "s.started_at" + dir + ", "
	}
	return key + "s.id" + dir
}

// sessionPage reads one keyset page after last (nil: from the start) in f.Order, which is
// OrderStarted or OrderID.
func (db *DB) sessionPage(ctx context.Context, f SessionFilter, where []string, args []any, last *Session, n int) ([]Session, error) {
	query, args := db.pageQuery(f, where, args, last, n)
	return db.querySessions(ctx, db.sql, query, args...)
}

// pageQuery is sessionPage's query. The condition on started_at comes first and alone, so
// SQLite seeks the started_at index instead of scanning it from the top on every page.
func (db *DB) pageQuery(f SessionFilter, where []string, args []any, last *Session, n int) (string, []any) {
	if last != nil {
		lt, le := "<", "<="
		if f.Reverse {
			lt, le = ">", ">="
		}
		where, args = where[:len(where):len(where)], args[:len(args):len(args)]
		if f.Order == OrderID {
			where, args = append(where, "s.id "+lt+" ?"), append(args, last.ID)
		} else {
			where = append(where, "s.started_at "+le+" ?", "(s.started_at "+lt+" ? OR s.id "+lt+" ?)")
			args = append(args, last.Started.arg(), last.Started.arg(), last.ID)
		}
	}
	return "SELECT " + db.sessionColumnsWith("s", !f.SkipMessageCounts) + " FROM sessions s" + whereClause(where) +
		" ORDER BY " + db.orderBy(f) + " LIMIT ?", append(args, n)
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

// eachRanked ranks the ids f selects in f.Order (up to f.Limit), then reads the rows by
// primary key a chunk at a time and calls fn in that order. A session deleted between the two
// reads is left out.
func (db *DB) eachRanked(ctx context.Context, f SessionFilter, where []string, args []any, fn func(Session) error) error {
	query := "SELECT s.id FROM sessions s" + whereClause(where) + " ORDER BY " + db.orderBy(f)
	if f.Limit > 0 {
		query, args = query+" LIMIT ?", append(args[:len(args):len(args)], f.Limit)
	}
	ids, err := queryStrings(ctx, db.sql, query, args...)
	if err != nil {
		return classify("rank sessions", err, false)
	}
	return db.eachByID(ctx, ids, !f.SkipMessageCounts, fn)
}

// EachSessionByID calls fn for the session of each id of ids that has a row, once each, in
// the order of ids (their first appearance), without message counts: the rows a routing
// index points at, read without ranking them first (issue 30: the ranking query was a third
// of status' row reads on a 20,000-entry home).
func (db *DB) EachSessionByID(ctx context.Context, ids []string, fn func(Session) error) error {
	seen := make(map[string]bool, len(ids))
	unique := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			unique = append(unique, id)
		}
	}
	return db.eachByID(ctx, unique, false, fn)
}

// eachByID calls fn for the session of each id of ids that has a row, in the order of ids,
// looking them up maxInList at a time.
func (db *DB) eachByID(ctx context.Context, ids []string, counts bool, fn func(Session) error) error {
	lookup := "SELECT " + db.sessionColumnsWith("s", counts) + " FROM sessions s WHERE s.id IN (SELECT value FROM json_each(?))"
	for _, chunk := range chunks(ids) {
		list, err := json.Marshal(chunk)
		if err != nil {
			return fmt.Errorf("encode session ids: %w", err)
		}
		page, err := db.querySessions(ctx, db.sql, lookup, string(list))
		if err != nil {
			return classify("look up sessions", err, false)
		}
		byID := make(map[string]Session, len(page))
		for _, s := range page {
			byID[s.ID] = s
		}
		for _, id := range chunk {
			if s, ok := byID[id]; ok {
				if err := fn(s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
