package commands

import (
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/urfave/cli/v2"
)

func undoCommand() *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "restore the before-images of an applied change from its journal",
		ArgsUsage: "JOURNAL",
		Flags:     repairFlags(),
		Action:    runUndo,
	}
}

func runUndo(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("undo takes exactly one JOURNAL path")
	}
	path := c.Args().First()
	j, err := journal.Read(path)
	if err != nil {
		return err
	}
	o, r, err := startRepair(c, "undo", home.Restore) // keeps the mirror: undo compares and restores its entries
	if err != nil {
		return err
	}
	defer r.Close()
	out, err := repair.Undo(c.Context, r, path, j)
	if err != nil {
		return err
	}
	return report(o, r.H, outcomeResult(out))
}
