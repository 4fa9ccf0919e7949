package check

import (
	"fmt"
	"strconv"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/home"
)

// The words the face prints about a home, from what was read: each says what the runtime
// does only on a generation sessionctl knows (see newer.go).

// EntriesText is status' line on the routing entries.
func EntriesText(h *home.Home, c StatusCounts) string {
	skipped := fmt.Sprintf("%d skipped by the runtime", c.Skipped)
	if !verified(h) {
		skipped = "none skipped"
		if c.Skipped > 0 {
			skipped = fmt.Sprintf("%d this sessionctl cannot read (whether a newer runtime loads them is not known)", c.Skipped)
		}
	}
	return fmt.Sprintf("%d loaded, %s; %d resume_pending (%d stale), %d suspended", c.Entries, skipped, c.ResumePending, c.Stale, c.Suspended)
}

// CountsText is status' line on .restart_failure_counts.
func CountsText(h *home.Home) string {
	c := h.Counts
	switch {
	case !c.Present:
		return ".restart_failure_counts absent"
	case c.Err != nil:
		return fmt.Sprintf(".restart_failure_counts unreadable (%v)", c.Err) + say(h, "; the runtime leaves it in place", "")
	default:
		return fmt.Sprintf(".restart_failure_counts: %d key(s)", len(c.Parsed.Keys))
	}
}

// ShutdownText is status' line on the .clean_shutdown marker.
func ShutdownText(h *home.Home) string {
	if h.CleanShutdown {
		return ".clean_shutdown present" + say(h, ": the next start skips crash recovery", "")
	}
	return ".clean_shutdown absent" + say(h, ": the next start runs crash recovery (entries updated within 120 s)", "")
}

// NoPreviewText is status' next-start line when there is no action to list: why the start is
// not previewed, or that it changes nothing.
func (d StatusData) NoPreviewText() string {
	if d.NextStartUnknown != "" {
		return d.NextStartUnknown
	}
	return "nothing changes"
}

// SkipLabel names an entry that is not loaded: skipped by the runtime, or, on a newer
// generation, one this sessionctl cannot read (no skip is claimed).
func SkipLabel(h *home.Home) string {
	return say(h, "SKIPPED by the runtime", "NOT READ by this sessionctl")
}

// SkipFlag is the entries list's flag of an entry that is not loaded (see SkipLabel).
func SkipFlag(h *home.Home) string {
	return say(h, "SKIPPED: ", "NOT READ: ")
}

// UnknownFieldsNote says what becomes of an entry's fields sessionctl does not know.
func UnknownFieldsNote(h *home.Home) string {
	return say(h, "kept by sessionctl, dropped by the runtime's next save", "fields this sessionctl does not know; it keeps them")
}

// LegacyFlagNote ends the entries list's flag of a legacy entry (only in sessions.json on a
// db-primary home): what the runtime does with it, on a generation sessionctl knows.
func LegacyFlagNote(h *home.Home) string {
	return say(h, ", imported at the next start", "")
}

// LegacyNote ends entries show's line on a legacy entry (see LegacyFlagNote).
func LegacyNote(h *home.Home) string {
	return say(h, "; the runtime imports it at its next load", "")
}

// Age renders an age like "3d ago" or "in 2m" (Unix or naive wall microseconds, both alike).
func Age(nowMicros, thenMicros int64) string {
	d := time.Duration(nowMicros-thenMicros) * time.Microsecond
	if d < 0 {
		return "in " + shortDuration(-d)
	}
	return shortDuration(d) + " ago"
}

func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%.1fh", d.Hours())
	default:
		return fmt.Sprintf("%.1fd", d.Hours()/24)
	}
}

// CountLabel is a restart count as listed: "-" for a key the counts file lacks.
func CountLabel(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}
