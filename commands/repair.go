package commands

import (
	"fmt"
	"github.com/sessionctl/sessionctl/commands/internal/listout"

	"github.com/sessionctl/sessionctl/commands/internal/group"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/urfave/cli/v2"
)

// applyFlag is --apply: a write command prints its plan unless given it.
func applyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "apply", Usage: "write the change; without it, only the plan is printed"}
}

// forceFlag is --force of a write refused while a gateway runs; usage says what it overrides.
func forceFlag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: usage}
}

// repairFlags are the flags of a routing-index repair: --apply, --force, then extra.
func repairFlags(extra ...cli.Flag) []cli.Flag {
	flags := append([]cli.Flag{applyFlag(), forceFlag("write routing changes even while a gateway runs (it will likely overwrite them)"), waitFlag()}, extra...)
	for _, f := range extra {
		if f.Names()[0] == "all" { // resume clear's --all selects
			return flags
		}
	}
	return append(flags, allFlag())
}

// dbRepairFlags are the flags of a state.db repair, which may run while a gateway runs:
// --apply, --wait, then extra.
func dbRepairFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{applyFlag(), waitFlag(), allFlag()}, extra...)
}

// startRepair resolves the options of a repair command and starts the engine's run on the
// home opened for purpose (taking the lock with --apply).
func startRepair(c *cli.Context, command string, purpose home.Purpose) (*options, *repair.Run, error) {
	o, err := loadOptions(c, command)
	if err != nil {
		return nil, nil, err
	}
	r, err := startRun(c, o, purpose)
	if err != nil {
		return nil, nil, err
	}
	return o, r, nil
}

// startRun starts the engine's run of a repair command whose options are resolved.
func startRun(c *cli.Context, o *options, purpose home.Purpose) (*repair.Run, error) {
	return repair.Start(c.Context, o.Options, purpose, repair.Options{
		Apply: c.Bool("apply"), Force: c.Bool("force"), BatchRows: o.settings.batchRows, BatchTarget: o.settings.batchTarget})
}

// runRouting plans, and with --apply writes, a routing repair on the started run.
func runRouting(c *cli.Context, o *options, r *repair.Run, plan repair.Planner) error {
	defer r.Close()
	out, err := repair.Routing(c.Context, r, plan)
	if err != nil {
		return err
	}
	return report(o, r.H, outcomeResult(out))
}

// report prints the outcome of a repair (plan or applied).
func report(o *options, h *home.Home, res result) error {
	if o.json {
		res.exitCode = ExitOK
		return emitJSON(o, newEnvelope(h, o, res))
	}
	if !o.quiet || res.applied {
		printFindings(o, res.findings)
	}
	if o.quiet {
		return nil
	}
	if err := printChanges(o, res.changes); err != nil {
		return err
	}
	n := len(res.changes)
	switch {
	case n == 0:
		fmt.Fprintln(o.stdout, "nothing to change")
	case res.applied:
		journal := res.journals[len(res.journals)-1]
		fmt.Fprintf(o.stdout, "applied %d change%s; journal: %s (undo with: %s)\n", n, plural(n, "", "s"), journal, undoHint(o, journal))
	default:
		fmt.Fprintf(o.stdout, "plan only: %d change%s; %s\n", n, plural(n, "", "s"), repair.PlanNote(h))
	}
	return nil
}

func printChanges(o *options, changes []repair.Change) error {
	if len(changes) == 0 {
		return nil
	}
	keep := printGroups(o, group.OfChanges(changes), "change(s)")
	rows := make([][]string, 0, len(changes))
	for i, c := range changes {
		if !keep(i) {
			continue
		}
		rows = append(rows, []string{c.Store, c.Target, c.Op, repair.ShowValue(c.Before), repair.ShowValue(c.After)})
	}
	if len(rows) == 0 {
		return nil
	}
	return renderTable(o.stdout, []string{"STORE", "TARGET", "OP", "BEFORE", "AFTER"}, rows)
}

// undoHint is the command that undoes journal, as it can be pasted into a shell.
func undoHint(o *options, journal string) string {
	return "sessionctl --home " + listout.ShellQuote(o.Home.Dir) + " undo " + listout.ShellQuote(journal) + " --apply"
}

// reportSummary reports a write whose data is data, people reading its one-line summary
// first.
func reportSummary(o *options, r *repair.Run, out repair.Outcome, data map[string]any, summary string) error {
	res := outcomeResult(out)
	res.data = data
	if !o.json && !o.quiet {
		fmt.Fprintln(o.stdout, summary)
	}
	return report(o, r.H, res)
}
