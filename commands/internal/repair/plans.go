package repair

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Planner builds a routing plan on an opened home. Routing calls it again once it holds the
// lock, on the home opened again.
type Planner func(ctx context.Context, h *home.Home) (RoutingPlan, error)

// ErrNoEntry refuses a KEY that names no routing entry of this home.
var ErrNoEntry = errors.New("no such routing entry")

// checkKeys fails (data) when a key names no routing entry of this home: a repair asked for
// keys writes nothing unless every key exists.
func checkKeys(h *home.Home, keys []string) error {
	for _, key := range keys {
		if h.Entry(key) != nil {
			continue
		}
		where := "in " + h.Routing.Source.String()
		if len(h.Routing.Foreign) > 0 {
			where += "; gateway_routing has rows of other scopes only another home reads (see sessionctl status)"
		}
		return failure.Mark(failure.Data, fmt.Errorf("%w %q %s (see sessionctl entries list); nothing written", ErrNoEntry, key, where))
	}
	return nil
}

// editable returns the entry of key when the runtime loads it, else a finding saying why it
// is left alone.
func editable(h *home.Home, key string) (*sessionsjson.Entry, *check.Finding) {
	e := h.Entry(key)
	if e.Skip != "" && !h.Rules.Verified() { // a newer generation: no skip is claimed
		return nil, &check.Finding{Check: check.EntryUnreadable, Severity: check.Warn, Subject: key, Message: "this sessionctl cannot read this entry (" + e.Skip + "); not edited"}
	}
	if e.Skip != "" {
		return nil, &check.Finding{Check: check.EntrySkipped, Severity: check.Warn, Subject: key, Message: "the runtime skips this entry (" + e.Skip + "); not edited"}
	}
	return e, nil
}

// claim is known on a generation sessionctl knows, newer on one it does not, where what the
// runtime does is not verified (sessionsjson.Rules.Verified).
func claim(h *home.Home, known, newer string) string {
	if h.Rules.Verified() {
		return known
	}
	return newer
}

// perKey plans an edit of each key: every key must name a routing entry (else nothing is
// planned), an entry the runtime skips gets a finding, and edit decides for the others (a nil
// edit and finding: nothing to do).
func perKey(h *home.Home, keys []string, edit func(*sessionsjson.Entry) (*EntryEdit, *check.Finding)) (RoutingPlan, error) {
	var p RoutingPlan
	if err := checkKeys(h, keys); err != nil {
		return p, err
	}
	for _, key := range keys {
		e, f := editable(h, key)
		var ed *EntryEdit
		if f == nil {
			ed, f = edit(e)
		}
		if f != nil {
			p.Findings = append(p.Findings, *f)
		}
		if ed != nil {
			p.Edits = append(p.Edits, *ed)
		}
	}
	return p, nil
}

// SetSuspended sets or clears suspended on the keys (the runtime's suspend_session).
func SetSuspended(keys []string, value bool) Planner {
	return func(_ context.Context, h *home.Home) (RoutingPlan, error) {
		return perKey(h, keys, func(e *sessionsjson.Entry) (*EntryEdit, *check.Finding) {
			if e.Suspended == value {
				return nil, nil
			}
			return &EntryEdit{Key: e.Key, Fields: []FieldEdit{{"suspended", value}}}, nil
		})
	}
}

// ResumeMark marks the keys resume_pending with reason, stamped now (the runtime's
// mark_resume_pending, which refuses suspended entries).
func ResumeMark(keys []string, reason string) Planner {
	return func(_ context.Context, h *home.Home) (RoutingPlan, error) {
		stamp := sessionsjson.FormatNaive(h.Opts.Clock.NaiveLocalMicros(time.Local))
		return perKey(h, keys, func(e *sessionsjson.Entry) (*EntryEdit, *check.Finding) {
			if e.Suspended {
				return nil, &check.Finding{Check: check.ResumeSuspended, Severity: check.Warn, Subject: e.Key,
					Message: "entry is suspended: " + claim(h, "the runtime refuses to mark it (unsuspend first if a resume is wanted)",
						"not marked (the runtimes this sessionctl knows refuse to mark a suspended entry)")}
			}
			return &EntryEdit{Key: e.Key, Fields: []FieldEdit{{"resume_pending", true}, {"resume_reason", reason}, {"last_resume_marked_at", stamp}}}, nil
		})
	}
}

// ClearSelection chooses the entries resume clear acts on.
type ClearSelection struct {
	Keys  []string // these keys
	All   bool     // every resume_pending entry
	Stale bool     // the resume_pending entries whose marker is older than MaxAge
	// MaxAge is the age in seconds beyond which a marker is stale (the runtime's freshness
	// window is sessionsjson.FreshnessWindowMicros).
	MaxAge float64
}

