package check

import (
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/home"
)

// EntryFlags is the FLAGS cell of an entry in entries list: S suspended, R resume_pending
// (with its reason), stale, the runtime's skip, legacy.
func EntryFlags(h *home.Home, r home.EntryRow) string {
	s := ""
	if r.Suspended {
		s += "S"
	}
	if r.ResumePending {
		s += "R"
		if r.ResumeReason != nil {
			s += "(" + *r.ResumeReason + ")"
		}
	}
	if r.Stale {
		s += " stale"
	}
	if r.Skip != "" {
		s += SkipFlag(h) + r.Skip
	}
	if r.Legacy {
		s = strings.TrimSpace(s + " legacy: only in sessions.json" + LegacyFlagNote(h))
	}
	if s == "" {
		return "-"
	}
	return s
}

// RowLabel is the ROW cell of an entry in entries list: its row's state, → its compression
// tip when it has one.
func RowLabel(r home.EntryRow) string {
	if r.Tip != "" {
		return r.Row + " → " + r.Tip
	}
	return r.Row
}
