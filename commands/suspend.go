package commands

import (
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

func suspendCommand() *cli.Command {
	return &cli.Command{
		Name:      "suspend",
		Usage:     "suspend entries: the next message starts a fresh session (the runtime's suspend_session)",
		ArgsUsage: "KEY...",
		UsageText: "sessionctl suspend --apply agent:main:telegram:dm:123456789",
		Flags:     repairFlags(),
		Action:    func(c *cli.Context) error { return runSetSuspended(c, "suspend", true) },
	}
}

func unsuspendCommand() *cli.Command {
	return &cli.Command{
		Name:      "unsuspend",
		Usage:     "clear the suspended flag",
		ArgsUsage: "KEY...",
		UsageText: "sessionctl unsuspend --apply agent:main:telegram:dm:123456789",
		Flags:     repairFlags(),
		Action:    func(c *cli.Context) error { return runSetSuspended(c, "unsuspend", false) },
	}
}

func runSetSuspended(c *cli.Context, command string, value bool) error {
	if c.NArg() == 0 {
		return usagef("%s needs at least one KEY", command)
	}
	o, r, err := startRepair(c, command, home.Read)
	if err != nil {
		return err
	}
	return runRouting(c, o, r, repair.SetSuspended(c.Args().Slice(), value))
}

func suspendStuckCommand() *cli.Command {
	return &cli.Command{
		Name:      "suspend-stuck",
		Usage:     "suspend entries whose restart count is at or over the threshold (the gateway's stuck-loop rule)",
		ArgsUsage: " ",
		UsageText: "sessionctl suspend-stuck --threshold 5 --apply",
		Flags:     repairFlags(&cli.IntFlag{Name: "threshold", Value: sessionsjson.StuckLoopThreshold, Usage: "restart count `N` that marks a stuck loop"}),
		Action:    runSuspendStuck,
	}
}

func runSuspendStuck(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("suspend-stuck takes no arguments")
	}
	threshold := c.Int("threshold")
	if threshold < 1 {
		return usagef("--threshold must be 1 or more")
	}
	o, r, err := startRepair(c, "suspend-stuck", home.Read)
	if err != nil {
		return err
	}
	return runRouting(c, o, r, repair.SuspendStuck(int64(threshold)))
}

func repointCommand() *cli.Command {
	return &cli.Command{
		Name:      "repoint",
		Usage:     "point entries on a compression-ended session at its continuation (the compression tip)",
		ArgsUsage: " ",
		UsageText: "sessionctl repoint --apply",
		Flags:     repairFlags(),
		Action:    runRepoint,
	}
}

func runRepoint(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("repoint takes no arguments")
	}
	o, r, err := startRepair(c, "repoint", home.Read)
	if err != nil {
		return err
	}
	if err := repair.RepointAvailable(r.H); err != nil {
		r.Close()
		return err
	}
	return runRouting(c, o, r, repair.Repoint)
}
