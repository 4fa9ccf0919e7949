package commands

import (
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/commands/internal/storage"
	"github.com/urfave/cli/v2"
)

func holdersCommand() *cli.Command {
	return &cli.Command{Name: "holders", Usage: "list the processes holding state.db, its -wal or -shm, or sessions.json open, deleted generations included (Linux)",
		ArgsUsage: " ", UsageText: "sessionctl --profile work holders", Action: runHolders}
}

func runHolders(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("holders takes no arguments")
	}
	o, err := loadOptions(c, "holders")
	if err != nil {
		return err
	}
	h, err := home.Open(c.Context, o.Options, home.Database)
	if err != nil {
		return err
	}
	defer h.Close()
	s, err := storage.Holders(h)
	if err != nil {
		return err
	}
	if o.json {
		return emitJSON(o, newEnvelope(h, o, result{data: s}))
	}
	if !o.quiet {
		printLines(o, s.Lines())
	}
	return nil
}

// blindForceFlag is --force of the writes that need state.db alone (compact, restore): it
// says what sessionctl cannot see on this platform (home.Options.AssumeStopped).
func blindForceFlag() cli.Flag {
	return forceFlag("go ahead where sessionctl cannot tell whether a gateway runs or which processes hold state.db (Windows; holders off Linux): you have stopped them")
}

func compactCommand() *cli.Command {
	return &cli.Command{Name: "compact", Usage: "the runtime's vacuum() of the home's generation: FTS optimize, checkpoint, VACUUM (refused while any process holds state.db)",
		ArgsUsage: " ", UsageText: "sessionctl compact --apply\nsessionctl compact --into /tmp/state-compacted.db",
		Flags: []cli.Flag{applyFlag(), blindForceFlag(), waitFlag(), &cli.StringFlag{Name: "into", Usage: "write a compacted copy to `FILE` (VACUUM INTO) and change nothing"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 || c.IsSet("into") && c.String("into") == "" {
				return usagef("compact takes no arguments, and --into a FILE")
			}
			return runStorage(c, "compact", func(r *repair.Run) (repair.Outcome, lined, error) {
				return lines(storage.Compact(c.Context, r.H, r.Apply, c.String("into")))
			})
		}}
}

func backupCommand() *cli.Command {
	return &cli.Command{Name: "backup", Usage: "write a consistent snapshot of state.db, sessions.json and the counts file, with a manifest (default: <home>/sessionctl/backups/<time>)",
		ArgsUsage: " ", UsageText: "sessionctl backup --to /var/backups/hermes --keep 7", Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "write the backup into a new <time> directory in `DIR`"},
			&cli.IntFlag{Name: "keep", Usage: "then remove the oldest backups sessionctl wrote in that directory beyond the newest `N`"},
			&cli.BoolFlag{Name: "transcripts", Usage: "also back up the transcript files of the sessions directory"}, waitFlag()},
		Subcommands: []*cli.Command{{Name: "verify", Usage: "check a backup: manifest, sizes, SHA-256, PRAGMA integrity_check; exit 1 when it fails",
			ArgsUsage: "BACKUP", UsageText: "sessionctl backup verify /var/backups/hermes/20260715T120000Z", Action: runVerify}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("backup takes no arguments (backup verify BACKUP checks one)")
			}
			if c.IsSet("keep") && c.Int("keep") < 1 {
				return usagef("--keep must be at least 1")
			}
			opts := storage.BackupOptions{To: c.String("to"), Keep: c.Int("keep"), Transcripts: c.Bool("transcripts")}
			return runStorage(c, "backup", func(r *repair.Run) (repair.Outcome, lined, error) {
				return lines(storage.Backup(c.Context, r.H, opts))
			})
		}}
}

func runVerify(c *cli.Context) error {
	if c.NArg() != 1 || c.Args().First() == "" {
		return usagef("backup verify takes exactly one BACKUP directory")
	}
	o, err := loadOptions(c, "backup verify")
	if err != nil {
		return err
	}
	if err := o.Home.Validate(); err != nil {
		return fmt.Errorf("home %s: %w", o.Home.Dir, err)
	}
	d, findings, err := storage.Verify(c.Context, c.Args().First())
	if err != nil {
		return err
	}
	if !o.json && !o.quiet {
		printLines(o, d.Lines())
	}
	return reportFindings(o, nil, findings, check.FailOnError, d)
}

