package commands

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/journalset"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/urfave/cli/v2"
)

func journalCommand() *cli.Command {
	return &cli.Command{
		Name:      "journal",
		UsageText: "sessionctl journal list",
		Usage:     "the home's journals: list, show, prune",
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "every journal: time, command, changes, size (with stash and row store), undone", ArgsUsage: " ",
				UsageText: "sessionctl --json journal list", Action: runJournalList},
			{Name: "show", Usage: "what one journal changed (a path, or a name in the home's journal directory)", ArgsUsage: "JOURNAL",
				UsageText: "sessionctl journal show 20260715T120000.000000000Z-suspend.json", Action: runJournalShow},
			{Name: "prune", Usage: "remove old journals with their stash and row store (their changes can no longer be undone)", ArgsUsage: " ",
				UsageText: "sessionctl journal prune --older-than 30d --keep 20 --apply",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "older-than", Usage: "journals written more than `D` ago (required; with a unit: s, m, h, d or w)"},
					&cli.IntFlag{Name: "keep", Usage: "never remove the newest `N` journals"},
					&cli.BoolFlag{Name: "apply", Usage: "remove them (default: print the plan only)"},
					waitFlag(),
				}, Action: runJournalPrune},
		},
	}
}

func runJournalList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("journal list takes no arguments")
	}
	o, err := loadOptions(c, "journal list")
	if err != nil {
		return err
	}
	items, err := journalset.List(o.Home)
	if err != nil || o.json {
		return orEmit(o, err, result{data: map[string]any{"journals": orEmpty(items)}})
	}
	rows := make([][]string, 0, len(items))
	for _, it := range items {
		undone := "-"
		if it.Undone {
			undone = "undone by " + filepath.Base(it.UndoneBy)
		}
		if it.Pending { // an undo stopped part-way: the journal it reverts is not undone yet
			undone = "stopped part-way (its undo of " + filepath.Base(it.Undoes) + ")"
		}
		if it.Error != "" {
			undone = "unreadable: " + it.Error
		}
		rows = append(rows, []string{filepath.Base(it.Path), it.Time, it.Command, strconv.Itoa(it.Changes), strconv.FormatInt(it.Bytes, 10), undone})
	}
	if o.quiet {
		return nil
	}
	fmt.Fprintf(o.stdout, "%d journal%s in %s\n", len(items), plural(len(items), "", "s"), o.Home.JournalDir())
	return renderTable(o.stdout, []string{"JOURNAL", "TIME", "COMMAND", "CHANGES", "BYTES", "UNDONE"}, rows)
}

// orEmit returns err, or emits res's envelope under --json.
func orEmit(o *options, err error, res result) error {
	if err != nil || !o.json {
		return err
	}
	return emitJSON(o, newEnvelope(nil, o, res))
}

func runJournalShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("journal show takes exactly one JOURNAL")
	}
	o, err := loadOptions(c, "journal show")
	if err != nil {
		return err
	}
	path := journalset.Find(o.Home, c.Args().First())
	j, err := journal.Read(path)
	if err != nil {
		return err
	}
	it := &journalset.Item{Path: path, Bytes: journalset.Bytes(path)}
	if items, err := journalset.List(o.Home); err == nil { // undone: known among the home's journals
		for _, other := range items {
			if filepath.Base(other.Path) == filepath.Base(path) && other.Journal() != nil {
				it = other
			}
		}
	}
	changes := repair.JournalChanges(j)
	data := map[string]any{"journal": j, "path": path, "bytes": it.Bytes, "undone": it.Undone, "undone_by": it.UndoneBy}
	if err := orEmit(o, nil, result{changes: changes, data: data}); err != nil || o.json || o.quiet {
		return err
	}
	fmt.Fprintf(o.stdout, "journal  %s\ncommand  %s (%s)\nhome     %s\nbytes    %d\n", path, j.Command, j.CreatedAt, j.Home, it.Bytes)
	if it.Undone {
		fmt.Fprintf(o.stdout, "undone   by %s\n", it.UndoneBy)
	}
	for _, note := range []string{j.Note, j.Undoes} {
		if note != "" {
			fmt.Fprintf(o.stdout, "note     %s\n", note)
		}
	}
	return printChanges(o, changes)
}

func runJournalPrune(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("journal prune takes no arguments")
	}
	if !c.IsSet("older-than") {
		return usagef("journal prune needs --older-than D (journals written more than D ago)")
	}
	older, err := ageFlag(c, "older-than")
	if err != nil {
		return err
	}
	if c.Int("keep") < 0 {
		return usagef("--keep must be 0 or more")
	}
	o, err := loadOptions(c, "journal prune")
	if err != nil {
		return err
	}
	out, p, err := journalset.Prune(c.Context, o.Options, time.UnixMicro(o.Clock.UnixMicros), older, c.Int("keep"), c.Bool("apply"))
	if err != nil {
		return err
	}
	res := outcomeResult(out)
	res.data = p
	if o.json {
		return emitJSON(o, newEnvelope(nil, o, res))
	}
	if o.quiet {
		return nil
	}
	if err := printChanges(o, res.changes); err != nil {
		return err
	}
	verb := "plan only: would remove"
	if out.Applied {
		verb = "removed"
	}
	fmt.Fprintf(o.stdout, "%s %d journal%s and %d leftover%s (%d bytes), kept %d; %s\n", verb, len(p.Journals), plural(len(p.Journals), "", "s"),
		len(p.Orphans), plural(len(p.Orphans), "", "s"), p.Bytes, p.Kept, p.Note)
	return nil
}
