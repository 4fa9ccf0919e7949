package main

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// batchRows is the number of rows written per transaction.
const batchRows = 50_000

// dbWriter owns the single connection to the new state.db and commits every
// batchRows rows.
type dbWriter struct {
	ctx  context.Context
	db   *sql.DB
	conn *sql.Conn
	rows int
	cols map[string]map[string]bool // table -> existing columns
	// journal is the journal mode finish leaves the file in ("wal" or
	// "delete"); the rows are written in WAL mode either way.
	journal string
}

// createDB creates path with the generation's schema and the generation
// settings (WAL, synchronous=OFF, large cache), and starts a transaction;
// finish leaves the file in journal mode journal.
func createDB(ctx context.Context, path, ddl string, version int, journal string) (*dbWriter, error) {
	u := url.URL{Scheme: "file", Path: path}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	w := &dbWriter{ctx: ctx, db: db, conn: conn, cols: map[string]map[string]bool{}, journal: journal}
	for _, q := range []string{"PRAGMA journal_mode=WAL", "PRAGMA synchronous=OFF", "PRAGMA cache_size=-262144",
		"PRAGMA temp_store=MEMORY", "PRAGMA foreign_keys=OFF", ddl,
		fmt.Sprintf("INSERT INTO schema_version (version) VALUES (%d)", version), "BEGIN"} {
		if err := w.exec(q); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

// exec runs one statement (or a script) on the connection.
func (w *dbWriter) exec(q string, args ...any) error {
	if _, err := w.conn.ExecContext(w.ctx, q, args...); err != nil {
		return fmt.Errorf("%.60s: %w", q, err)
	}
	return nil
}

// tick counts one written row and commits after every batchRows rows.
func (w *dbWriter) tick() error {
	w.rows++
	if w.rows%batchRows != 0 {
		return nil
	}
	if err := w.exec("COMMIT"); err != nil {
		return err
	}
	return w.exec("BEGIN")
}

// finish commits, checkpoints the WAL into the main file, switches a
// rollback-journal generation's file to DELETE mode (file header bytes
// 18/19 = 1, as the runtime's own file) and closes.
func (w *dbWriter) finish() error {
	if err := w.exec("COMMIT"); err != nil {
		return err
	}
	if err := w.exec("PRAGMA synchronous=FULL"); err != nil {
		return err
	}
	if err := w.exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		return err
	}
	if w.journal != "wal" {
		if err := w.exec("PRAGMA journal_mode=" + w.journal); err != nil {
			return err
		}
	}
	return w.close()
}

// close releases the connection and the pool.
func (w *dbWriter) close() error {
	err := w.conn.Close()
	if err2 := w.db.Close(); err == nil {
		err = err2
	}
	return err
}

// columns returns the columns of table (empty when the table is missing).
func (w *dbWriter) columns(table string) (map[string]bool, error) {
	if c, ok := w.cols[table]; ok {
		return c, nil
	}
	rows, err := w.conn.QueryContext(w.ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	c := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		c[name] = true
	}
	w.cols[table] = c
	return c, rows.Err()
}

// column is a candidate column of an insert and how to get its value.
type column[T any] struct {
	name string
	get  func(T) any
}

// inserter is a prepared INSERT over the candidate columns the table has.
type inserter[T any] struct {
	w    *dbWriter
	stmt *sql.Stmt
	gets []func(T) any
	args []any
}

// newInserter prepares INSERT INTO table for the columns that exist there.
// It returns nil (and no error) when the table does not exist.
func newInserter[T any](w *dbWriter, table string, cands []column[T]) (*inserter[T], error) {
	have, err := w.columns(table)
	if err != nil || len(have) == 0 {
		return nil, err
	}
	var names []string
	ins := &inserter[T]{w: w}
	for _, c := range cands {
		if have[c.name] {
			names = append(names, c.name)
			ins.gets = append(ins.gets, c.get)
		}
	}
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(names, ", "),
		strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", "))
	if ins.stmt, err = w.conn.PrepareContext(w.ctx, q); err != nil {
		return nil, err
	}
	ins.args = make([]any, len(names))
	return ins, nil
}

// insert writes one row.
func (in *inserter[T]) insert(v T) error {
	for i, get := range in.gets {
		in.args[i] = get(v)
	}
	if _, err := in.stmt.ExecContext(in.w.ctx, in.args...); err != nil {
		return err
	}
	return in.w.tick()
}

// nullStr maps "" to NULL.
func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullTime maps 0 to NULL, else REAL epoch seconds.
func nullTime(us int64) any {
	if us == 0 {
		return nil
	}
	return epoch(us)
}

