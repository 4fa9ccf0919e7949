package commands

import (
	"errors"

	"github.com/sessionctl/sessionctl/commands/internal/age"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "set or clear resume_pending (the runtime's mark_resume_pending / clear_resume_pending)",
		UsageText: "sessionctl resume clear --stale --apply",
		Subcommands: []*cli.Command{
			{
				Name:      "mark",
				Usage:     "mark entries resume_pending: the next start auto-resumes them",
				ArgsUsage: "KEY...",
				UsageText: "sessionctl resume mark --reason shutdown_timeout --apply agent:main:telegram:dm:123456789",
				Flags: repairFlags(&cli.StringFlag{Name: "reason", Value: "restart_timeout",
					Usage: "`R`: restart_timeout, shutdown_timeout or restart_interrupted"}),
				Action: runResumeMark,
			},
			{
				Name:      "clear",
				Usage:     "clear resume_pending, resume_reason and last_resume_marked_at",
				ArgsUsage: "KEY... | --all | --stale",
				UsageText: "sessionctl resume clear --apply agent:main:telegram:dm:123456789\nsessionctl resume clear --stale --max-age 2h --apply",
				Flags: repairFlags(
					&cli.BoolFlag{Name: "all", Usage: "every entry with resume_pending"},
					&cli.BoolFlag{Name: "stale", Usage: "markers older than --max-age"},
					&cli.StringFlag{Name: "max-age", Value: age.Format(repair.StaleMaxAge), Usage: "age `D` for --stale, with a unit: s, m, h, d or w (90m, 1h, 2d)"},
				),
				Action: runResumeClear,
			},
		},
	}
}

func runResumeMark(c *cli.Context) error {
	reason := c.String("reason")
	if !sessionsjson.IsAutoResumeReason(reason) {
		return usagef("--reason must be restart_timeout, shutdown_timeout or restart_interrupted, not %q", reason)
	}
	if c.NArg() == 0 {
		return usagef("resume mark needs at least one KEY")
	}
	o, r, err := startRepair(c, "resume mark", home.Read)
	if err != nil {
		return err
	}
	return runRouting(c, o, r, repair.ResumeMark(c.Args().Slice(), reason))
}

func runResumeClear(c *cli.Context) error {
	all, stale := c.Bool("all"), c.Bool("stale")
	if (all || stale) == (c.NArg() > 0) || (all && stale) {
		return usagef("resume clear takes KEY..., or --all, or --stale")
	}
	maxAge, err := ageFlag(c, "max-age")
	if err != nil {
		return err
	}
	o, r, err := startRepair(c, "resume clear", home.Read)
	if err != nil {
		return err
	}
	sel := repair.ClearSelection{Keys: c.Args().Slice(), All: all, Stale: stale, MaxAge: maxAge}
	return runRouting(c, o, r, repair.ResumeClear(sel))
}

// ageFlag reads the age given to flag name; a bad one is a usage error naming the flag, with
// the units spelled out when the number lacks one.
func ageFlag(c *cli.Context, name string) (float64, error) {
	value := c.String(name)
	seconds, err := age.Parse(value)
	if errors.Is(err, age.ErrNoUnit) {
		return 0, usagef("--%s %s: %v: %sd, %sh, %sm, %ss or %sw", name, value, err, value, value, value, value, value)
	}
	if err != nil {
		return 0, usagef("--%s: %v", name, err)
	}
	return seconds, nil
}
