package commands

import (
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/urfave/cli/v2"
)

func entriesRmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove routing entries where the runtime reads them (sessions.json, or gateway_routing and its mirror)",
		ArgsUsage: "KEY...",
		UsageText: "sessionctl entries rm --apply agent:main:telegram:dm:168716681",
		Flags:     repairFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usagef("entries rm needs at least one KEY")
			}
			o, r, err := startRepair(c, "entries rm", home.Read)
			if err != nil {
				return err
			}
			return runRouting(c, o, r, repair.RemoveEntries(c.Args().Slice()))
		},
	}
}

func entriesSetCommand() *cli.Command {
	return &cli.Command{
		Name:      "set",
		Usage:     "set fields the runtime reads on one entry, typed as its to_dict writes them (suspended=true, resume_reason=null)",
		ArgsUsage: "KEY FIELD=VALUE...",
		UsageText: "sessionctl entries set --apply agent:main:telegram:dm:168716681 suspended=false",
		Flags:     repairFlags(),
		Action:    runEntriesSet,
	}
}

func runEntriesSet(c *cli.Context) error {
	if c.NArg() < 2 {
		return usagef("entries set needs a KEY and at least one FIELD=VALUE")
	}
	var sets []repair.Assignment
	for _, arg := range c.Args().Slice()[1:] {
		field, value, ok := strings.Cut(arg, "=")
		if !ok || field == "" {
			return usagef("entries set: %q is not FIELD=VALUE", arg)
		}
		sets = append(sets, repair.Assignment{Field: field, Text: value})
	}
	o, r, err := startRepair(c, "entries set", home.Read)
	if err != nil {
		return err
	}
	return runRouting(c, o, r, repair.SetFields(c.Args().First(), sets))
}

func relocateCommand() *cli.Command {
	return &cli.Command{
		Name:      "relocate",
		UsageText: "sessionctl --home /srv/hermes relocate --apply",
		Usage:     "move the gateway_routing rows of the home's old path to its current one (a home moved or copied: v19+)",
		ArgsUsage: " ",
		Flags:     repairFlags(&cli.StringFlag{Name: "from", Usage: "the old scope `SCOPE`, when rows of several other scopes exist"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("relocate takes no arguments")
			}
			o, r, err := startRepair(c, "relocate", home.Read)
			if err != nil {
				return err
			}
			defer r.Close()
			out, rel, err := repair.Relocate(c.Context, r, c.String("from"))
			if err != nil {
				return err
			}
			res := outcomeResult(out)
			res.data = map[string]any{"relocation": rel}
			return report(o, r.H, res)
		},
	}
}