// sessionColumns are the sessions columns the generator fills, in the
// runtime's order; generations without a column simply skip it.
func sessionColumns(g generation) []column[*session] {
	chatStr := func(f func(c *chat) string) func(*session) any {
		return func(s *session) any {
			if s.Chat == nil {
				return nil
			}
			return nullStr(f(s.Chat))
		}
	}
	return []column[*session]{
		{"id", func(s *session) any { return s.ID }},
		{"source", func(s *session) any { return s.Source }},
		{"user_id", func(s *session) any { return nullStr(s.UserID) }},
		{"session_key", chatStr(func(c *chat) string { return c.Key })},
		{"chat_id", chatStr(func(c *chat) string { return c.ChatID })},
		{"chat_type", chatStr(func(c *chat) string { return c.ChatType })},
		{"thread_id", chatStr(func(c *chat) string { return c.ThreadID })},
		{"display_name", func(s *session) any {
			if !s.WithOrigin {
				return nil
			}
			return s.Chat.ChatName
		}},
		{"origin_json", func(s *session) any {
			if !s.WithOrigin {
				return nil
			}
			return compactJSON(s.Chat.origin(g))
		}},
		{"expiry_finalized", func(*session) any { return 0 }},
		{"model", func(s *session) any { return nullStr(s.Model) }},
		{"model_config", func(s *session) any { return nullStr(s.ModelConfig) }},
		{"system_prompt_hash", func(s *session) any { return nullStr(s.PromptHash) }},
		{"parent_session_id", func(s *session) any { return nullStr(s.Parent) }},
		{"started_at", func(s *session) any { return epoch(s.Started) }},
		{"ended_at", func(s *session) any { return nullTime(s.Ended) }},
		{"end_reason", func(s *session) any { return nullStr(s.EndReason) }},
		{"message_count", func(s *session) any { return s.MsgCount }},
		{"tool_call_count", func(s *session) any { return s.ToolCalls }},
		{"input_tokens", func(s *session) any { return s.InTokens }},
		{"output_tokens", func(s *session) any { return s.OutTokens }},
		{"cwd", func(s *session) any { return nullStr(s.Cwd) }},
		{"billing_provider", func(s *session) any { return usageStr(s, "openrouter") }},
		{"estimated_cost_usd", func(s *session) any { return cost(s) }},
		{"cost_status", func(s *session) any { return usageStr(s, "estimated") }},
		{"title", func(s *session) any { return nullStr(s.Title) }},
		{"title_source", func(s *session) any { // as on the r0817 fixture's titled rows
			if s.Title == "" {
				return nil
			}
			return "user"
		}},
		{"last_activity_at", func(s *session) any { return nullTime(s.LastActivity) }},
		{"api_call_count", func(s *session) any { return s.APICalls }},
	}
}

// usageStr returns v for a session that made API calls, else NULL.
func usageStr(s *session, v string) any {
	if s.InTokens == 0 {
		return nil
	}
	return v
}

// cost is a plausible estimated cost for the session's tokens, or NULL.
func cost(s *session) any {
	if s.InTokens == 0 {
		return nil
	}
	return float64(s.InTokens)*3e-6 + float64(s.OutTokens)*15e-6
}

// writeSessions inserts the system_prompts rows (v25+) and every session
// row, oldest first.
func (w *dbWriter) writeSessions(p *plan) error {
	if err := w.writePrompts(p); err != nil {
		return err
	}
	ins, err := newInserter(w, "sessions", sessionColumns(p.cfg.Gen))
	if err != nil {
		return err
	}
	defer ins.stmt.Close()
	order := slices.Clone(p.sessions)
	slices.SortStableFunc(order, func(a, b *session) int { return cmp.Compare(a.Started, b.Started) })
	for _, s := range order {
		if err := ins.insert(s); err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
	}
	return nil
}

// writePrompts inserts the system_prompts rows of a v26 plan.
func (w *dbWriter) writePrompts(p *plan) error {
	return insertAll(w, p, "system_prompts", p.prompts, []column[prompt]{
		{"hash", func(pr prompt) any { return pr.Hash }},
		{"prompt", func(pr prompt) any { return pr.Text }},
	})
}

// writeExtras writes the remaining tables the generation has: state_meta,
// compression_locks, session_model_usage, session_turn_leases,
// gateway_hygiene_state and (db-primary) gateway_routing.
func (w *dbWriter) writeExtras(p *plan, scope string) error {
	if p.cfg.Gen.V26 { // the external-content FTS layout's stamp, as on the fixture
		if err := w.exec("INSERT INTO state_meta (key, value) VALUES ('fts_storage_version', '1')"); err != nil {
			return err
		}
	}
	if have, _ := w.columns("state_meta"); len(have) > 0 {
		v := strconv.FormatFloat(epoch(p.cfg.Now-30*hour), 'f', -1, 64)
		if err := w.exec("INSERT INTO state_meta (key, value) VALUES ('last_auto_prune', ?)", v); err != nil {
			return err
		}
	}
	if err := w.writeLocks(p); err != nil {
		return err
	}
	if err := w.writeUsage(p); err != nil {
		return err
	}
	if err := w.writeLeases(p); err != nil {
		return err
	}
	if err := w.writeHygiene(p); err != nil {
		return err
	}
	return w.writeRouting(p, scope)
}

