package repair

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/statedb"
)

// archiveWrite: archive and unarchive update sessions.archived only (no trigger of messages
// sees it).
var archiveWrite = dbWrite{}

// Archive modes: what ArchiveOptions select.
const (
	ArchiveOlder = "older_than" // archive --older-than D [--source S]: archive_sessions
	ArchiveIdle  = "idle"       // archive --idle D: archive_stale_sessions
	ArchiveIDs   = "ids"        // unarchive ID...: set_session_archived(id, False)
)

// ArchiveOptions select what archive or unarchive sets.
type ArchiveOptions struct {
	Mode   string  // ArchiveOlder, ArchiveIdle or ArchiveIDs
	Age    float64 // D in seconds (ArchiveOlder, ArchiveIdle)
	Source string  // ArchiveOlder: only this source ("" for all)
	IDs    []string
	// Filters (ArchiveOlder) are the runtime's _prune_filter_where keyword filters given.
	Filters []statedb.FilterArg
}

// ArchiveSummary is data.archive: what the run selects and what it changes.
type ArchiveSummary struct {
	Mode     string   `json:"mode"`     // older_than, idle or ids
	Archived bool     `json:"archived"` // the value set
	Cutoff   *float64 `json:"cutoff"`
	AgeRule  string   `json:"age_rule,omitempty"` // older_than: started_at or last_activity (r0817); idle: last_active
	Source   *string  `json:"source"`
	// Matched is what the runtime's call returns: the sessions selected (archive_sessions,
	// archive_stale_sessions), or named (unarchive).
	Matched int `json:"matched"`
	// Rows are the lineage rows whose archived changes (or would).
	Rows int `json:"rows"`
	// Filters (older_than) are the keyword filters given, by the runtime's name, with the
	// value bound; Cutoff is null when one replaces the age bound.
	Filters    map[string]any `json:"filters"`
	filterText string
}

// Text is the one-line summary of the plan or the run.
func (s ArchiveSummary) Text() string {
	verb := "archive"
	if !s.Archived {
		verb = "unarchive"
	}
	by := ""
	if s.Cutoff != nil {
		by = fmt.Sprintf(" (%s before %s%s)", s.AgeRule, instant(*s.Cutoff), s.filterText)
	} else if s.filterText != "" {
		by = " (" + strings.TrimPrefix(s.filterText, "; ") + ")"
	}
	return fmt.Sprintf("%s%s: %d session(s) selected, %d row(s) of their lineages change", verb, by, s.Matched, s.Rows)
}

// archiving resolves the options into the runtime call of the home's generation and the
// summary, refusing (data) a call the generation does not have.
func archiving(h *home.Home, o ArchiveOptions) (statedb.Archiving, ArchiveSummary, error) {
	m, now := h.Rules.Maintenance, h.Opts.Clock.Unix
	missing := func(fn, since string) error {
		return failure.Mark(failure.Data, fmt.Errorf("generation %s (schema v%d) has no %s (%s): nothing archived", h.Gen, h.Schema.Version, fn, since))
	}
	switch o.Mode {
	case ArchiveIDs:
		if !m.SetArchived {
			return statedb.Archiving{}, ArchiveSummary{}, missing("set_session_archived", "sessions.archived arrived with schema v17, r0703")
		}
		return statedb.SetArchivedOn(false), ArchiveSummary{Mode: o.Mode}, nil
	case ArchiveIdle:
		if !m.ArchiveStale {
			return statedb.Archiving{}, ArchiveSummary{}, missing("archive_stale_sessions", "it arrived with f16b80362, r0817")
		}
		cutoff := now - o.Age
		return statedb.ArchiveIdle(cutoff), ArchiveSummary{Mode: o.Mode, Archived: true, Cutoff: &cutoff, AgeRule: "last_active"}, nil
	}
	if !m.ArchiveSessions {
		return statedb.Archiving{}, ArchiveSummary{}, missing("archive_sessions", "the bulk archive arrived with 040a5e30d, r0715")
	}
	filters, err := resolveFilters(h, o.Filters)
	if err != nil {
		return statedb.Archiving{}, ArchiveSummary{}, err
	}
	ret := statedb.Retention{Cutoff: now - o.Age, Age: m.Age, Source: o.Source, Filters: filters.args, FilterSet: m.PruneFilters}
	sum := ArchiveSummary{Mode: ArchiveOlder, Archived: true, AgeRule: ageRule(m.Age), Filters: filters.values, filterText: filters.text}
	if !ret.AgeReplaced() {
		sum.Cutoff = &ret.Cutoff
	}
	if o.Source != "" {
		sum.Source = &o.Source
	}
	return statedb.ArchiveOlder(ret), sum, nil
}

