package commands

import (
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/urfave/cli/v2"
)

func maintainCommand() *cli.Command {
	return &cli.Command{
		Name:      "maintain",
		Usage:     "one unattended run for cron: check, then (with --apply) every safe repair; one summary line",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "apply", Usage: "run the repairs (default: check and report what would be done)"},
			failOnFlag("`LEVEL` of remaining findings that fails the run: error, warn or never"),
		},
		Action: runMaintain,
	}
}

// failOnFlag is --fail-on of check and maintain.
func failOnFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "fail-on", Value: string(check.FailOnError), Usage: usage}
}

// parseFailOn reads --fail-on (a usage error when it is not a level).
func parseFailOn(c *cli.Context) (check.FailOn, error) {
	failOn, err := check.ParseFailOn(c.String("fail-on"))
	if err != nil {
		return "", usage(err)
	}
	return failOn, nil
}

func runMaintain(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("maintain takes no arguments")
	}
	failOn, err := parseFailOn(c)
	if err != nil {
		return err
	}
	o, err := loadOptions(c, "maintain")
	if err != nil {
		return err
	}
	rep, err := repair.Maintain(c.Context, o.Options, repair.Options{Apply: c.Bool("apply"), BatchRows: o.settings.batchRows})
	if err != nil {
		return err
	}
	defer rep.Home.Close()
	return reportMaintain(o, rep, failOn)
}

// reportMaintain prints the summary line (or the envelope). Exit: 4 when writes were refused
// with --apply, else 1 when a remaining finding is at or above failOn, else 0.
func reportMaintain(o *options, rep *repair.MaintainReport, failOn check.FailOn) error {
	code := ExitOK
	if failOn.Fails(rep.Findings) {
		code = ExitFindings
	}
	if rep.Data.Refused {
		code = ExitData
	}
	data := rep.Data
	if o.json {
		res := result{applied: data.Changed > 0, findings: rep.Findings, changes: rep.Changes, exitCode: code, data: data}
		if err := emitJSON(o, newEnvelope(rep.Home, o, res)); err != nil {
			return err
		}
	} else if !o.quiet || data.Found > 0 || data.Changed > 0 || code != ExitOK {
		if code != ExitOK {
			printFindings(o, rep.Findings)
		}
		fmt.Fprintln(o.stdout, maintainSummary(data, rep.Findings))
	}
	switch code {
	case ExitData:
		return failure.Mark(failure.Data, errReported)
	case ExitFindings:
		return errFindings
	}
	return nil
}

func maintainSummary(data repair.MaintainData, findings []check.Finding) string {
	done := fmt.Sprintf("%d change(s) applied, %d journal(s)", data.Changed, len(data.Journals))
	if data.Planned > 0 {
		done = fmt.Sprintf("%d change(s) planned (run with --apply to make them)", data.Planned)
	}
	skipped := ""
	if len(data.Skipped) > 0 {
		skipped = "; skipped: " + strings.Join(data.Skipped, ", ")
	}
	return fmt.Sprintf("maintain: %d problem(s) found, %s%s; remaining: %s", data.Found, done, skipped, check.Summarise(findings))
}
