package commands

import (
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

func pruneCommand() *cli.Command {
	return &cli.Command{
		Name:      "prune",
		Usage:     "delete ended sessions older than D with their messages and transcript files (the runtime's prune_sessions; undoable)",
		ArgsUsage: " ",
		Flags: repairFlags(
			&cli.StringFlag{Name: "older-than", Value: formatAge(statedb.DefaultRetention), Usage: "sessions older than `D` by the generation's age rule (with a unit: s, m, h, d or w)"},
			&cli.StringFlag{Name: "source", Usage: "only sessions of source `S` (cli, tui, telegram, …)"}),
		Action: runPrune,
	}
}

func runPrune(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("prune takes no arguments")
	}
	older, err := ageFlag(c, "older-than")
	if err != nil {
		return err
	}
	if c.IsSet("source") && c.String("source") == "" {
		return usagef("--source: empty: name a source such as cli or telegram")
	}
	o, r, err := startRepair(c, "prune", home.Database)
	if err != nil {
		return err
	}
	defer r.Close()
	out, sum, err := repair.Retention(c.Context, r, repair.RetentionOptions{OlderThan: older, Source: c.String("source")})
	if err != nil {
		return err
	}
	res := outcomeResult(out)
	res.data = map[string]any{"prune": sum, "batches": out.Batches}
	if !o.json && !o.quiet {
		fmt.Fprintln(o.stdout, sum.Text())
	}
	return report(o, r.H, res)
}
