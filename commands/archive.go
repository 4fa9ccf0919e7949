package commands

import (
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/urfave/cli/v2"
)

func archiveCommand() *cli.Command {
	return &cli.Command{
		Name:      "archive",
		Usage:     "archive ended sessions older than D, or sessions idle for D, with their whole compression lineage (archive_sessions / archive_stale_sessions; undoable)",
		ArgsUsage: " ",
		UsageText: "sessionctl archive --idle 30d --apply\nsessionctl archive --older-than 90d --source telegram",
		Flags: dbRepairFlags(append([]cli.Flag{
			&cli.StringFlag{Name: "older-than", Usage: "ended sessions older than `D` by the generation's age rule (archive_sessions)"},
			&cli.StringFlag{Name: "source", Usage: "with --older-than: only sessions of source `S`"},
			&cli.StringFlag{Name: "idle", Usage: "sessions, open ones included, idle for `D` (r0817's archive_stale_sessions)"}},
			filterFlags("archived")...)...), // archive selects the sessions not yet archived (archive_sessions' archived=False)
		Action: runArchive,
	}
}

func unarchiveCommand() *cli.Command {
	return &cli.Command{
		Name:      "unarchive",
		Usage:     "unarchive sessions with their whole compression lineage (set_session_archived(id, False); undoable)",
		ArgsUsage: "ID...",
		UsageText: "sessionctl unarchive --apply 20260713_221054_f44293",
		Flags:     dbRepairFlags(),
		Action:    runUnarchive,
	}
}

func runArchive(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("archive takes no arguments (unarchive takes IDs)")
	}
	filters, replaces, err := filterArgs(c)
	o := repair.ArchiveOptions{Filters: filters}
	switch {
	case err != nil:
		return err
	case (c.IsSet("older-than") || replaces) == c.IsSet("idle"):
		return usagef("archive needs exactly one of --older-than D and --idle D")
	case c.IsSet("idle") && (c.IsSet("source") || len(filters) > 0):
		return usagef("--source and the filters go with --older-than (archive_stale_sessions has none)")
	case c.IsSet("source") && c.String("source") == "":
		return usagef("--source: empty: name a source such as cli or telegram")
	case c.IsSet("idle"):
		o.Mode = repair.ArchiveIdle
		o.Age, err = ageFlag(c, "idle")
	default:
		o.Mode, o.Source = repair.ArchiveOlder, c.String("source")
		if c.IsSet("older-than") {
			o.Age, err = ageFlag(c, "older-than")
		}
	}
	if err != nil {
		return err
	}
	return runArchiving(c, "archive", o)
}

func runUnarchive(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("unarchive needs at least one session ID")
	}
	return runArchiving(c, "unarchive", repair.ArchiveOptions{Mode: repair.ArchiveIDs, IDs: c.Args().Slice()})
}

func runArchiving(c *cli.Context, command string, ao repair.ArchiveOptions) error {
	o, r, err := startRepair(c, command, home.Database)
	if err != nil {
		return err
	}
	defer r.Close()
	out, sum, err := repair.Archive(c.Context, r, ao)
	if err != nil {
		return err
	}
	return reportSummary(o, r, out, map[string]any{"archive": sum, "batches": out.Batches}, sum.Text())
}