func restoreCommand() *cli.Command {
	return &cli.Command{Name: "restore", Usage: "verify a backup, back up the current state, swap the backup's files in (refused while any process holds state.db); undoable",
		ArgsUsage: "BACKUP", UsageText: "sessionctl restore --apply /var/backups/hermes/20260715T120000Z", Flags: []cli.Flag{applyFlag(), blindForceFlag(), waitFlag()}, Action: func(c *cli.Context) error {
			if c.NArg() != 1 || c.Args().First() == "" {
				return usagef("restore takes exactly one BACKUP directory")
			}
			o, err := loadOptions(c, "restore")
			if err != nil {
				return err
			}
			return runRestore(c, o, func(h *home.Home, apply bool) (repair.Outcome, lined, error) {
				return lines(storage.Restore(c.Context, h, c.Args().First(), apply))
			})
		}}
}

// runUndoRestore undoes a restore's journal (undo dispatches here for a journal with a swap).
func runUndoRestore(c *cli.Context, o *options, path string, j *journal.Journal) error {
	return runRestore(c, o, func(h *home.Home, apply bool) (repair.Outcome, lined, error) {
		return lines(storage.UndoRestore(c.Context, h, path, j, apply))
	})
}

// runRestore opens the home as a restore needs it (a state.db SQLite cannot read is what it
// replaces) and runs it, --apply refused on a home sessionctl may not write.
func runRestore(c *cli.Context, o *options, run func(*home.Home, bool) (repair.Outcome, lined, error)) error {
	h, err := storage.OpenHome(c.Context, o.Options, c.Bool("apply"))
	if err != nil {
		return err
	}
	defer h.Close()
	if c.Bool("apply") {
		if err := (&repair.Run{H: h}).CheckWritable(); err != nil {
			return err
		}
	}
	out, d, err := run(h, c.Bool("apply"))
	return finishStorage(o, h, out, d, err)
}

// lined is a command's data that words itself for the text output.
type lined interface{ Lines() []string }

// lines adapts an engine result to runStorage's.
func lines[T lined](out repair.Outcome, d T, err error) (repair.Outcome, lined, error) {
	return out, d, err
}

// runStorage opens the home for its database (refusing --apply on a home sessionctl may not
// write) and runs a storage command.
func runStorage(c *cli.Context, command string, run func(*repair.Run) (repair.Outcome, lined, error)) error {
	o, r, err := startRepair(c, command, home.Database)
	if err != nil {
		return err
	}
	defer r.Close()
	out, d, err := run(r)
	return finishStorage(o, r.H, out, d, err)
}

// finishStorage reports a storage command's outcome, its data's lines first.
func finishStorage(o *options, h *home.Home, out repair.Outcome, d lined, err error) error {
	if err != nil {
		return err
	}
	return storageReport(o, h, out, d, d.Lines())
}

// storageReport prints the lines, then the outcome as report does (data in --json); what was
// written outside the home's data (no journal) is reported as done.
func storageReport(o *options, h *home.Home, out repair.Outcome, data any, text []string) error {
	res := outcomeResult(out)
	res.data = data
	if !o.json && !o.quiet {
		printLines(o, text)
	}
	if o.json || len(out.Journals) > 0 || !out.Applied {
		return report(o, h, res)
	}
	// written outside the home's data (a backup, a copy): no journal
	if !o.quiet || len(out.Findings) > 0 {
		printFindings(o, out.Findings)
	}
	if o.quiet {
		return nil
	}
	if err := printChanges(o, out.Changes); err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "done: %d change%s\n", len(out.Changes), plural(len(out.Changes), "", "s"))
	return nil
}

func printLines(o *options, text []string) {
	for _, l := range text {
		fmt.Fprintln(o.stdout, l)
	}
}
