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
		ArgsUsage: "[D with --never-active]",
		UsageText: "sessionctl prune --older-than 180d --source cli --apply\nsessionctl prune --never-active 60d",
		Flags: dbRepairFlags(forceFlag("with --never-active, delete gateway_routing rows even while a gateway runs (it will likely write them back)"),
			&cli.StringFlag{Name: "older-than", Value: formatAge(statedb.DefaultRetention), Usage: "sessions older than `D` by the generation's age rule (with a unit: s, m, h, d or w)"},
			&cli.StringFlag{Name: "source", Usage: "only sessions of source `S` (cli, tui, telegram, …)"},
			&cli.BoolFlag{Name: "never-active", Usage: "instead, open keyed sessions that never had a turn, started over D ago (default 30d), with their gateway_routing rows (r0817)"}),
		Action: runPrune,
	}
}

func runPrune(c *cli.Context) error {
	never := c.Bool("never-active")
	switch {
	case c.NArg() > 0 && (!never || c.NArg() > 1 || c.IsSet("older-than")):
		return usagef("prune takes no arguments (but the age D of --never-active D)")
	case c.IsSet("source") && (never || c.String("source") == ""):
		return usagef("--source: name a source such as cli or telegram (--never-active takes none)")
	case never && c.NArg() == 1:
		_ = c.Set("older-than", c.Args().First())
	case never && !c.IsSet("older-than"):
		_ = c.Set("older-than", formatAge(statedb.NeverActiveAge))
	}
	older, err := ageFlag(c, "older-than")
	if err != nil {
		return err
	}
	o, r, err := startRepair(c, "prune", home.Database)
	if err != nil {
		return err
	}
	defer r.Close()
	out, sum, err := repair.Retention(c.Context, r, repair.RetentionOptions{OlderThan: older, Source: c.String("source"), NeverActive: never})
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
