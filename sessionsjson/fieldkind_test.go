package sessionsjson

import (
	"errors"
	"testing"
)

// TestParseFieldValue: each kind takes its own JSON, strings take bare text, null only where
// the runtime writes it, and fields the generation does not read are refused.
func TestParseFieldValue(t *testing.T) {
	r0703, r0817 := RulesFor(GenR0703), RulesFor(GenR0817)
	cases := []struct {
		rules       Rules
		field, text string
		want        string
		err         error
	}{
		{r0703, "suspended", "true", "true", nil},
		{r0703, "suspended", "yes", "", ErrInvalid},
		{r0703, "last_prompt_tokens", "12", "12", nil},
		{r0703, "last_prompt_tokens", "1.5", "", ErrInvalid},
		{r0703, "estimated_cost_usd", "1", "1.0", nil},
		{r0703, "resume_reason", "restart_timeout", `"restart_timeout"`, nil},
		{r0703, "resume_reason", "null", "null", nil},
		{r0703, "display_name", `"null"`, `"null"`, nil},
		{r0703, "session_id", "null", `"null"`, nil},
		{r0703, "chat_type", "", `""`, nil},
		{r0703, "updated_at", "2026-07-16T09:30:00.5", `"2026-07-16T09:30:00.5"`, nil},
		{r0703, "updated_at", "2026-07-16T09:30:00+02:00", "", ErrInvalid},
		{r0703, "updated_at", "null", "", ErrInvalid},
		{r0703, "last_resume_marked_at", "null", "null", nil},
		{r0703, "origin", `{"platform": "slack", "chat_id": "C1"}`, `{"platform": "slack", "chat_id": "C1"}`, nil},
		{r0703, "origin", "slack", "", ErrInvalid},
		{r0703, "metadata", "{}", "", ErrUnknownField},
		{r0817, "metadata", "{}", "{}", nil},
		{r0817, "metadata", "null", "", ErrInvalid},
		{r0703, "colour", "blue", "", ErrUnknownField},
	}
	for _, c := range cases {
		got, err := c.rules.ParseFieldValue(c.field, c.text)
		if !errors.Is(err, c.err) || (c.err == nil && string(got) != c.want) {
			t.Errorf("ParseFieldValue(%s=%s) = %s, %v; want %s, %v", c.field, c.text, got, err, c.want, c.err)
		}
	}
}
