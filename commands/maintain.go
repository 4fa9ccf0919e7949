package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

func maintainCommand() *cli.Command {
	return &cli.Command{
		Name:      "maintain",
		Usage:     "one unattended run for cron: check, then (with --apply) every safe repair; one summary line",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "apply", Usage: "run the repairs (default: check and report what would be done)"},
			&cli.StringFlag{Name: "fail-on", Value: sevError, Usage: "`LEVEL` of remaining findings that fails the run: error, warn or never"},
		},
		Action: runMaintain,
	}
}

// maintainStep is one repair maintain runs; routing steps are skipped while a gateway runs.
type maintainStep struct {
	name    string
	routing bool
	run     func(ctx context.Context, r *repairRun) (result, error)
}

func maintainSteps() []maintainStep {
	return []maintainStep{
		{"finalize-orphans", false, func(ctx context.Context, r *repairRun) (result, error) {
			return executeFinalize(ctx, r, orphanMinAgeSeconds)
		}},
		{"prune-ghosts", false, func(ctx context.Context, r *repairRun) (result, error) {
			return executePrune(ctx, r, ghostMinAgeSeconds)
		}},
		{"suspend-stuck", true, func(ctx context.Context, r *repairRun) (result, error) {
			return executeRouting(ctx, r, planSuspendStuck(r.v, stuckLoopThreshold))
		}},
		{"repoint", true, func(ctx context.Context, r *repairRun) (result, error) {
			p, err := planRepoint(ctx, r.v)
			if err != nil {
				return result{}, err
			}
			return executeRouting(ctx, r, p)
		}},
		{"resume clear --stale", true, func(ctx context.Context, r *repairRun) (result, error) {
			return executeRouting(ctx, r, planResumeClear(r.v, nil, false, true, freshnessWindowMicros/1e6))
		}},
	}
}

// maintainData is data of `maintain --json`.
type maintainData struct {
	Found    int      `json:"found"`    // findings above info before the repairs
	Planned  int      `json:"planned"`  // changes the repairs would make (without --apply)
	Changed  int      `json:"changed"`  // changes applied (with --apply)
	Journals []string `json:"journals"` // one journal per step that changed something
	Skipped  []string `json:"skipped_steps"`
	Refused  bool     `json:"writes_refused"` // unknown schema or generation: nothing written
}

func runMaintain(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("maintain takes no arguments")
	}
	failOn := c.String("fail-on")
	if failOn != sevError && failOn != sevWarn && failOn != "never" {
		return usagef("--fail-on must be error, warn or never")
	}
	o, err := loadOptions(c, "maintain")
	if err != nil {
		return err
	}
	if c.Bool("apply") { // a plan writes nothing, not even the lock file
		release, err := lockHome(o)
		if err != nil {
			return err
		}
		defer release()
	}
	return maintain(c.Context, o, c.Bool("apply"), failOn)
}

// maintain checks, runs every step (as a plan without apply), checks again after applying,
// and prints one summary.
func maintain(ctx context.Context, o *options, apply bool, failOn string) error {
	before, err := checkOnce(ctx, o)
	if err != nil {
		return err
	}
	data := maintainData{Found: countProblems(before), Journals: []string{}, Skipped: []string{}}
	changes, notes, err := runMaintainSteps(ctx, o, apply, &data)
	if err != nil {
		return err
	}
	findings := before
	if data.Changed > 0 {
		if findings, err = checkOnce(ctx, o); err != nil {
			return err
		}
	}
	findings = append(findings, notes...)
	v, err := loadViewFor(ctx, o, true, mirrorDrop)
	if err != nil {
		return err
	}
	defer v.close()
	return reportMaintain(o, v, findings, changes, data, failOn)
}

// runMaintainSteps runs each step on a fresh view (each sees the previous step's writes).
// Routing steps are skipped, with a finding, while a gateway runs or when the routing index
// cannot be written; every write is refused on a schema or generation the tool cannot write.
func runMaintainSteps(ctx context.Context, o *options, apply bool, data *maintainData) ([]Change, []Finding, error) {
	var changes []Change
	var notes []Finding
	for _, step := range maintainSteps() {
		res, skip, err := runMaintainStep(ctx, o, apply, step)
		if err != nil {
			return nil, nil, fmt.Errorf("maintain: %s: %w", step.name, err)
		}
		if skip != nil {
			data.Skipped = append(data.Skipped, step.name)
			if skip.Check == "maintain.writes-refused" {
				data.Refused = true
			}
			if skip.Check != "" && !hasFinding(notes, *skip) {
				notes = append(notes, *skip)
			}
			continue
		}
		notes = append(notes, res.findings...)
		changes = append(changes, res.changes...)
		data.Journals = append(data.Journals, res.allJournals()...)
	}
	if apply {
		data.Changed = len(changes)
	} else {
		data.Planned = len(changes)
	}
	return changes, notes, nil
}

