package commands

import (
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/urfave/cli/v2"
)

func ftsCommand() *cli.Command {
	return &cli.Command{
		Name:      "fts",
		Usage:     "state.db's full-text search indexes",
		UsageText: "sessionctl fts rebuild",
		Subcommands: []*cli.Command{{
			Name:      "rebuild",
			Usage:     "refill the full-text indexes out of step with messages, by the layout's own rebuild (check --deep: db.fts-out-of-step)",
			ArgsUsage: " ",
			UsageText: "sessionctl fts rebuild --apply",
			Flags:     dbRepairFlags(forceFlag("rebuild even while a gateway runs (its writes wait meanwhile)")),
			Action:    runFTSRebuild,
		}},
	}
}

func runFTSRebuild(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("fts rebuild takes no arguments")
	}
	o, r, err := startRepair(c, "fts rebuild", home.Database)
	if err != nil {
		return err
	}
	defer r.Close()
	out, err := repair.FTSRebuild(c.Context, r)
	if err != nil {
		return err
	}
	return report(o, r.H, outcomeResult(out))
}