// ResumeClear clears resume_pending, resume_reason and last_resume_marked_at (the runtime's
// clear_resume_pending) on the selected entries.
func ResumeClear(sel ClearSelection) Planner {
	clear := []FieldEdit{{"resume_pending", false}, {"resume_reason", nil}, {"last_resume_marked_at", nil}}
	return func(_ context.Context, h *home.Home) (RoutingPlan, error) {
		if !sel.All && !sel.Stale {
			return perKey(h, sel.Keys, func(e *sessionsjson.Entry) (*EntryEdit, *check.Finding) {
				if !e.ResumePending {
					return nil, &check.Finding{Check: check.ResumeNotPending, Severity: check.Info, Subject: e.Key, Message: "not resume_pending: nothing to clear"}
				}
				return &EntryEdit{Key: e.Key, Fields: clear}, nil
			})
		}
		var p RoutingPlan
		now := h.Opts.Clock.NaiveLocalMicros(time.Local)
		for _, e := range h.Loaded() {
			if e.ResumePending && (sel.All || float64(e.MarkerAgeMicros(now)) > sel.MaxAge*1e6) {
				p.Edits = append(p.Edits, EntryEdit{Key: e.Key, Fields: clear})
			}
		}
		return p, nil
	}
}

// StaleMaxAge is the freshness window in seconds: resume clear --stale's default and
// maintain's.
const StaleMaxAge = float64(sessionsjson.FreshnessWindowMicros) / 1e6

// SuspendStuck suspends loaded, unsuspended entries at or over the threshold and removes
// exactly those keys from the counts file (removing the file when it becomes empty): the
// runtime's stuck-loop breaker at start.
func SuspendStuck(threshold int64) Planner {
	return func(_ context.Context, h *home.Home) (RoutingPlan, error) {
		return planSuspendStuck(h, threshold), nil
	}
}

func planSuspendStuck(h *home.Home, threshold int64) RoutingPlan {
	var p RoutingPlan
	c := h.Counts
	if c.Err != nil {
		p.Findings = append(p.Findings, check.Finding{Check: check.CountsUnparseable, Severity: check.Warn, Subject: ".restart_failure_counts",
			Message: fmt.Sprintf("unparseable (%v): left alone", c.Err) + claim(h, ", as the runtime does", "")})
		return p
	}
	if c.Parsed == nil {
		return p
	}
	if key, raises := c.Parsed.ComparisonRaises(threshold); raises {
		p.Findings = append(p.Findings, check.Finding{Check: check.CountsNotInteger, Severity: check.Warn, Subject: key,
			Message: "count " + string(c.Parsed.Values[key]) + " is not a number: " + claim(h, "the runtime's comparison raises, so its start suspends nothing and keeps the file; ", "") + "nothing done"})
		return p
	}
	var acted []string
	for _, key := range c.Parsed.Keys {
		e := h.Entry(key)
		if !c.Parsed.ReachesThreshold(key, threshold) || e == nil || e.Skip != "" || e.Suspended {
			continue
		}
		p.Edits = append(p.Edits, EntryEdit{Key: key, Fields: []FieldEdit{{"suspended", true}}})
		acted = append(acted, key)
	}
	if len(acted) > 0 {
		p.Counts = countsImage(h, acted)
	}
	return p
}

func countsImage(h *home.Home, acted []string) *journal.FileImage {
	before := h.Counts.Data
	rest := h.Counts.Parsed.Without(acted...)
	img := &journal.FileImage{Path: h.Opts.Home.CountsFile(), Before: &before}
	if rest.Len() > 0 {
		after := rest.Encode()
		img.After = &after
	}
	return img
}

// RepointAvailable refuses repoint on a generation without the compression-tip rule.
func RepointAvailable(h *home.Home) error {
	if h.TipRule() == statedb.TipNone {
		return failure.Mark(failure.Data, fmt.Errorf("generation %s has no compression-tip rule (get_compression_tip arrived with schema v11): nothing to repoint by the runtime's rules", h.Gen))
	}
	return nil
}

// Repoint moves entries on a compression-ended row to the compression tip.
func Repoint(ctx context.Context, h *home.Home) (RoutingPlan, error) {
	var p RoutingPlan
	if h.TipRule() == statedb.TipNone {
		return p, nil
	}
	rows, err := h.Rows(ctx)
	if err != nil {
		return p, err
	}
	for _, e := range h.Loaded() {
		if tip := rows[e.SessionID].Tip; tip != "" {
			p.Edits = append(p.Edits, EntryEdit{Key: e.Key, Fields: []FieldEdit{{"session_id", tip}}})
		}
	}
	return p, nil
}
