package repair

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// maintainStep is one step maintain runs; routing steps are skipped while a gateway runs.
type maintainStep struct {
	name    string
	routing bool
	write   dbWrite // what it writes in state.db (a routing step: where gateway_routing is the index)
	run     func(ctx context.Context, r *Run) (Outcome, error)
	// needs is what the home must have for the step to exist there (nil: nothing); a step
	// whose needs fail is skipped without a finding (r0418 has neither state.db repair).
	needs func(h *home.Home) error
}

// routingWrite is what a routing step writes in state.db.
var routingWrite = dbWrite{routing: true}

// dbRepairs is what the runtime's own state.db repairs need.
func dbRepairs(h *home.Home) error { return DBRepairAvailable(h, "") }

// maintainSteps are maintain's repairs in order, each with the runtime's own defaults.
var maintainSteps = []maintainStep{
	{"finalize-orphans", false, finalizeWrite, func(ctx context.Context, r *Run) (Outcome, error) {
		return Finalize(ctx, r, statedb.DefaultOrphanMinAge)
	}, dbRepairs},
	{"prune-ghosts", false, pruneWrite, func(ctx context.Context, r *Run) (Outcome, error) {
		return Prune(ctx, r, statedb.DefaultGhostMinAge)
	}, dbRepairs},
	{"suspend-stuck", true, routingWrite, func(ctx context.Context, r *Run) (Outcome, error) {
		return Routing(ctx, r, SuspendStuck(sessionsjson.StuckLoopThreshold))
	}, nil},
	{"repoint", true, routingWrite, func(ctx context.Context, r *Run) (Outcome, error) {
		return Routing(ctx, r, Repoint)
	}, nil},
	{"resume clear --stale", true, routingWrite, func(ctx context.Context, r *Run) (Outcome, error) {
		return Routing(ctx, r, ResumeClear(ClearSelection{Stale: true, MaxAge: StaleMaxAge}))
	}, nil},
}

// MaintainOptions are maintain's: those of the repairs, and its optional hygiene steps (each
// off when nil), which run in the order backup, the repairs, prune, compact.
type MaintainOptions struct {
	Options
	// Backup (--backup DIR) runs first, before any write of the run.
	Backup *HygieneStep
	// Prune (--prune D) is the retention prune, as `prune --older-than D` runs it.
	Prune *RetentionOptions
	// Compact (--compact) runs last.
	Compact *HygieneStep
}

// HygieneStep is an optional maintain step another engine runs (backup and compact: package
// storage, which builds on this one). Run plans or runs it on r — a home opened for its
// database, sessionctl's lock held when applying — and returns its outcome and its data for
// data.<Name>. An error that is a *StepSkipped skips the step with its finding and the run
// goes on; any other error stops the run, as a failed repair does.
type HygieneStep struct {
	Name string
	Run  func(ctx context.Context, r *Run) (Outcome, any, error)
}

// StepSkipped is a HygieneStep's error when it does not run on this home, or not now:
// Finding says why (a finding without a check id: the step does not exist here).
type StepSkipped struct{ Finding check.Finding }

func (s *StepSkipped) Error() string { return s.Finding.Message }

// steps lists the steps of a run with opts, in order; the hygiene steps report their data
// into rep.
func (rep *MaintainReport) steps(opts MaintainOptions) []maintainStep {
	var steps []maintainStep
	if opts.Backup != nil {
		steps = append(steps, rep.hygiene(opts.Backup, &rep.Data.Backup))
	}
	steps = append(steps, maintainSteps...)
	if opts.Prune != nil {
		ro := *opts.Prune
		steps = append(steps, maintainStep{"prune", false, retentionWrite, func(ctx context.Context, r *Run) (Outcome, error) {
			out, sum, err := Retention(ctx, r, ro)
			rep.Data.Prune = &sum
			return out, err
		}, (*home.Home).NeedDB})
	}
	if opts.Compact != nil {
		steps = append(steps, rep.hygiene(opts.Compact, &rep.Data.Compact))
	}
	return steps
}

// hygiene makes a step of s whose data goes to data.
func (rep *MaintainReport) hygiene(s *HygieneStep, data *any) maintainStep {
	return maintainStep{name: s.Name, run: func(ctx context.Context, r *Run) (Outcome, error) {
		out, d, err := s.Run(ctx, r)
		*data = d
		return out, err
	}}
}

// MaintainData is data of `maintain --json`.
type MaintainData struct {
	Found    int      `json:"found"`    // findings above info before the repairs
	Planned  int      `json:"planned"`  // changes the repairs would make (without --apply)
	Changed  int      `json:"changed"`  // changes applied (with --apply)
	Journals []string `json:"journals"` // one journal per step (per batch) that changed something
	Skipped  []string `json:"skipped_steps"`
	Refused  bool     `json:"writes_refused"` // unknown schema or generation: nothing written
	// Ignored are the findings of the checks Options.Ignore leaves out.
	Ignored []check.Finding `json:"ignored"`
	// StepJournals names the journals of each step that wrote any, by step.
	StepJournals map[string][]string `json:"step_journals"`
	// The data of the hygiene steps, as their commands give it (null when not asked, or
	// skipped): backup's (null in a plan), prune's data.prune, compact's.
	Backup  any               `json:"backup"`
	Prune   *RetentionSummary `json:"prune"`
	Compact any               `json:"compact"`
}

