package repair

import (
	"context"
	"fmt"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// lookupForEdit finds a loadable entry or explains why it cannot be edited.
func lookupForEdit(h *home.Home, key string) (*sessionsjson.Entry, *check.Finding) {
	e := h.Entry(key)
	if e == nil {
		return nil, &check.Finding{Check: check.EntryUnknown, Severity: check.Warn, Subject: key, Message: "no such routing entry (see sessionctl entries list)"}
	}
	if e.Skip != "" {
		return nil, &check.Finding{Check: check.EntrySkipped, Severity: check.Warn, Subject: key, Message: "the runtime skips this entry (" + e.Skip + "); not edited"}
	}
	return e, nil
}

// PlanSetSuspended sets or clears suspended on the keys (the runtime's suspend_session).
func PlanSetSuspended(h *home.Home, keys []string, value bool) RoutingPlan {
	var p RoutingPlan
	for _, key := range keys {
		e, f := lookupForEdit(h, key)
		if f != nil {
			p.Findings = append(p.Findings, *f)
			continue
		}
		if e.Suspended == value {
			continue
		}
		p.Edits = append(p.Edits, EntryEdit{key, []FieldEdit{{"suspended", value}}})
	}
	return p
}

// PlanResumeMark marks the keys resume_pending with reason, stamped now (the runtime's
// mark_resume_pending, which refuses suspended entries).
func PlanResumeMark(h *home.Home, keys []string, reason string) RoutingPlan {
	stamp := sessionsjson.FormatNaive(h.Opts.Clock.NaiveLocalMicros(time.Local))
	var p RoutingPlan
	for _, key := range keys {
		e, f := lookupForEdit(h, key)
		if f != nil {
			p.Findings = append(p.Findings, *f)
			continue
		}
		if e.Suspended {
			p.Findings = append(p.Findings, check.Finding{Check: check.ResumeSuspended, Severity: check.Warn, Subject: key,
				Message: "entry is suspended: the runtime refuses to mark it (unsuspend first if a resume is wanted)"})
			continue
		}
		p.Edits = append(p.Edits, EntryEdit{key, []FieldEdit{{"resume_pending", true}, {"resume_reason", reason}, {"last_resume_marked_at", stamp}}})
	}
	return p
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

// PlanResumeClear clears resume_pending, resume_reason and last_resume_marked_at (the
// runtime's clear_resume_pending) on the selected entries.
func PlanResumeClear(h *home.Home, sel ClearSelection) RoutingPlan {
	var p RoutingPlan
	clear := []FieldEdit{{"resume_pending", false}, {"resume_reason", nil}, {"last_resume_marked_at", nil}}
	if sel.All || sel.Stale {
		now := h.Opts.Clock.NaiveLocalMicros(time.Local)
		for _, e := range h.Loaded() {
			if e.ResumePending && (sel.All || float64(e.MarkerAgeMicros(now)) > sel.MaxAge*1e6) {
				p.Edits = append(p.Edits, EntryEdit{e.Key, clear})
			}
		}
		return p
	}
	for _, key := range sel.Keys {
		e, f := lookupForEdit(h, key)
		if f != nil {
			p.Findings = append(p.Findings, *f)
			continue
		}
		if !e.ResumePending {
			p.Findings = append(p.Findings, check.Finding{Check: check.ResumeNotPending, Severity: check.Info, Subject: key, Message: "not resume_pending: nothing to clear"})
			continue
		}
		p.Edits = append(p.Edits, EntryEdit{key, clear})
	}
	return p
}

// StaleMaxAge is the freshness window in seconds: resume clear --stale's default and
// maintain's.
const StaleMaxAge = float64(sessionsjson.FreshnessWindowMicros) / 1e6

// PlanSuspendStuck suspends loaded, unsuspended entries at or over the threshold and removes
// exactly those keys from the counts file (removing the file when it becomes empty): the
// runtime's stuck-loop breaker at start.
func PlanSuspendStuck(h *home.Home, threshold int64) RoutingPlan {
	var p RoutingPlan
	c := h.Counts
	if c.Err != nil {
		p.Findings = append(p.Findings, check.Finding{Check: check.CountsUnparseable, Severity: check.Warn, Subject: ".restart_failure_counts",
			Message: fmt.Sprintf("unparseable (%v): left alone, as the runtime does", c.Err)})
		return p
	}
	if c.Parsed == nil {
		return p
	}
	if key, raises := c.Parsed.ComparisonRaises(threshold); raises {
		p.Findings = append(p.Findings, check.Finding{Check: check.CountsNotInteger, Severity: check.Warn, Subject: key,
			Message: "count " + string(c.Parsed.Values[key]) + " is not a number: the runtime's comparison raises, so its start suspends nothing and keeps the file; nothing done"})
		return p
	}
	var acted []string
	for _, key := range c.Parsed.Keys {
		e := h.Entry(key)
		if !c.Parsed.ReachesThreshold(key, threshold) || e == nil || e.Skip != "" || e.Suspended {
			continue
		}
		p.Edits = append(p.Edits, EntryEdit{key, []FieldEdit{{"suspended", true}}})
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

// PlanRepoint moves entries on a compression-ended row to the compression tip.
func PlanRepoint(ctx context.Context, h *home.Home) (RoutingPlan, error) {
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
			p.Edits = append(p.Edits, EntryEdit{e.Key, []FieldEdit{{"session_id", tip}}})
		}
	}
	return p, nil
}
