package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Name pools. A few names are non-ASCII so that the \uXXXX escapes (and
// surrogate pairs) of Python's ensure_ascii show up in sessions.json.
var (
	userNames = []string{"alice", "bob", "carol", "dmitri", "eve", "goro", "hana", "ivan", "julia",
		"kofi", "lena", "mateo", "nadia", "oscar", "priya", "quentin", "rosa", "sven", "tomas", "uma",
		"victor", "wen", "xavier", "yuki", "zoe", "Zoë", "Renée", "José", "Ørjan", "小林", "Łukasz"}
	groupWords = []string{"Team", "Lab / #general", "#proj", "Ops", "Research", "#infra", "Design crew",
		"Family", "Book club", "🚀 Launch", "Support", "#random", "Homelab"}
)

// digits returns n random decimal digits, the first one non-zero.
func digits(r *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteByte(byte('1' + r.IntN(9)))
	for i := 1; i < n; i++ {
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	return b.String()
}

// capitalize upper-cases the first ASCII letter, like a Telegram first name.
func capitalize(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-32) + s[1:]
	}
	return s
}

// newChat draws one conversation; n numbers group names.
func newChat(r *rand.Rand, n int) *chat {
	user := userNames[r.IntN(len(userNames))]
	group := fmt.Sprintf("%s-%d", groupWords[r.IntN(len(groupWords))], n)
	switch p := r.IntN(100); {
	case p < 40:
		return telegramChat(r, user, group, n)
	case p < 75:
		return discordChat(r, user, group, n)
	default:
		return slackChat(r, user, group)
	}
}

// telegramChat draws a Telegram dm, per-user group or forum topic.
func telegramChat(r *rand.Rand, user, group string, n int) *chat {
	c := &chat{Platform: "telegram", UserID: digits(r, 9+r.IntN(2)), UserName: capitalize(user)}
	switch t := r.IntN(100); {
	case t < 50:
		c.ChatType, c.ChatID, c.ChatName = "dm", c.UserID, c.UserName
		c.Key = "agent:main:telegram:dm:" + c.ChatID
	case t < 85:
		c.ChatType, c.ChatID, c.ChatName = "group", "-100"+digits(r, 10), group
		c.Key = "agent:main:telegram:group:" + c.ChatID + ":" + c.UserID
	default:
		c.ChatType, c.ChatID, c.ChatName = "forum", "-100"+digits(r, 10), fmt.Sprintf("Forum %d", n)
		c.ThreadID = fmt.Sprint(2 + r.IntN(400))
		c.Key = "agent:main:telegram:forum:" + c.ChatID + ":" + c.ThreadID
	}
	return c
}

// discordChat draws a Discord dm, per-user channel or thread.
func discordChat(r *rand.Rand, user, group string, n int) *chat {
	c := &chat{Platform: "discord", UserID: digits(r, 18), UserName: user}
	switch t := r.IntN(100); {
	case t < 40:
		c.ChatType, c.ChatID, c.ChatName = "dm", digits(r, 18), capitalize(user)
		c.Key = "agent:main:discord:dm:" + c.ChatID
	case t < 80:
		c.ChatType, c.ChatID, c.ChatName, c.GuildID = "group", digits(r, 18), group, digits(r, 18)
		c.Key = "agent:main:discord:group:" + c.ChatID + ":" + c.UserID
	default:
		c.ChatType, c.ChatID, c.GuildID = "thread", digits(r, 18), digits(r, 18)
		c.ThreadID, c.ChatName = c.ChatID, fmt.Sprintf("thread %d", n)
		c.Key = "agent:main:discord:thread:" + c.ChatID + ":" + c.ThreadID
	}
	return c
}

// slackChat draws a Slack dm or a channel thread.
func slackChat(r *rand.Rand, user, group string) *chat {
	c := &chat{Platform: "slack", UserID: "U0" + digits(r, 8), UserName: user}
	if r.IntN(100) < 55 {
		c.ChatType, c.ChatID, c.ChatName = "dm", "D0"+digits(r, 8), capitalize(user)
		c.Key = "agent:main:slack:dm:" + c.ChatID
		return c
	}
	c.ChatType, c.ChatID, c.ChatName = "group", "C0"+digits(r, 8), group
	c.ThreadID = fmt.Sprintf("17%s.%s", digits(r, 8), digits(r, 6))
	c.Key = "agent:main:slack:group:" + c.ChatID + ":" + c.ThreadID
	return c
}

// origin returns the SessionSource.to_dict() of c for generation g.
func (c *chat) origin(g generation) []field {
	o := []field{
		{"platform", c.Platform}, {"chat_id", c.ChatID}, {"chat_name", c.ChatName},
		{"chat_type", c.ChatType}, {"user_id", c.UserID}, {"user_name", c.UserName},
		{"thread_id", nullable(c.ThreadID)}, {"chat_topic", nil},
	}
	if c.GuildID != "" && g.Guild == 2 {
		o = append(o, field{"scope_id", c.GuildID})
	}
	if c.GuildID != "" && g.Guild >= 1 {
		o = append(o, field{"guild_id", c.GuildID})
	}
	return o
}

// nullable maps "" to JSON null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// toFields returns the SessionEntry.to_dict() of e for generation g, in its
// field order.
func (e *entry) toFields(g generation) []field {
	marked := any(nil)
	if e.Marked != 0 {
		marked = isoNaive(e.Marked)
	}
	f := []field{
		{"session_key", e.Chat.Key}, {"session_id", e.SessionID},
		{"created_at", isoNaive(e.Created)}, {"updated_at", isoNaive(e.Updated)},
		{"display_name", e.Chat.ChatName}, {"platform", e.Chat.Platform}, {"chat_type", e.Chat.ChatType},
	}
	if g.EntryLevel >= 4 {
		f = append(f, field{"metadata", []field{}})
	}
	f = append(f,
		field{"input_tokens", 0}, field{"output_tokens", 0}, field{"cache_read_tokens", 0}, field{"cache_write_tokens", 0},
		field{"total_tokens", 0}, field{"last_prompt_tokens", e.LastPromptTokens},
		field{"estimated_cost_usd", pyFloat("0.0")}, field{"cost_status", "unknown"},
		field{g.FlushedKey, false}, field{"suspended", e.Suspended}, field{"resume_pending", e.ResumePending},
		field{"resume_reason", nullable(e.ResumeReason)}, field{"last_resume_marked_at", marked})
	if g.EntryLevel >= 4 {
		f = append(f, field{"active_turn_token", nil}, field{"active_turn_started_at", nil})
	}
	if g.EntryLevel >= 1 {
		f = append(f, field{"is_fresh_reset", e.IsFreshReset})
	}
	if g.EntryLevel >= 2 {
		f = append(f, field{"was_auto_reset", e.WasAutoReset}, field{"auto_reset_reason", nullable(e.AutoResetReason)},
			field{"reset_had_activity", e.ResetHadActivity})
	}
	if g.EntryLevel >= 4 {
		f = append(f, field{"prev_session_id", nil})
	}
	if g.EntryLevel >= 3 && len(e.ModelOverride) > 0 {
		f = append(f, field{"model_override", e.ModelOverride})
	}
	f = append(f, field{"origin", e.Chat.origin(g)})
	return append(f, e.Unknown...)
}
