package commands

import (
	"errors"
	"fmt"
	"math"
	"strconv"

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
					&cli.StringFlag{Name: "max-age", Value: formatAge(repair.StaleMaxAge), Usage: "age `D` for --stale, with a unit: s, m, h, d or w (90m, 1h, 2d)"},
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

// ageUnits are the units of an age, in seconds.
var ageUnits = map[byte]float64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 7 * 86400}

// errNoUnit is parseAge's error for a bare number: an age needs a unit.
var errNoUnit = errors.New("a duration needs a unit")

// parseAge parses an age into seconds: a number with a unit, s, m, h, d or w ("90m", "7d",
// "0.5d", "2w"), or several such ("1h30m"). A bare number ("7") is refused with errNoUnit:
// seconds or days would both be a guess.
func parseAge(s string) (float64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty: give a duration like 90m, 12h, 7d or 2w")
	}
	total := 0.0
	for rest := s; rest != ""; {
		n := numberPrefix(rest)
		if n == 0 {
			return 0, fmt.Errorf("%q is not a duration like 90m, 12h, 7d or 2w", s)
		}
		if n == len(rest) {
			return 0, errNoUnit
		}
		unit, ok := ageUnits[rest[n]]
		if !ok {
			return 0, fmt.Errorf("%q: unknown unit %q (use s, m, h, d or w)", s, rest[n:])
		}
		v, err := strconv.ParseFloat(rest[:n], 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration like 90m, 12h, 7d or 2w", s)
		}
		total += v * unit
		rest = rest[n+1:]
	}
	if math.IsInf(total, 0) {
		return 0, fmt.Errorf("%q is too long", s)
	}
	return total, nil
}

// numberPrefix is the length of the unsigned decimal number (digits, at most one point) that
// starts s, 0 when none does.
func numberPrefix(s string) int {
	digits, point, i := 0, false, 0
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point:
			point = true
		default:
			if digits == 0 {
				return 0
			}
			return i
		}
	}
	if digits == 0 {
		return 0
	}
	return i
}

// ageFlag reads the age given to flag name; a bad one is a usage error naming the flag, with
// the units spelled out when the number lacks one.
func ageFlag(c *cli.Context, name string) (float64, error) {
	value := c.String(name)
	age, err := parseAge(value)
	if errors.Is(err, errNoUnit) {
		return 0, usagef("--%s %s: %v: %sd, %sh, %sm, %ss or %sw", name, value, err, value, value, value, value, value)
	}
	if err != nil {
		return 0, usagef("--%s: %v", name, err)
	}
	return age, nil
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
