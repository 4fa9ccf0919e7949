package commands

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

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
					&cli.StringFlag{Name: "max-age", Value: "1h", Usage: "age `D` for --stale (e.g. 90m, 1h, 2d)"},
				),
				Action: runResumeClear,
			},
		},
	}
}

func runResumeMark(c *cli.Context) error {
	reason := c.String("reason")
	if !autoResumeReasons[reason] {
		return usagef("--reason must be restart_timeout, shutdown_timeout or restart_interrupted, not %q", reason)
	}
	if c.NArg() == 0 {
		return usagef("resume mark needs at least one KEY")
	}
	r, err := startRepair(c, "resume mark")
	if err != nil {
		return err
	}
	stamp := sessionsjson.FormatNaive(r.o.clock.NaiveLocalMicros(time.Local))
	var p routingPlan
	for _, key := range c.Args().Slice() {
		e, f := lookupForEdit(r.v, key)
		if f != nil {
			p.findings = append(p.findings, *f)
			continue
		}
		if e.Suspended {
			p.findings = append(p.findings, Finding{"resume.suspended", sevWarn, key,
				"entry is suspended: the runtime refuses to mark it (unsuspend first if a resume is wanted)"})
			continue
		}
		p.edits = append(p.edits, entryEdit{key, []fieldEdit{{"resume_pending", true}, {"resume_reason", reason}, {"last_resume_marked_at", stamp}}})
	}
	return runRoutingRepair(r, p)
}

// lookupForEdit finds a loadable entry or explains why it cannot be edited.
func lookupForEdit(v *homeView, key string) (*sessionsjson.Entry, *Finding) {
	e := v.entry(key)
	if e == nil {
		return nil, &Finding{"entry.unknown", sevWarn, key, "no such routing entry (see sessionctl entries list)"}
	}
	if e.Skip != "" {
		return nil, &Finding{"entry.skipped", sevWarn, key, "the runtime skips this entry (" + e.Skip + "); not edited"}
	}
	return e, nil
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
	r, err := startRepair(c, "resume clear")
	if err != nil {
		return err
	}
	return runRoutingRepair(r, planResumeClear(r.v, c.Args().Slice(), all, stale, maxAge))
}

// planResumeClear selects the entries to clear: the keys given, every pending one, or the
// pending ones whose marker is older than maxAge seconds.
func planResumeClear(v *homeView, keys []string, all, stale bool, maxAge float64) routingPlan {
	var p routingPlan
	clear := []fieldEdit{{"resume_pending", false}, {"resume_reason", nil}, {"last_resume_marked_at", nil}}
	if all || stale {
		now := v.opts.clock.NaiveLocalMicros(time.Local)
		for _, e := range v.loaded() {
			if e.ResumePending && (all || float64(markerAge(e, now)) > maxAge*1e6) {
				p.edits = append(p.edits, entryEdit{e.Key, clear})
			}
		}
		return p
	}
	for _, key := range keys {
		e, f := lookupForEdit(v, key)
		if f != nil {
			p.findings = append(p.findings, *f)
			continue
		}
		if !e.ResumePending {
			p.findings = append(p.findings, Finding{"resume.not-pending", sevInfo, key, "not resume_pending: nothing to clear"})
			continue
		}
		p.edits = append(p.edits, entryEdit{key, clear})
	}
	return p
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
