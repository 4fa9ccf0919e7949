package commands

import (
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/urfave/cli/v2"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "run every read-only health check; exit 1 when a finding is at or above --fail-on",
		ArgsUsage: " ",
		UsageText: "sessionctl check --deep --fail-on warn",
		Flags: []cli.Flag{
			failOnFlag("`LEVEL` that fails the run: error, warn or never"),
			&cli.BoolFlag{Name: "deep", Usage: "also run PRAGMA integrity_check over the whole database (slow on large homes)"},
			allFlag(), metricsFlag(),
		},
		Action: withMetrics(runCheck),
	}
}

func runCheck(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("check takes no arguments")
	}
	return inspect(c, "check", home.Inspect, func(h *home.Home, failOn check.FailOn) ([]check.Finding, any, error) {
		findings, err := check.Run(c.Context, h, c.Bool("deep"))
		return findings, check.NewData(findings, failOn, c.Bool("deep")), err
	})
}

// inspect reads --fail-on, opens the home for purpose, runs find over it, writes
// --metrics-file and reports the findings with find's data (check, upgrade-check).
func inspect(c *cli.Context, name string, purpose home.Purpose, find func(*home.Home, check.FailOn) ([]check.Finding, any, error)) error {
	failOn, err := parseFailOn(c)
	if err != nil {
		return err
	}
	o, err := loadOptions(c, name)
	if err != nil {
		return err
	}
	h, err := home.Open(c.Context, o.Options, purpose)
	if err != nil {
		return err
	}
	defer h.Close()
	findings, data, err := find(h, failOn)
	if err == nil { // check's --metrics-file (nil for upgrade-check)
		err = o.state.metrics.Record(c.Context, h, findings, failCode(failOn, findings), nil)
	}
	if err != nil {
		return err
	}
	return reportFindings(o, h, findings, failOn, data)
}

// reportFindings prints findings (human or JSON) and ends with exit 1 when one reaches failOn.
func reportFindings(o *options, h *home.Home, findings []check.Finding, failOn check.FailOn, data any) error {
	fails := failOn.Fails(findings)
	if o.json {
		if err := emitJSON(o, newEnvelope(h, o, result{findings: findings, exitCode: failCode(failOn, findings), data: data, summary: true})); err != nil {
			return err
		}
	} else if !o.quiet || fails {
		printFindings(o, findings)
		if !o.quiet {
			fmt.Fprintf(o.stdout, "%s\n", check.Summarise(findings))
		}
	}
	if fails {
		return errFindings
	}
	return nil
}

// failCode is the exit code of findings under failOn: 1 when one reaches it, else 0.
func failCode(failOn check.FailOn, findings []check.Finding) int {
	if failOn.Fails(findings) {
		return ExitFindings
	}
	return ExitOK
}
