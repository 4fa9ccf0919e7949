package commands

import (
	"fmt"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/age"
	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

func entriesCommand() *cli.Command {
	return &cli.Command{
		Name:      "entries",
		Usage:     "routing entries (sessions.json or gateway_routing)",
		UsageText: "sessionctl entries list --resume-pending",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list routing entries with their state.db row and restart count",
				ArgsUsage: " ",
				UsageText: "sessionctl entries list --platform telegram --suspended",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "resume-pending", Usage: "only entries with resume_pending"},
					&cli.BoolFlag{Name: "suspended", Usage: "only suspended entries"},
					&cli.StringFlag{Name: "platform", Usage: "only entries of platform `P`"},
					&cli.BoolFlag{Name: "stale", Usage: "only resume markers older than the 1 h freshness window"},
					&cli.IntFlag{Name: "limit", Value: 50, Usage: "show the `N` most recently updated entries (0: all)"},
					formatFlag(),
				},
				Action: runEntriesList,
			},
			{
				Name:      "show",
				Usage:     "show one entry, every field, with its row and lineage",
				ArgsUsage: "KEY",
				UsageText: "sessionctl entries show agent:main:telegram:dm:123456789",
				Action:    runEntriesShow,
			},
			{
				Name:      "prune",
				Usage:     "drop entries not updated for D, suspended ones kept (the gateway's prune_old_entries; undoable)",
				ArgsUsage: " ",
				UsageText: "sessionctl entries prune --older-than 30d --apply",
				Flags: repairFlags(&cli.StringFlag{Name: "older-than", Value: age.Format(sessionsjson.SessionStoreMaxAgeDays * 86400),
					Usage: "entries whose updated_at is older than `D` (session_store_max_age_days)"}),
				Action: runEntriesPrune,
			},
			entriesRmCommand(),
			entriesSetCommand(),
		},
	}
}

func runEntriesList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("entries list takes no arguments")
	}
	o, err := loadOptions(c, "entries list")
	if err != nil {
		return err
	}
	f := home.EntryQuery{ResumePending: c.Bool("resume-pending"), Suspended: c.Bool("suspended"), Stale: c.Bool("stale"),
		Platform: c.String("platform"), Limit: c.Int("limit")}
	if f.Limit < 0 {
		return usagef("--limit must be 0 or more")
	}
	format, err := listFormat(c, o)
	if err != nil {
		return err
	}
	return listEntries(c, o, f, format)
}

// listEntries writes the entries f selects in format, as they are read (a db-primary home's
// page by page: home.List). The table and CSV/TSV give the findings about the routing index on
// stderr (the table on stdout, before it); the table's count follows it.
func listEntries(c *cli.Context, o *options, f home.EntryQuery, format listout.Format) error {
	h, err := home.Open(c.Context, o.Options, home.List)
	if err != nil {
		return err
	}
	defer h.Close()
	findings := check.Scope(h)
	switch {
	case format == listout.Table && o.quiet: // read all the same: a fault still fails the run
		_, err := h.EachEntryRow(c.Context, f, func(home.EntryRow) error { return nil })
		return err
	case format == listout.Table:
		printFindings(o, findings)
	case format != listout.JSON && format != listout.NDJSON:
		printFindings(&options{stdout: o.stderr}, findings)
	}
	now := o.Clock.NaiveLocalMicros(time.Local)
	out, err := startList(c, o, format, newEnvelope(h, o, result{findings: findings}), listout.Spec[home.EntryRow]{Field: "entries", Indented: true,
		Table: tableOf("KEY", "SESSION", "FLAGS", "UPDATED", "ROW", "RESTARTS"), Cells: func(r home.EntryRow) []string {
			return []string{r.Key, r.SessionID, check.EntryFlags(h, r), check.Age(now, r.Updated.WallMicros()), check.RowLabel(r), check.CountLabel(r.RestartCount)}
		}})
	if err != nil {
		return err
	}
	shown := 0
	total, err := h.EachEntryRow(c.Context, f, func(r home.EntryRow) error {
		shown++
		return out.Add(r)
	})
	if err = out.End(err, map[string]any{"total": total, "source": h.Routing.Source.String()}); err != nil || format != listout.Table {
		return err
	}
	fmt.Fprintf(o.stdout, "%d entr%s from %s\n", total, plural(total, "y", "ies"), h.Routing.Source)
	noteLimit(o, shown, total)
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func runEntriesShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("entries show takes exactly one KEY")
	}
	o, err := loadOptions(c, "entries show")
	if err != nil {
		return err
	}
	return showEntry(c, o, c.Args().First())
}