// Archive plans, and when applying performs, archive --older-than (archive_sessions), archive
// --idle (archive_stale_sessions) or unarchive ID... (set_session_archived(id, False)) with
// the rules of the home's generation: archived is set on each selected session's whole
// compression lineage. The apply runs in transactions sized by their cost (sizer),
// each checking its share again under the write lock and journaling the archived values it
// changes (images of that column only).
func Archive(ctx context.Context, r *Run, o ArchiveOptions) (Outcome, ArchiveSummary, error) {
	if err := r.H.NeedDB(); err != nil {
		return Outcome{}, ArchiveSummary{}, err
	}
	sel, sum, err := archiving(r.H, o)
	if err != nil {
		return Outcome{}, sum, err
	}
	if r.Apply {
		if err := r.checkDBWrite(ctx, archiveWrite); err != nil {
			return Outcome{}, sum, err
		}
	}
	ids, err := archiveSelection(ctx, r.H, sel, o)
	if err != nil {
		return Outcome{}, sum, err
	}
	changes, err := r.H.DB.ArchiveChanges(ctx, sel, ids)
	if err != nil {
		return Outcome{}, sum, failure.Mark(failure.Data, fmt.Errorf("%s: %w", r.H.Opts.Command, err))
	}
	sum.Matched, sum.Rows = len(ids), len(changes)
	if !r.Apply || len(changes) == 0 {
		return archiveReport(changes), sum, nil
	}
	out, err := r.batches(ctx, ids, r.sizer(nil), Outcome{}, archiveWrite, func(db *statedb.DB, batch statedb.Batch) (batchStep, error) {
		var ar statedb.ArchiveResult
		tx, err := r.applyDB(db, func(hook statedb.CommitHook) (bool, statedb.TxStats, error) {
			var err error
			ar, err = db.SetArchived(ctx, sel, batch, hook)
			return len(ar.Changes) > 0, ar.Stats, err
		}, nil)
		return batchStep{tx, archiveReport(ar.Changes), ar.Remaining}, err
	})
	sum.Rows = len(out.Changes)
	return out, sum, err
}

// archiveSelection returns the sessions the run selects: the ids named (each must resolve,
// an exact id or a unique prefix, else a data error and nothing is written), or the
// candidates of the runtime's selection, oldest first.
func archiveSelection(ctx context.Context, h *home.Home, sel statedb.Archiving, o ArchiveOptions) ([]string, error) {
	if o.Mode != ArchiveIDs {
		ids, err := h.DB.ArchiveCandidates(ctx, sel)
		if err != nil {
			return nil, failure.Mark(failure.Data, fmt.Errorf("%s: %w", h.Opts.Command, err))
		}
		return ids, nil
	}
	ids := make([]string, 0, len(o.IDs))
	seen := map[string]bool{}
	for _, n := range o.IDs {
		id, err := h.DB.ResolveID(ctx, n)
		if errors.Is(err, statedb.ErrNotFound) || errors.Is(err, statedb.ErrAmbiguous) {
			return nil, failure.Mark(failure.Data, fmt.Errorf("%w (see sessionctl sessions list); nothing written", err))
		}
		if err != nil {
			return nil, failure.Mark(failure.Data, err)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// archiveReport lists one change per archived value changed.
func archiveReport(changes []statedb.RowChange) Outcome {
	var res Outcome
	for _, c := range changes {
		res.Changes = append(res.Changes, Change{Store: home.StoreStateDB, Target: "sessions/" + c.Key["id"].Text + "/archived", Op: "set",
			Before: plainValue(c.Before.Values[0]), After: plainValue(c.After.Values[0])})
	}
	return res
}

// plainValue is a column value for a change list: a number, a string or nil.
func plainValue(v statedb.Value) any {
	switch v.Type {
	case statedb.TypeNull:
		return nil
	case statedb.TypeInteger:
		return v.Int
	case statedb.TypeReal:
		return v.Real
	case statedb.TypeText:
		return v.Text
	}
	return v.Literal()
}
