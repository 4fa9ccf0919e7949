// Package commands is the command-line face of sessionctl: the urfave/cli app, flags and
// arguments, rendering (tables, colour, the JSON envelope) and the mapping of the engine's
// typed errors to exit codes (exitCode). The engine lives in commands/internal/…; the
// runtime's model in sessionsjson and statedb.
package commands

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/sessionctl/sessionctl/commands/internal/complete"
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/sessionctl/sessionctl/commands/internal/metrics"
	"github.com/urfave/cli/v2"
)

// Run runs the CLI with args (args[0] is the program name) and returns the process exit code.
// It never calls os.Exit and writes only to stdout and stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return run(ctx, args, stdout, stderr, settings{})
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, s settings) int {
	state := &runState{}
	app := newApp(stdoutFor(args, stdout), stderr, s, state)
	if r, ok := complete.Parse(args); ok {
		return completeArgs(ctx, app, r)
	}
	norm, err := normaliseArgs(app, args)
	if err == nil {
		args = norm
		m, multi, perr := parseMulti(app, args)
		switch {
		case perr != nil:
			err = perr
		case multi:
			return runMulti(ctx, app, m, args, stdout, stderr, s)
		default:
			err = runApp(ctx, app, args)
			state.progress.end()
		}
	}
	return finish(ctx, app, args, state, err)
}

// finish turns a run's error into its exit code, printing the error (unless the output
// already did) and, under --json, the error envelope when none was printed.
func finish(ctx context.Context, app *cli.App, args []string, state *runState, err error) int {
	if err == nil {
		if err = emitHeldText(app, args, state); err == nil {
			return exitCode(ctx, nil)
		}
	}
	code := exitCode(ctx, err)
	if !isReported(err) {
		fmt.Fprintf(app.ErrWriter, "sessionctl: %s\n", oneLine(err))
	}
	format := listout.Requested(args[1:])
	if format == "" && envJSON() {
		format = listout.JSON
	}
	if !state.emitted && format != "" {
		if werr := emitErrorEnvelope(app, args, state, err, code, format); werr != nil {
			fmt.Fprintf(app.ErrWriter, "sessionctl: %s\n", oneLine(werr))
		}
	}
	return code
}

// runState is what Run learns of the command while it runs.
type runState struct {
	opts     *options      // the command's resolved options, once resolved
	emitted  bool          // the envelope is on stdout
	metrics  *metrics.File // --metrics-file, checked (nil without it)
	progress *progress     // the progress bar on stderr (nil: none)
	warned   sync.Map      // the warnings printed (msg → true)
}

// firstWarning reports whether msg is new to this run, and records it: a warning is printed
// once however often the engine reports it (a refusal checked before its lock and again
// under it).
func (s *runState) firstWarning(msg string) bool {
	_, seen := s.warned.LoadOrStore(msg, true)
	return !seen
}

// runMu serialises app runs: urfave/cli v2 writes its package-level HelpFlag on every run,
// so two in-process runs (tests) would race.
var runMu sync.Mutex

func runApp(ctx context.Context, app *cli.App, args []string) error {
	runMu.Lock()
	defer runMu.Unlock()
	return app.RunContext(ctx, args)
}

func oneLine(err error) string {
	return listout.Printable(strings.Join(strings.Fields(err.Error()), " "), false)
}

// Keys of the app's metadata: the run's settings and state.
const (
	settingsKey = "settings"
	stateKey    = "state"
)

func newApp(stdout, stderr io.Writer, s settings, state *runState) *cli.App {
	app := &cli.App{
		Name:            "sessionctl",
		Usage:           "inspect and repair a Hermes Agent gateway's sessions (sessions.json and state.db)",
		Description:     exitCodesText,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Suggest:         true,
		ExitErrHandler:  func(*cli.Context, error) {},
		Flags:           globalFlags(),
		Commands:        allCommands(),
		Action:          topLevel,
		Metadata:        map[string]any{settingsKey: s, stateKey: state},
		Version:         version(),
	}
	app.OnUsageError = usageError
	quietDefaults(app.Flags)
	finishCommands(app.Commands, app.Name)
	return app
}

// exitCodesText is the app's description (help, man page, docs/cli.md).
const exitCodesText = `Exit codes:

- 0: success (check: nothing at or above --fail-on)
- 1: check or maintain found problems at or above --fail-on
- 2: usage error
- 3: refused (a gateway is running, the lock is held, undo conflicts)
- 4: environment or data error (home or file missing, unreadable, corrupt, schema unsupported)
- 5: a write failed and was rolled back: nothing changed
- 6: a write failed part-way: its journal is named, undo JOURNAL reverts it
- 130, 143: interrupted by SIGINT, SIGTERM at a safe point`

// allCommands is the ordered command table.
func allCommands() []*cli.Command {
	return []*cli.Command{
		statusCommand(),
		checkCommand(),
		upgradeCheckCommand(),
		spaceCommand(),
		ftsCommand(),
		entriesCommand(),
		sessionsCommand(),
		resumeCommand(),
		suspendCommand(),
		unsuspendCommand(),
		suspendStuckCommand(),
		repointCommand(),
		finalizeOrphansCommand(),
		pruneGhostsCommand(),
		pruneCommand(),
		archiveCommand(),
		unarchiveCommand(),
		maintainCommand(),
		compactCommand(),
		backupCommand(),
		restoreCommand(),
		holdersCommand(),
		undoCommand(),
		journalCommand(),
		relocateCommand(),
		demoCommand(),
		completionCommand(),
		manCommand(),
	}
}

// topLevel runs when no command matched: no argument or a bare `help` shows the help;
// anything else is a usage error (exit 2). urfave/cli's default would look the word up as a
// help topic and exit 3. `help CMD …` is rewritten to `CMD … --help` by normaliseArgs.
func topLevel(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) > 0 && args[0] == "help" {
		args = args[1:]
	}
	if len(args) > 0 {
		return usagef("unknown command %q%s (see sessionctl --help)", args[0], didYouMean(args[0], commandNames(c.App.Commands)))
	}
	return cli.ShowAppHelp(c)
}

func usageError(_ *cli.Context, err error, _ bool) error {
	return usage(err)
}

// finishCommands gives every command below parent (its command path) what the table leaves
// to it: usage errors exit 2, a group without a subcommand is a usage error (its help lists no
// help subcommand), switches show no
// "(default: false)", the usage text is the synopsis followed by the examples the command
// declares in UsageText.
func finishCommands(cmds []*cli.Command, parent string) {
	for _, c := range cmds {
		path := parent + " " + c.Name
		c.UsageText = synopsis(c, path) + examplesText(c.UsageText)
		c.OnUsageError = usageError
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = unknownSubcommand
		}
		c.HideHelpCommand = true // `GROUP help` is not a subcommand: `GROUP --help` is
		quietDefaults(c.Flags)
		finishCommands(c.Subcommands, path)
	}
}

// unknownSubcommand is the action of a command group: reaching it means the subcommand was
// missing or not one the group knows, which is a usage error.
func unknownSubcommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("%s needs a subcommand (see sessionctl %s --help)", c.Command.Name, c.Command.Name)
	}
	return errUnknownSubcommand(c.Command, c.Args().First())
}

// errUnknownSubcommand is the usage error for a subcommand the group does not have.
func errUnknownSubcommand(group *cli.Command, name string) error {
	return usagef("%s: unknown subcommand %q%s", group.Name, name, didYouMean(name, commandNames(group.Subcommands)))
}

func commandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Names()...)
	}
	return names
}
