package commands

import (
	"context"
	"fmt"

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
	Found    int      `json:"found"`
	Changed  int      `json:"changed"`
	Journals []string `json:"journals"`
	Skipped  []string `json:"skipped_steps"`
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
	release, err := lockHome(o)
	if err != nil {
		return err
	}
	defer release()
	return maintain(c.Context, o, c.Bool("apply"), failOn)
}

func maintain(ctx context.Context, o *options, apply bool, failOn string) error {
	before, err := checkOnce(ctx, o)
	if err != nil {
		return err
	}
	data := maintainData{Found: countProblems(before), Journals: []string{}, Skipped: []string{}}
	var changes []Change
	findings := before
	if apply && data.Found > 0 {
		changes, findings, err = runMaintainSteps(ctx, o, &data)
		if err != nil {
			return err
		}
	}
	data.Changed = len(changes)
	v, err := loadView(ctx, o, true)
	if err != nil {
		return err
	}
	defer v.close()
	return reportMaintain(o, v, findings, changes, data, failOn)
}

func runMaintainSteps(ctx context.Context, o *options, data *maintainData) ([]Change, []Finding, error) {
	var changes []Change
	var notes []Finding
	for _, step := range maintainSteps() {
		res, skipped, err := runMaintainStep(ctx, o, step)
		if err != nil {
			return nil, nil, fmt.Errorf("maintain: %s: %w", step.name, err)
		}
		if skipped {
			data.Skipped = append(data.Skipped, step.name)
			notes = append(notes, Finding{"maintain.routing-skipped", sevInfo, step.name, "skipped: a gateway is running (routing repairs need it stopped)"})
			continue
		}
		changes = append(changes, res.changes...)
		if res.journal != "" {
			data.Journals = append(data.Journals, res.journal)
		}
	}
	after, err := checkOnce(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	return changes, append(after, notes...), nil
}

func runMaintainStep(ctx context.Context, o *options, step maintainStep) (result, bool, error) {
	r, err := openRepair(ctx, o, true, false)
	if err != nil {
		return result{}, false, err
	}
	defer r.finish()
	if step.routing && r.v.gateway.Running {
		return result{}, true, nil
	}
	if !step.routing && dbRepairAvailable(r.v, step.name) != nil {
		return result{}, false, nil
	}
	res, err := step.run(ctx, r)
	return res, false, err
}

// checkOnce runs every check on a fresh view.
func checkOnce(ctx context.Context, o *options) ([]Finding, error) {
	v, err := loadView(ctx, o, true)
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

func reportMaintain(o *options, v *homeView, findings []Finding, changes []Change, data maintainData, failOn string) error {
	code := ExitOK
	if failsAt(findings, failOn) {
		code = ExitFindings
	}
	if o.json {
		if err := emitJSON(o, newEnvelope(v, o, result{applied: data.Changed > 0, findings: findings, changes: changes, exitCode: code, data: data})); err != nil {
			return err
		}
	} else if !o.quiet || data.Found > 0 || data.Changed > 0 {
		if code != ExitOK {
			printFindings(o, findings)
		}
		fmt.Fprintf(o.stdout, "maintain: %d problem(s) found, %d change(s) applied, %d journal(s); remaining: %s\n",
			data.Found, data.Changed, len(data.Journals), summarise(findings))
	}
	if code != ExitOK {
		return withCode(code, errReported)
	}
	return nil
}
