package commands

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/sessionctl/sessionctl/commands/internal/age"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

func finalizeOrphansCommand() *cli.Command {
	return &cli.Command{
		Name:      "finalize-orphans",
		Usage:     "end orphaned compression continuations (the runtime's finalize_orphaned_compression_sessions)",
		ArgsUsage: " ",
		UsageText: "sessionctl finalize-orphans --min-age 14d --apply",
		Flags:     dbRepairFlags(minAgeFlag(statedb.DefaultOrphanMinAge, "continuations")),
		Action:    func(c *cli.Context) error { return runDBRepair(c, "finalize-orphans", repair.Finalize) },
	}
}

func pruneGhostsCommand() *cli.Command {
	return &cli.Command{
		Name:      "prune-ghosts",
		Usage:     "delete empty, untitled, ended TUI sessions and their transcript files (the runtime's prune_empty_ghost_sessions)",
		ArgsUsage: " ",
		UsageText: "sessionctl prune-ghosts --apply",
		Flags:     dbRepairFlags(minAgeFlag(statedb.DefaultGhostMinAge, "ghosts")),
		Action:    func(c *cli.Context) error { return runDBRepair(c, "prune-ghosts", repair.Prune) },
	}
}

// minAgeFlag is --min-age with the runtime's default age for the repair.
func minAgeFlag(seconds float64, what string) cli.Flag {
	return &cli.StringFlag{Name: "min-age", Value: age.Format(seconds), Usage: "only " + what + " started more than `D` ago (with a unit: s, m, h, d or w)"}
}

// runDBRepair runs a state.db repair: plan, or with --apply batches under the write lock.
func runDBRepair(c *cli.Context, command string, run func(context.Context, *repair.Run, float64) (repair.Outcome, error)) error {
	if c.NArg() > 0 {
		return usagef("%s takes no arguments", command)
	}
	minAge, err := ageFlag(c, "min-age")
	if err != nil {
		return err
	}
	o, r, err := startRepair(c, command, home.Database)
	if err != nil {
		return err
	}
	defer r.Close()
	if os.Getenv("GOGC") == "" { // little stays live: collect at 5× it (docs/decisions.md, "Collections")
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	if err := repair.DBRepairAvailable(r.H, command); err != nil {
		return err
	}
	out, err := run(c.Context, r, minAge)
	if err != nil {
		return err
	}
	return report(o, r.H, outcomeResult(out))
}