// runMaintainStep runs one step; a non-nil skip says why it did not run (a skip without a
// check name is silent: the step does not exist in this generation).
func runMaintainStep(ctx context.Context, o *options, apply bool, step maintainStep) (result, *Finding, error) {
	v, err := loadStepView(ctx, o, step)
	if err != nil {
		return result{}, nil, err
	}
	r := &repairRun{o: o, v: v, apply: apply, release: func() error { return nil }}
	defer r.finish()
	if skip := maintainSkip(r, step); skip != nil {
		return result{}, skip, nil
	}
	res, err := step.run(ctx, r)
	return res, nil, err
}

// loadStepView loads what a step needs: state.db alone for a state.db repair, the routing
// index (the mirror decoded again only when writing it) for a routing repair.
func loadStepView(ctx context.Context, o *options, step maintainStep) (*homeView, error) {
	if !step.routing {
		return loadDBView(ctx, o)
	}
	return loadViewFor(ctx, o, true, mirrorDrop)
}

// maintainSkip decides whether a step runs on this home.
func maintainSkip(r *repairRun, step maintainStep) *Finding {
	v := r.v
	if r.apply {
		if err := r.checkWritable(); err != nil {
			return &Finding{"maintain.writes-refused", sevError, "maintain", oneLine(err) + ": every repair skipped; upgrade sessionctl"}
		}
	}
	if !step.routing {
		if dbRepairAvailable(v, step.name) != nil {
			return &Finding{}
		}
		return nil
	}
	switch {
	case v.gateway.Running:
		return &Finding{"maintain.routing-skipped", sevInfo, step.name, "skipped: a gateway is running (" + v.gateway.Detail + "); routing repairs need it stopped, state.db repairs ran"}
	case v.docErr != nil:
		return &Finding{"maintain.routing-skipped", sevWarn, step.name, "skipped: sessions.json is unreadable (see sessions-json.unreadable); fix it first"}
	case v.foreignRowsOnly():
		return &Finding{"maintain.routing-skipped", sevWarn, step.name, "skipped: the gateway_routing rows belong to another scope (see routing.foreign-scope)"}
	}
	return nil
}

func hasFinding(list []Finding, f Finding) bool {
	for _, g := range list {
		if g == f {
			return true
		}
	}
	return false
}

// checkOnce runs every check on a fresh view.
func checkOnce(ctx context.Context, o *options) ([]Finding, error) {
	v, err := loadViewFor(ctx, o, true, mirrorCompare)
	if err != nil {
		return nil, err
	}
	defer v.close()
	return runChecks(ctx, v, false)
}

func countProblems(findings []Finding) int {
	n := 0
	for _, f := range findings {
		if f.Severity != sevInfo {
			n++
		}
	}
	return n
}

// reportMaintain prints the summary line (or the envelope). Exit: 4 when writes were refused
// with --apply, else 1 when a remaining finding is at or above failOn, else 0.
func reportMaintain(o *options, v *homeView, findings []Finding, changes []Change, data maintainData, failOn string) error {
	code := ExitOK
	if failsAt(findings, failOn) {
		code = ExitFindings
	}
	if data.Refused {
		code = ExitData
	}
	if o.json {
		if err := emitJSON(o, newEnvelope(v, o, result{applied: data.Changed > 0, findings: findings, changes: changes, exitCode: code, data: data})); err != nil {
			return err
		}
	} else if !o.quiet || data.Found > 0 || data.Changed > 0 || code != ExitOK {
		if code != ExitOK {
			printFindings(o, findings)
		}
		fmt.Fprintln(o.stdout, maintainSummary(data, findings))
	}
	if code != ExitOK {
		return withCode(code, errReported)
	}
	return nil
}

func maintainSummary(data maintainData, findings []Finding) string {
	done := fmt.Sprintf("%d change(s) applied, %d journal(s)", data.Changed, len(data.Journals))
	if data.Planned > 0 {
		done = fmt.Sprintf("%d change(s) planned (run with --apply to make them)", data.Planned)
	}
	skipped := ""
	if len(data.Skipped) > 0 {
		skipped = "; skipped: " + strings.Join(data.Skipped, ", ")
	}
	return fmt.Sprintf("maintain: %d problem(s) found, %s%s; remaining: %s", data.Found, done, skipped, summarise(findings))
}
