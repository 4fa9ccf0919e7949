package commands

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:  "resume",
		Usage: "set or clear resume_pending (the runtime's mark_resume_pending / clear_resume_pending)",
		Subcommands: []*cli.Command{
			{
				Name:      "mark",
				Usage:     "mark entries resume_pending: the next start auto-resumes them",
				ArgsUsage: "KEY...",
				Flags: repairFlags(&cli.StringFlag{Name: "reason", Value: "restart_timeout",
					Usage: "`R`: restart_timeout, shutdown_timeout or restart_interrupted"}),
				Action: runResumeMark,
			},
			{
				Name:      "clear",
				Usage:     "clear resume_pending, resume_reason and last_resume_marked_at",
				ArgsUsage: "KEY... | --all | --stale",
				Flags: repairFlags(
					&cli.BoolFlag{Name: "all", Usage: "every entry with resume_pending"},
					&cli.BoolFlag{Name: "stale", Usage: "markers older than --max-age"},
					&cli.StringFlag{Name: "max-age", Value: formatAge(repair.StaleMaxAge), Usage: "age `D` for --stale (e.g. 90m, 1h, 2d)"},
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
	maxAge, err := parseAge(c.String("max-age"))
	if err != nil {
		return usagef("--max-age: %v", err)
	}
	o, r, err := startRepair(c, "resume clear", home.Read)
	if err != nil {
		return err
	}
	sel := repair.ClearSelection{Keys: c.Args().Slice(), All: all, Stale: stale, MaxAge: maxAge}
	return runRouting(c, o, r, repair.ResumeClear(sel))
}

// parseAge parses an age like "90s", "90m", "1h", "7d" or plain seconds, into seconds.
func parseAge(s string) (float64, error) {
	bad := fmt.Errorf("%q is not an age like 90m, 1h or 7d", s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, bad
		}
		return d.Seconds(), nil
	}
	unit := 1.0
	number := s
	if strings.HasSuffix(s, "d") {
		unit, number = 86400, strings.TrimSuffix(s, "d")
	}
	n, err := strconv.ParseFloat(number, 64)
	if err != nil || n < 0 || math.IsInf(n*unit, 0) || math.IsNaN(n) {
		return 0, bad
	}
	return n * unit, nil
}

// formatAge writes seconds as an age parseAge reads back: whole days from two days on as
// "7d", whole hours as "24h", else seconds with "s".
func formatAge(seconds float64) string {
	switch {
	case seconds >= 2*86400 && math.Mod(seconds, 86400) == 0:
		return strconv.FormatFloat(seconds/86400, 'f', -1, 64) + "d"
	case seconds >= 3600 && math.Mod(seconds, 3600) == 0:
		return strconv.FormatFloat(seconds/3600, 'f', -1, 64) + "h"
	}
	return strconv.FormatFloat(seconds, 'f', -1, 64) + "s"
}
