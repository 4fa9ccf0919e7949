package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Times are int64 Unix microseconds throughout, so that REAL columns and the
// naive ISO strings of sessions.json describe exactly the same instant.
const (
	second = int64(1_000_000)
	minute = 60 * second
	hour   = 60 * minute
	day    = 24 * hour
)

// chat is one messaging conversation (a SessionSource) and its session key.
type chat struct {
	Key, Platform, ChatType, ChatID, ChatName string
	UserID, UserName, ThreadID, GuildID       string
}

// entry is one sessions.json / gateway_routing entry.
type entry struct {
	Chat                     *chat
	SessionID                string
	Created, Updated, Marked int64 // Marked 0 = null
	Suspended, ResumePending bool
	ResumeReason             string // "" = null
	LastPromptTokens         int
	IsFreshReset             bool
	WasAutoReset             bool
	AutoResetReason          string // "" = null
	ResetHadActivity         bool
	ModelOverride            []field
	Unknown                  []field
	Role                     string
}

// session is one row of the sessions table.
type session struct {
	ID, Source, UserID, Model, ModelConfig, Parent string
	Chat                                           *chat // gateway peer columns (v17+), nil for none
	WithOrigin                                     bool  // write display_name/origin_json (v18+)
	Started, Ended                                 int64 // Ended 0 = open
	EndReason, Title, Cwd                          string
	APICalls, InTokens, OutTokens                  int
	NoAPI                                          bool // keep api_call_count 0 whatever the messages
	MsgMode                                        msgMode
	MsgEnd                                         int64 // latest message time, 0 = derive
	MsgCount, ToolCalls                            int
	MsgOffset                                      int    // first index into plan.roles
	PromptHash                                     string // system_prompts.hash (v25+), "" = NULL
	LastActivity                                   int64  // last_activity_at (v24+), 0 = NULL
}

// msgMode says how many messages a session may receive.
type msgMode uint8

const (
	msgsAny      msgMode = iota // weighted share, may be 0
	msgsNone                    // never any messages
	msgsRequired                // at least one
)

// lock is one compression_locks or session_turn_leases row (the same
// four columns; SessionID is a lease's conversation_id).
type lock struct {
	SessionID, Holder     string
	Acquired, ExpiresTime int64
}

// prompt is one system_prompts row: the lower-case hex SHA-256 of the
// prompt's UTF-8 text, and the text.
type prompt struct {
	Hash, Text string
}

// sessionFile is a file to create under sessions/.
type sessionFile struct {
	Name, Body string
}

// epoch converts microseconds to the REAL epoch seconds the runtime stores.
func epoch(us int64) float64 { return float64(us) / 1e6 }

// isoNaive formats us like Python's naive datetime.isoformat() in UTC: the
// fraction is omitted when the microseconds are zero.
func isoNaive(us int64) string {
	t := time.UnixMicro(us).UTC()
	s := t.Format("2006-01-02T15:04:05")
	if frac := t.Nanosecond() / 1000; frac != 0 {
		s += fmt.Sprintf(".%06d", frac)
	}
	return s
}

// idStamp is the %Y%m%d_%H%M%S part of a session id.
func idStamp(us int64) string {
	return time.UnixMicro(us).UTC().Format("20060102_150405")
}

// parseEpochMicros parses Unix seconds with an optional fraction ("1784194200.25")
// exactly, without going through a float.
func parseEpochMicros(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 6 {
		return 0, fmt.Errorf("%q: more than 6 fraction digits", s)
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	var us int64
	if frac != "" {
		if us, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil {
			return 0, fmt.Errorf("%q: %w", s, err)
		}
	}
	return sec*second + us, nil
}
