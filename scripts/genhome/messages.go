package main

import (
	"fmt"
	"strconv"
)

// msgRow is one messages row about to be inserted.
type msgRow struct {
	SessionID, Role, Content    string
	ToolCallID, ToolCalls, Tool string
	Finish, PlatformMsgID       string
	TS                          int64
}

// messageColumns are the messages columns the generator fills (the ones
// append_message writes); generations without a column skip it.
var messageColumns = []column[*msgRow]{
	{"session_id", func(m *msgRow) any { return m.SessionID }},
	{"role", func(m *msgRow) any { return m.Role }},
	{"content", func(m *msgRow) any { return m.Content }},
	{"tool_call_id", func(m *msgRow) any { return nullStr(m.ToolCallID) }},
	{"tool_calls", func(m *msgRow) any { return nullStr(m.ToolCalls) }},
	{"tool_name", func(m *msgRow) any { return nullStr(m.Tool) }},
	{"timestamp", func(m *msgRow) any { return epoch(m.TS) }},
	{"finish_reason", func(m *msgRow) any { return nullStr(m.Finish) }},
	{"platform_message_id", func(m *msgRow) any { return nullStr(m.PlatformMsgID) }},
	{"observed", func(*msgRow) any { return 0 }},
	{"active", func(*msgRow) any { return 1 }},
}

// writeMessages inserts every message in time order with plain INSERTs, so
// the schema's FTS triggers index each one as the runtime's would.
func (w *dbWriter) writeMessages(p *plan, progress func(done, total int)) error {
	ins, err := newInserter(w, "messages", messageColumns)
	if err != nil {
		return err
	}
	defer ins.stmt.Close()
	refs := p.timeline()
	text := newTextGen(p.cfg.Seed, p.cfg.TextScale)
	pending := make(map[int32][][3]string) // open tool calls per session
	var row msgRow
	for n, ref := range refs {
		s := p.sessions[ref.Sess]
		role := p.roles[s.MsgOffset+int(ref.Seq)]
		row = msgRow{SessionID: s.ID, TS: ref.TS}
		fillMessage(&row, role, text, pending, ref.Sess)
		if role == roleUser && s.Chat != nil {
			row.PlatformMsgID = strconv.Itoa(1000 + int(ref.Seq))
		}
		if err := ins.insert(&row); err != nil {
			return fmt.Errorf("message %d of %s: %w", ref.Seq, s.ID, err)
		}
		if progress != nil && (n+1)%200_000 == 0 {
			progress(n+1, len(refs))
		}
	}
	return nil
}

// fillMessage sets role, content and the tool columns of one message.
func fillMessage(m *msgRow, role byte, t *textGen, pending map[int32][][3]string, sess int32) {
	switch role {
	case roleUser:
		m.Role, m.Content = "user", t.user()
	case roleAssistant:
		m.Role, m.Content, m.Finish = "assistant", t.assistant(), "stop"
	case roleCall1, roleCall2:
		calls := make([][3]string, 1, 2)
		calls[0][0], calls[0][1], calls[0][2] = t.toolCall()
		if role == roleCall2 {
			var c [3]string
			c[0], c[1], c[2] = t.toolCall()
			calls = append(calls, c)
		}
		m.Role, m.Finish = "assistant", "tool_calls"
		m.Content = t.sentences(t.length(10, 60))
		m.ToolCalls = toolCallsJSON(calls)
		pending[sess] = calls
	case roleTool:
		m.Role, m.Content = "tool", t.toolResult()
		if calls := pending[sess]; len(calls) > 0 {
			m.ToolCallID, m.Tool = calls[0][0], calls[0][1]
			if len(calls) == 1 {
				delete(pending, sess)
			} else {
				pending[sess] = calls[1:]
			}
		}
	}
}