// MaintainReport is the outcome of one maintain run.
type MaintainReport struct {
	Findings []check.Finding // what remains (checked again after applying), then the steps' notes
	Changes  []Change
	Data     MaintainData
	Home     *home.Home // the home as it is after the run (for the envelope); Close it
	// RefusedBy is why every write was refused (Data.Refused), marked with its failure class.
	RefusedBy error
}

// Maintain checks the home, runs every step (as plans unless opts.Apply) — the backup asked
// for, the repairs, the prune and the compact asked for, in that order — checks again after
// applying and opens the home once more for the summary. When applying it holds sessionctl's
// lock throughout (the backup is taken under it, before any write), unless the home cannot
// be written at all (then every step is skipped and nothing is created).
func Maintain(ctx context.Context, o home.Options, opts MaintainOptions) (*MaintainReport, error) {
	var guarded error // the runtime's guards refuse every write: no step runs, nothing is locked
	if opts.Apply {
		home.RecoverInterrupted(ctx, o)
		release, refusal, err := lockUnlessRefused(ctx, o)
		if err != nil {
			return nil, err
		}
		defer release()
		guarded = refusal
	}
	before, err := checkOnce(ctx, o)
	if err != nil {
		return nil, err
	}
	found, _ := split(before, opts.Ignore)
	rep := &MaintainReport{Data: MaintainData{Found: check.CountProblems(found), Journals: []string{}, Skipped: []string{}, StepJournals: map[string][]string{}}}
	notes, err := rep.runSteps(ctx, o, opts, guarded)
	if err != nil {
		return nil, err
	}
	rep.Findings = before
	if rep.Data.Changed > 0 {
		if rep.Findings, err = checkOnce(ctx, o); err != nil {
			return nil, stopped(rep.outcome(), err) // the steps' journals are named all the same
		}
	}
	rep.Findings, rep.Data.Ignored = split(append(rep.Findings, notes...), opts.Ignore)
	if rep.Home, err = home.Open(ctx, o, home.Survey); err != nil {
		return nil, stopped(rep.outcome(), err)
	}
	return rep, nil
}

// lockUnlessRefused takes the lock, unless writes to this home are refused anyway: on a
// schema or generation sessionctl cannot write (each step then says so), or by one of the
// runtime's guards on state.db writes (returned: maintain writes to the whole home, so every
// step is refused, as guardDB would refuse each one). Under the lock each step checks the
// guards again, as any run does.
func lockUnlessRefused(ctx context.Context, o home.Options) (release func() error, guarded error, err error) {
	probe, err := home.Open(ctx, o, home.Database)
	if err != nil {
		return nil, nil, err
	}
	refused := checkWritable(probe) != nil
	if !refused {
		guarded = guardDB(ctx, probe, dbWrite{})
	}
	probe.Close()
	if refused || guarded != nil {
		return func() error { return nil }, guarded, nil
	}
	release, err = LockHome(ctx, o)
	return release, nil, err
}

// runSteps runs each step on a freshly opened home (each sees the previous step's writes).
// Routing steps are skipped, with a finding, while a gateway runs or when the routing index
// cannot be written; every write is refused on a schema or generation the tool cannot write.
func (rep *MaintainReport) runSteps(ctx context.Context, o home.Options, opts MaintainOptions, guarded error) ([]check.Finding, error) {
	var notes []check.Finding
	for _, step := range rep.steps(opts) {
		var res Outcome
		var skip *check.Finding
		var err error
		if guarded != nil {
			skip = refusedFinding(guarded, "")
		} else {
			res, skip, err = runStep(ctx, o, opts.Options, step)
		}
		if err == nil {
			err = ctx.Err() // a safe point: between two steps
		}
		if err != nil {
			var inc *Incomplete
			if errors.As(err, &inc) { // the step applied part of its work before it stopped
				rep.add(step.name, inc.Outcome, opts.Apply)
				err = inc.Err
			} else if res.Applied {
				rep.add(step.name, res, opts.Apply)
			}
			return nil, stopped(rep.outcome(), fmt.Errorf("maintain: %s: %w", step.name, err))
		}
		if skip != nil {
			rep.Data.Skipped = append(rep.Data.Skipped, step.name)
			if skip.Check == check.MaintainWritesRefused && opts.Apply && !rep.Data.Refused {
				rep.Data.Refused = true
				rep.RefusedBy = cmp.Or(guarded, failure.Mark(failure.Data, errors.New(skip.Message)))
			}
			if skip.Check != "" && !slices.Contains(notes, *skip) {
				notes = append(notes, *skip)
			}
			continue
		}
		notes = append(notes, res.Findings...)
		rep.add(step.name, res, opts.Apply)
	}
	return notes, nil
}

