package commands

import (
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/journalset"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/urfave/cli/v2"
)

func undoCommand() *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "restore the before-images of an applied change from its journal (in the home the journal names, unless --home or --profile is given)",
		ArgsUsage: "JOURNAL | --last",
		UsageText: "sessionctl undo --apply ~/.hermes/sessionctl/journal/20260715T120000.000000000Z-suspend.json\nsessionctl undo --last --apply",
		Flags: []cli.Flag{applyFlag(), forceFlag("write routing changes even while a gateway runs (it will likely overwrite them); " +
			"for a restore's journal, go ahead where sessionctl cannot tell whether a gateway runs or which processes hold state.db (you have stopped them)"),
			waitFlag(), &cli.BoolFlag{Name: "last", Usage: "the newest journal of the home not undone yet (not an undo's own; one whose undo stopped part-way is taken again, which finishes that undo)"}},
		Action: runUndo,
	}
}

func runUndo(c *cli.Context) error {
	if c.NArg() != 1 && !c.Bool("last") || c.NArg() != 0 && c.Bool("last") {
		return usagef("undo takes exactly one JOURNAL path, or --last")
	}
	path, err := lastJournal(c)
	if err != nil {
		return err
	}
	j, err := journal.ReadOrTorn(path) // a torn journal is settled by repair.Undo
	if err != nil {
		return err
	}
	fromJournal := !c.IsSet("home") && !c.IsSet("profile") && j.Home != ""
	if fromJournal {
		if err := c.Set("home", j.Home); err != nil {
			return err
		}
	}
	o, err := loadOptions(c, "undo")
	if err != nil {
		return err
	}
	if fromJournal && o.Home.Dir != j.Home {
		// an active_profile in the journal's home chose a profile below it: the journal
		// names the home it changed, and that one is meant
		o.Home.Dir, o.Home.Profile, o.Home.ProfileSource = j.Home, "", ""
	}
	if j.Swap != nil { // a restore's journal: swap the saved files back
		return runUndoRestore(c, o, path, j)
	}
	r, err := startRun(c, o, repair.UndoPurpose(c.Context, j))
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

// lastJournal is the journal undo names: its argument, or with --last the newest journal of
// the home still to undo.
func lastJournal(c *cli.Context) (string, error) {
	if !c.Bool("last") {
		return c.Args().First(), nil
	}
	o, err := loadOptions(c, "undo")
	if err != nil {
		return "", err
	}
	it, err := journalset.Last(o.Home)
	if err != nil {
		return "", err
	}
	return it.Path, nil
}
