package commands

import (
	"github.com/sessionctl/sessionctl/commands/internal/age"
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
		Flags: dbRepairFlags(append([]cli.Flag{forceFlag("with --never-active, delete gateway_routing rows even while a gateway runs (it will likely write them back)"),
			&cli.StringFlag{Name: "older-than", Value: age.Format(statedb.DefaultRetention), Usage: "sessions older than `D` by the generation's age rule (with a unit: s, m, h, d or w)"},
			&cli.StringFlag{Name: "source", Usage: "only sessions of source `S` (cli, tui, telegram, …)"},
			&cli.BoolFlag{Name: "never-active", Usage: "instead, open keyed sessions that never had a turn, started over D ago (default 30d), with their gateway_routing rows (r0817)"}},
			filterFlags("")...)...),
		Action: runPrune,
	}
}

func runPrune(c *cli.Context) error {
	never := c.Bool("never-active")
	filters, _, err := filterArgs(c)
	switch {
	case err != nil:
		return err
	case never && len(filters) > 0:
		return usagef("--never-active takes no filter (prune_never_active_keyed_sessions has none)")
	case c.NArg() > 0 && (!never || c.NArg() > 1 || c.IsSet("older-than")):
		return usagef("prune takes no arguments (but the age D of --never-active D)")
	case c.IsSet("source") && (never || c.String("source") == ""):
		return usagef("--source: name a source such as cli or telegram (--never-active takes none)")
	case never && c.NArg() == 1:
		_ = c.Set("older-than", c.Args().First())
	case never && !c.IsSet("older-than"):
		_ = c.Set("older-than", age.Format(statedb.NeverActiveAge))
	}
	older, err := ageFlag(c, "older-than")
	if err != nil && never && c.NArg() == 1 { // the D of --never-active D, not an --older-than given
		return usagef("--never-active %s: a duration with its unit: %sd, %sh or %sw", c.Args().First(), c.Args().First(), c.Args().First(), c.Args().First())
	} else if err != nil {
		return err
	}
	o, r, err := startRepair(c, "prune", home.Database)
	if err != nil {
		return err
	}
	defer r.Close()
	out, sum, err := repair.Retention(c.Context, r, repair.RetentionOptions{OlderThan: older, Source: c.String("source"), NeverActive: never, Filters: filters})
	if err != nil {
		return err
	}
	return reportSummary(o, r, out, map[string]any{"prune": sum, "batches": out.Batches}, sum.Text())
}

// filterFlags are the flags of the runtime's prune filters (statedb.PruneFilterTable) but skip.
func filterFlags(skip string) []cli.Flag {
	var out []cli.Flag
	for _, f := range statedb.PruneFilterTable {
		if f.Flag() != skip {
			out = append(out, &cli.StringFlag{Name: f.Flag(), Usage: f.Usage})
		}
	}
	return out
}

// filterArgs reads the prune filters given (a time as D before now as well); replaces reports
// whether one of them replaces the --older-than bound, which is then not to be given.
func filterArgs(c *cli.Context) (args []statedb.FilterArg, replaces bool, err error) {
	for _, f := range statedb.PruneFilterTable {
		if !c.IsSet(f.Flag()) {
			continue
		}
		v := c.String(f.Flag())
		a, err := statedb.ParseFilterArg(f.Name, v)
		if age, aerr := age.Parse(v); f.Kind == statedb.FilterTime && aerr == nil {
			a, err = statedb.RelativeFilterArg(f.Name, v, age)
		}
		if err != nil {
			return nil, false, usage(err)
		}
		args, replaces = append(args, a), replaces || f.ReplacesAge
	}
	if replaces && c.IsSet("older-than") {
		return nil, false, usagef("--older-than: a --started-before or --last-active-before filter replaces it (as in the runtime): give one of them")
	}
	return args, replaces, nil
}
