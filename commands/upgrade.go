package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/upgrade"
)

func upgradeCheckCommand() *cli.Command {
	return &cli.Command{
		Name:      "upgrade-check",
		Usage:     "read-only: what the runtime of generation GEN does to this home on its first open and start, and what is lost",
		ArgsUsage: " ",
		UsageText: "sessionctl upgrade-check --to r0817",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "`GEN`: a generation (r0715, r0817) or a schema version (v21, v26)"},
			failOnFlag("`LEVEL` that fails the run: error (data lost, the default), warn or never"), allFlag(),
		},
		Action: runUpgradeCheck,
	}
}

func runUpgradeCheck(c *cli.Context) error {
	if c.NArg() > 0 || c.String("to") == "" {
		return usagef("upgrade-check takes --to GEN and no arguments")
	}
	to, err := upgrade.ResolveTarget(c.String("to"))
	if err != nil {
		return usagef("%v", err)
	}
	// Survey: as tolerant as check, without comparing the mirror (no finding of upgrade-check's)
	return inspect(c, "upgrade-check", home.Survey, func(h *home.Home, _ check.FailOn) ([]check.Finding, any, error) {
		rep, findings, err := upgrade.Check(c.Context, h, to)
		return findings, map[string]upgrade.Report{"upgrade": rep}, err
	})
}
