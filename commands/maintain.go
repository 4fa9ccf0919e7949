package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/commands/internal/storage"
	"github.com/urfave/cli/v2"
)

func maintainCommand() *cli.Command {
	return &cli.Command{
		Name:      "maintain",
		Usage:     "one unattended run for cron: check, then (with --apply) every safe repair; one summary line",
		ArgsUsage: " ",
		UsageText: "sessionctl -q maintain --apply\nsessionctl maintain --apply --backup /var/backups/hermes --prune 90d --compact",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "apply", Usage: "run the repairs; without it, check and report what would be done"},
			failOnFlag("`LEVEL` of remaining findings that fails the run: error, warn or never"),
			&cli.StringSliceFlag{Name: "ignore", Usage: "leave the findings of check `ID` out: not printed, not counted for --fail-on (repeatable)"},
			&cli.StringFlag{Name: "backup", Usage: "first, before any write, back up the home into a new <time> directory in `DIR` (as backup --to DIR)"},
			&cli.StringFlag{Name: "prune", Usage: "after the repairs, prune the ended sessions older than `D` (as prune --older-than D)"},
			&cli.BoolFlag{Name: "compact", Usage: "last, compact state.db (as compact; skipped, with a finding, where compact would refuse)"},
			waitFlag(), allFlag(), metricsFlag(),
		},
		Action: withMetrics(runMaintain),
	}
}

// failOnFlag is --fail-on of check and maintain.
func failOnFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "fail-on", Value: string(check.FailOnError), Usage: usage}
}

// parseFailOn reads --fail-on (a usage error when it is not a level).
func parseFailOn(c *cli.Context) (check.FailOn, error) {
	failOn, err := check.ParseFailOn(c.String("fail-on"))
	if err != nil {
		return "", usage(err)
	}
	return failOn, nil
}

func runMaintain(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("maintain takes no arguments")
	}
	failOn, err := parseFailOn(c)
	if err != nil {
		return err
	}
	ignore, err := parseIgnore(c.StringSlice("ignore"))
	if err != nil {
		return err
	}
	opts, err := hygieneOptions(c)
	if err != nil {
		return err
	}
	o, err := loadOptions(c, "maintain")
	if err != nil {
		return err
	}
	if opts.Backup, err = storage.BackupStep(c.String("backup")); err != nil {
		return err
	}
	opts.Options = repair.Options{Apply: c.Bool("apply"), BatchRows: o.settings.batchRows, BatchTarget: o.settings.batchTarget, Ignore: ignore}
	rep, err := repair.Maintain(c.Context, o.Options, opts)
	if err != nil {
		return err
	}
	defer rep.Home.Close()
	return reportMaintain(c.Context, o, rep, failOn)
}

// hygieneOptions reads maintain's optional steps --prune D and --compact, and checks that
// --backup names a directory.
func hygieneOptions(c *cli.Context) (repair.MaintainOptions, error) {
	opts := repair.MaintainOptions{Compact: storage.CompactStep(c.Bool("compact"))}
	if c.IsSet("backup") && c.String("backup") == "" {
		return opts, usagef("--backup: empty: name the directory the backup goes into")
	}
	if c.IsSet("prune") {
		older, err := ageFlag(c, "prune")
		opts.Prune = &repair.RetentionOptions{OlderThan: older}
		return opts, err
	}
	return opts, nil
}

// parseIgnore reads --ignore: check ids (a usage error naming the valid ones otherwise).
func parseIgnore(values []string) (map[check.ID]bool, error) {
	known := map[check.ID]bool{}
	for _, id := range check.All {
		known[id] = true
	}
	ignore := map[check.ID]bool{}
	for _, v := range values {
		id := check.ID(strings.TrimSpace(v))
		if !known[id] {
			ids := make([]string, len(check.All))
			for i, id := range check.All {
				ids[i] = string(id)
			}
			return nil, usagef("--ignore %q is not a check id%s (check ids: %s)", v, didYouMean(v, ids), strings.Join(ids, ", "))
		}
		ignore[id] = true
	}
	return ignore, nil
}

// reportMaintain writes --metrics-file, then prints the summary line (or the envelope). Exit:
// 4 when writes were refused with --apply, else 1 when a remaining finding (not ignored) is at
// or above failOn, else 0; a metrics file that could not be written turns 0 or 1 into 4.
// Under --quiet it prints only when the exit is not 0: cron mails only what needs a human.
func reportMaintain(ctx context.Context, o *options, rep *repair.MaintainReport, failOn check.FailOn) error {
	findings, data := rep.Findings, rep.Data
	code := failCode(failOn, findings)
	if rep.Data.Refused { // 4 on an unwritable schema; a runtime guard's own code (3: its repair lock)
		code = exitCode(ctx, rep.RefusedBy)
	}
	merr := o.state.metrics.RecordMaintain(ctx, rep, code)
	if merr != nil && code <= ExitFindings {
		code = ExitData
	}
	data.Ignored = orEmpty(data.Ignored)
	if o.json {
		res := result{applied: data.Changed > 0, findings: findings, changes: rep.Changes, journals: data.Journals, exitCode: code, data: data, summary: true}
		env := newEnvelope(rep.Home, o, res)
		if rep.Data.Refused {
			env.Error = &errorJSON{Code: code, Kind: errorKind(code), Message: rep.Refusal()}
		} else if merr != nil {
			env.Error = &errorJSON{Code: code, Kind: errorKind(code), Message: oneLine(merr)}
		}
		if err := emitJSON(o, env); err != nil {
			return err
		}
	} else if !o.quiet || code != ExitOK {
		if code != ExitOK {
			printFindings(o, findings)
		}
		fmt.Fprintln(o.stdout, maintainSummary(data, findings))
	}
	switch {
	case rep.Data.Refused:
		if merr != nil {
			o.warn("%s", oneLine(merr))
		}
		return errors.Join(errReported, rep.RefusedBy)
	case merr != nil:
		return merr
	case code == ExitFindings:
		return errFindings
	}
	return nil
}

func maintainSummary(data repair.MaintainData, findings []check.Finding) string {
	done := fmt.Sprintf("%d change(s) applied, %d journal(s)", data.Changed, len(data.Journals))
	if data.Planned > 0 {
		done = fmt.Sprintf("%d change(s) planned (run with --apply to make them)", data.Planned)
	}
	if b, ok := data.Backup.(*storage.BackupData); ok {
		done += ", backup " + b.Backup
	}
	skipped := ""
	if len(data.Skipped) > 0 {
		skipped = "; skipped: " + strings.Join(data.Skipped, ", ")
	}
	if n := len(data.Ignored); n > 0 {
		skipped += fmt.Sprintf("; %d finding(s) ignored (--ignore)", n)
	}
	return fmt.Sprintf("maintain: %d problem(s) found, %s%s; remaining: %s", data.Found, done, skipped, check.Summarise(findings))
}