// add counts a step's outcome in the report; a step stopped part-way adds what it applied.
func (rep *MaintainReport) add(step string, res Outcome, apply bool) {
	rep.Changes = append(rep.Changes, res.Changes...)
	rep.Data.Journals = append(rep.Data.Journals, res.Journals...)
	if len(res.Journals) > 0 {
		rep.Data.StepJournals[step] = append(rep.Data.StepJournals[step], res.Journals...)
	}
	if apply {
		rep.Data.Changed = len(rep.Changes)
	} else {
		rep.Data.Planned = len(rep.Changes)
	}
}

// outcome is what the steps applied so far.
func (rep *MaintainReport) outcome() Outcome {
	return Outcome{Applied: rep.Data.Changed > 0 || len(rep.Data.Journals) > 0, Changes: rep.Changes, Journals: rep.Data.Journals}
}

// runStep runs one step; a non-nil skip says why it did not run (a skip without a check id
// is silent: the step does not exist in this generation).
func runStep(ctx context.Context, o home.Options, opts Options, step maintainStep) (Outcome, *check.Finding, error) {
	purpose := home.Survey
	if !step.routing {
		purpose = home.Database
	}
	h, err := home.Open(ctx, o, purpose)
	if err != nil {
		return Outcome{}, nil, err
	}
	// maintain holds the lock for the whole run: a non-nil release tells Run.lock it is held.
	r := &Run{H: h, Options: opts, release: func() error { return nil }}
	defer r.Close()
	if skip := stepSkip(ctx, r, step); skip != nil {
		return Outcome{}, skip, nil
	}
	res, err := step.run(ctx, r)
	if skipped := (*StepSkipped)(nil); errors.As(err, &skipped) {
		return Outcome{}, &skipped.Finding, nil
	}
	return res, nil, err
}

// refusedFinding is maintain.writes-refused: err refused every write.
func refusedFinding(err error, hint string) *check.Finding {
	return &check.Finding{Check: check.MaintainWritesRefused, Severity: check.Error, Subject: "maintain",
		Message: strings.Join(strings.Fields(err.Error()), " ") + ": every repair skipped" + hint}
}

// stepSkip decides whether a step runs on this home. With --apply, a step whose own write a
// runtime guard refuses (a legacy gateway_routing key, messages triggers sessionctl cannot
// run) is skipped with maintain.step-refused and the other steps run; a guard on every write
// (the repair lock, the ledger, permissions) is checked by the step itself, under the lock.
// On a generation newer than sessionctl knows no step runs, not even as a plan: each would
// apply rules its runtime may no longer follow, and nothing planned could be written.
func stepSkip(ctx context.Context, r *Run, step maintainStep) *check.Finding {
	h := r.H
	if r.Apply || !h.Rules.Verified() {
		if err := r.CheckWritable(); err != nil {
			return refusedFinding(err, "; upgrade sessionctl")
		}
	}
	if skip := stepRoutingSkip(r, step); skip != nil {
		return skip
	}
	w := step.write
	if !r.Apply || h.DB == nil || step.routing && h.Routing.Source != home.SourceGatewayRouting {
		return nil
	}
	if err := guardOp(ctx, h, w); err != nil {
		return &check.Finding{Check: check.MaintainStepRefused, Severity: check.Error, Subject: step.name,
			Message: "skipped: " + strings.Join(strings.Fields(err.Error()), " ")}
	}
	return nil
}

// stepRoutingSkip decides whether a step runs on this home as the generation and the routing
// index have it.
func stepRoutingSkip(r *Run, step maintainStep) *check.Finding {
	h := r.H
	if !step.routing {
		if step.needs != nil && step.needs(h) != nil {
			return &check.Finding{}
		}
		return nil
	}
	skipped := func(sev check.Severity, why string) *check.Finding {
		return &check.Finding{Check: check.MaintainRoutingSkipped, Severity: sev, Subject: step.name, Message: "skipped: " + why}
	}
	switch {
	case h.Gateway.Running:
		return skipped(check.Info, "a gateway is running ("+h.Gateway.Detail+"); routing repairs need it stopped, state.db repairs ran")
	case h.Mirror.Err != nil:
		return skipped(check.Warn, "sessions.json is unreadable (see sessions-json.unreadable); fix it first")
	case h.ForeignRowsOnly():
		return skipped(check.Warn, "the gateway_routing rows belong to another scope (see routing.foreign-scope)")
	}
	return nil
}

// split separates the findings of ignored checks from the rest.
func split(findings []check.Finding, ignore map[check.ID]bool) (kept, ignored []check.Finding) {
	for _, f := range findings {
		if ignore[f.Check] {
			ignored = append(ignored, f)
		} else {
			kept = append(kept, f)
		}
	}
	return kept, ignored
}

// Refusal is why maintain's writes were refused, "" when they were not.
func (rep *MaintainReport) Refusal() string {
	for _, list := range [][]check.Finding{rep.Findings, rep.Data.Ignored} {
		for _, f := range list {
			if f.Check == check.MaintainWritesRefused {
				return f.Message
			}
		}
	}
	return ""
}

// checkOnce runs every check on a freshly opened home.
func checkOnce(ctx context.Context, o home.Options) ([]check.Finding, error) {
	h, err := home.Open(ctx, o, home.Inspect)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return check.Run(ctx, h, false)
}