func showEntry(c *cli.Context, o *options, key string) error {
	h, err := home.Open(c.Context, o.Options, home.Read)
	if err != nil {
		return err
	}
	defer h.Close()
	e := h.Entry(key)
	if e == nil {
		return failure.Mark(failure.Data, fmt.Errorf("no routing entry %q in %s", key, h.Routing.Source))
	}
	rows, err := h.Rows(c.Context)
	if err != nil {
		return err
	}
	lineage, err := h.LineageRows(c.Context, e.SessionID)
	if err != nil {
		return err
	}
	story, err := check.KeyStory(c.Context, h, e)
	if err != nil {
		return err
	}
	row := home.RowState(rows, e.SessionID)
	data := map[string]any{"key": key, "entry": home.JSONSafe(e.Raw()), "row": row, "legacy": h.IsLegacy(key),
		"skipped_by_runtime": e.Skip, "unknown_fields": e.UnknownFields, "lineage": lineage, "story": story}
	if o.json {
		return emitJSON(o, newEnvelope(h, o, result{data: data, findings: story.Findings}))
	}
	if o.quiet {
		return nil
	}
	if err := printEntry(o, h, e, row, lineage); err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "restarts  %s\n", check.CountLabel(story.RestartCount))
	printFindings(o, story.Findings)
	for _, a := range story.NextStart {
		fmt.Fprintf(o.stdout, "next start    %s: %s\n", a.Action, a.Reason)
	}
	fmt.Fprintf(o.stdout, "next message  %s\n", listout.Printable(story.NextMessage, false))
	return nil
}

func printEntry(o *options, h *home.Home, e *sessionsjson.Entry, row string, lineage *home.LineageRows) error {
	fmt.Fprintf(o.stdout, "key  %s\n", listout.Printable(e.Key, false))
	if h.IsLegacy(e.Key) {
		fmt.Fprintln(o.stdout, "legacy entry: only in sessions.json, not in gateway_routing"+check.LegacyNote(h))
	}
	if e.Skip != "" {
		fmt.Fprintf(o.stdout, "%s: %s\n", check.SkipLabel(h), e.Skip)
	}
	fields := e.Fields()
	rows := make([][]string, 0, len(fields))
	for _, f := range fields {
		rows = append(rows, []string{f.Name, string(f.Raw)})
	}
	if err := renderTable(o.stdout, []string{"FIELD", "VALUE"}, rows); err != nil {
		return err
	}
	if len(e.UnknownFields) > 0 {
		fmt.Fprintf(o.stdout, "unknown fields (%s): %v\n", check.UnknownFieldsNote(h), e.UnknownFields)
	}
	fmt.Fprintf(o.stdout, "row  %s\n", row)
	return printLineage(o, lineage)
}

func runEntriesPrune(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("entries prune takes no arguments")
	}
	age, err := ageFlag(c, "older-than")
	if err != nil {
		return err
	}
	if age <= 0 {
		return usagef("--older-than must be more than 0 (the runtime's 0 disables its prune)")
	}
	o, r, err := startRepair(c, "entries prune", home.Read)
	if err != nil {
		return err
	}
	defer r.Close()
	out, sum, err := repair.EntriesPrune(c.Context, r, age)
	if err != nil {
		return err
	}
	return reportSummary(o, r, out, map[string]any{"entries_prune": sum}, sum.Text())
}
