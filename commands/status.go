package commands

import (
	"fmt"

	"github.com/fatih/color"
	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/group"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show the home: paths, gateway, storage model, schema, counts and what the next gateway start will do",
		ArgsUsage: " ",
		UsageText: "sessionctl --profile work status",
		Flags:     []cli.Flag{allFlag(), metricsFlag()},
		Action:    withMetrics(runStatus),
	}
}

func runStatus(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("status takes no arguments")
	}
	o, err := loadOptions(c, "status")
	if err != nil {
		return err
	}
	return showStatus(c, o)
}

func showStatus(c *cli.Context, o *options) error {
	h, err := home.Open(c.Context, o.Options, home.Read)
	if err != nil {
		return err
	}
	defer h.Close()
	data, err := check.Status(c.Context, h)
	if err != nil {
		return err
	}
	if err := o.state.metrics.RecordInspected(c.Context, o.Options); err != nil {
		return err
	}
	findings := check.Scope(h)
	if o.json {
		return emitJSON(o, newEnvelope(h, o, result{data: data, findings: findings, summary: true, next: group.OfNextStart(data.NextStart)}))
	}
	if o.quiet {
		return nil
	}
	return printStatus(o, h, data, findings)
}

func printStatus(o *options, h *home.Home, d check.StatusData, findings []check.Finding) error {
	w := o.stdout
	fmt.Fprintf(w, "home        %s\n", o.Home.Dir)
	if o.Home.Profile != "" {
		fmt.Fprintf(w, "profile     %s (from %s)\n", o.Home.Profile, o.Home.ProfileSource)
	}
	fmt.Fprintf(w, "sessions    %s\n", o.Home.SessionsJSON())
	fmt.Fprintf(w, "state.db    %s\n", o.Home.StateDB())
	fmt.Fprintf(w, "gateway     %s (%s)\n", gatewayWord(o, h.Gateway.Running), h.Gateway.Detail)
	fmt.Fprintf(w, "storage     %s, routing read from %s\n", h.Storage, h.Routing.Source)
	fmt.Fprintf(w, "generation  %s\n", h.Gen)
	if h.DB != nil {
		known := "known"
		if !h.Schema.Known {
			known = o.paint("UNKNOWN (newer than this tool: read-only)", color.FgRed)
		}
		fmt.Fprintf(w, "schema      %s, %s, journal %s, SQLite %s\n", check.SchemaVersionText(h.Schema), known, h.Schema.JournalMode, h.Schema.SQLiteVersion)
	} else {
		fmt.Fprintf(w, "schema      no state.db\n")
	}
	c := d.Counts
	fmt.Fprintf(w, "entries     %s\n", check.EntriesText(h, c))
	fmt.Fprintf(w, "sessions    %d (%d open, %d ended), %d messages\n", c.Sessions, c.OpenSessions, c.EndedSessions, c.Messages)
	fmt.Fprintf(w, "counts      %s\n", check.CountsText(h))
	fmt.Fprintf(w, "shutdown    %s\n", check.ShutdownText(h))
	fmt.Fprintf(w, "holders     %s\n", d.HoldersText())
	printFindings(o, findings)
	fmt.Fprintln(w, "next start, storage:")
	for _, line := range check.StartMaintenanceText(h, d) {
		fmt.Fprintln(w, "  "+line)
	}
	return printNextStart(o, d)
}

func gatewayWord(o *options, running bool) string {
	if running {
		return o.paint("RUNNING", color.FgYellow, color.Bold)
	}
	return "not running"
}

func printNextStart(o *options, d check.StatusData) error {
	if len(d.NextStart) == 0 {
		fmt.Fprintln(o.stdout, "next start  "+d.NoPreviewText())
		return nil
	}
	fmt.Fprintln(o.stdout, "next start:")
	keep := printGroups(o, group.OfNextStart(d.NextStart), "action(s)")
	rows := make([][]string, 0, len(d.NextStart))
	for i, a := range d.NextStart {
		if keep(i) {
			rows = append(rows, []string{a.Key, a.Action, a.Reason})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return renderTable(o.stdout, []string{"KEY", "ACTION", "WHY"}, rows)
}

// printFindings prints one line a finding, a check's findings folded into one line when
// there are more than group.Fit of them (without --all), the totals first then.
func printFindings(o *options, findings []check.Finding) {
	sum := group.OfFindings(findings)
	if sum.Cut() && !o.all {
		fmt.Fprintln(o.stdout, sum.Head())
	}
	for i, f := range findings {
		if g, ok := sum.Line(i, o.all); g != nil {
			fmt.Fprintf(o.stdout, "%s %s\n", severityWord(o, f.Severity), listout.Printable(g.Text(o.allHint), false))
		} else if ok {
			fmt.Fprintf(o.stdout, "%s %s %s: %s\n", severityWord(o, f.Severity), f.Check, listout.Printable(f.Subject, false), listout.Printable(f.Message, false))
		}
	}
}

// printGroups prints the folded groups of sum, each on one line after a head line, and
// returns keep: whether subject i is printed on its own.
func printGroups(o *options, sum *group.Summary, noun string) (keep func(int) bool) {
	if sum.Cut() && !o.all {
		fmt.Fprintln(o.stdout, sum.Head(noun))
	}
	for i := range sum.Total {
		if g, _ := sum.Line(i, o.all); g != nil {
			fmt.Fprintln(o.stdout, "  "+listout.Printable(g.Text(o.allHint), false))
		}
	}
	return func(i int) bool { g, ok := sum.Line(i, o.all); return ok && g == nil }
}

func severityWord(o *options, sev check.Severity) string {
	switch sev {
	case check.Error:
		return o.paint("ERROR", color.FgRed, color.Bold)
	case check.Warn:
		return o.paint("WARN ", color.FgYellow)
	default:
		return "INFO "
	}
}