// writeLeases inserts the session_turn_leases rows of a v26 plan.
func (w *dbWriter) writeLeases(p *plan) error {
	return insertAll(w, p, "session_turn_leases", p.leases, []column[lock]{
		{"conversation_id", func(l lock) any { return l.SessionID }},
		{"holder", func(l lock) any { return l.Holder }},
		{"acquired_at", func(l lock) any { return epoch(l.Acquired) }},
		{"expires_at", func(l lock) any { return epoch(l.ExpiresTime) }},
	})
}

// writeHygiene inserts the gateway_hygiene_state rows of a v26 plan.
func (w *dbWriter) writeHygiene(p *plan) error {
	return insertAll(w, p, "gateway_hygiene_state", p.hygiene, []column[field]{
		{"session_key", func(f field) any { return f.Key }},
		{"failure_streak", func(f field) any { return f.Val }},
	})
}

// insertAll inserts rows into table; rows for a table the generation's
// schema lacks are an error.
func insertAll[T any](w *dbWriter, p *plan, table string, rows []T, cols []column[T]) error {
	if len(rows) == 0 {
		return nil
	}
	ins, err := newInserter(w, table, cols)
	if err != nil {
		return err
	}
	if ins == nil {
		return fmt.Errorf("generation %s has %s rows but its schema has no such table", p.cfg.Gen.Short, table)
	}
	defer ins.stmt.Close()
	for _, r := range rows {
		if err := ins.insert(r); err != nil {
			return err
		}
	}
	return nil
}

// writeLocks inserts the compression_locks rows (v14+).
func (w *dbWriter) writeLocks(p *plan) error {
	ins, err := newInserter(w, "compression_locks", []column[lock]{
		{"session_id", func(l lock) any { return l.SessionID }},
		{"holder", func(l lock) any { return l.Holder }},
		{"acquired_at", func(l lock) any { return epoch(l.Acquired) }},
		{"expires_at", func(l lock) any { return epoch(l.ExpiresTime) }},
	})
	if err != nil || ins == nil {
		return err
	}
	defer ins.stmt.Close()
	for _, l := range p.locks {
		if err := ins.insert(l); err != nil {
			return err
		}
	}
	return nil
}

// writeUsage seeds one session_model_usage row per session with tokens
// (what the v20 migration does).
func (w *dbWriter) writeUsage(p *plan) error {
	ins, err := newInserter(w, "session_model_usage", []column[*session]{
		{"session_id", func(s *session) any { return s.ID }},
		{"model", func(s *session) any { return s.Model }},
		{"billing_provider", func(*session) any { return "openrouter" }},
		{"api_call_count", func(s *session) any { return s.APICalls }},
		{"input_tokens", func(s *session) any { return s.InTokens }},
		{"output_tokens", func(s *session) any { return s.OutTokens }},
		{"estimated_cost_usd", func(s *session) any { return cost(s) }},
		{"cost_status", func(*session) any { return "estimated" }},
		{"first_seen", func(s *session) any { return epoch(s.Started) }},
		{"last_seen", func(s *session) any { return epoch(max(s.Started, s.Ended, s.MsgEnd)) }},
	})
	if err != nil || ins == nil {
		return err
	}
	defer ins.stmt.Close()
	for _, s := range p.sessions {
		if s.InTokens > 0 && s.Model != "" {
			if err := ins.insert(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeRouting inserts the gateway_routing rows (db-primary generations):
// entry_json is json.dumps of the entry, scope the resolved sessions dir.
func (w *dbWriter) writeRouting(p *plan, scope string) error {
	if !p.cfg.Gen.DBPrimary {
		return nil
	}
	saved := epoch(p.cfg.Now - 30*second) // the runtime restamps every row on each save
	ins, err := newInserter(w, "gateway_routing", []column[*entry]{
		{"scope", func(*entry) any { return scope }},
		{"session_key", func(e *entry) any { return e.Chat.Key }},
		{"entry_json", func(e *entry) any { return compactJSON(e.toFields(p.cfg.Gen)) }},
		{"updated_at", func(*entry) any { return saved }},
	})
	if err != nil {
		return err
	}
	if ins == nil {
		return fmt.Errorf("generation %s is db-primary but its schema has no gateway_routing", p.cfg.Gen.Short)
	}
	defer ins.stmt.Close()
	for _, e := range p.entries {
		if err := ins.insert(e); err != nil {
			return err
		}
	}
	return nil
}
