// Package commands is the command-line face of sessionctl: flags, text, colour, the JSON
// envelope and exit codes. The domain logic lives in the sessionsjson and statedb packages.
package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// Exit codes of the CLI contract.
const (
	ExitOK       = 0 // success; for check/maintain: nothing at or above --fail-on
	ExitFindings = 1 // check/maintain found problems at or above --fail-on
	ExitUsage    = 2 // usage error
	ExitRefused  = 3 // refused: gateway running, lock held, undo conflict
	ExitData     = 4 // environment or data error: missing, unreadable, corrupt, unsupported
	ExitWrite    = 5 // a write failed and was rolled back; nothing changed
)

// Run runs the CLI with args (args[0] is the program name) and returns the process exit code.
// It never calls os.Exit and writes only to stdout and stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	args = normaliseArgs(app, args)
	err := runApp(ctx, app, args)
	code := exitCodeOf(err)
	if err != nil && !errors.Is(err, errReported) {
		fmt.Fprintf(stderr, "sessionctl: %s\n", oneLine(err))
	}
	return code
}

// runMu serialises app runs: urfave/cli v2 writes its package-level HelpFlag on every run,
// so two in-process runs (tests) would race.
var runMu sync.Mutex

func runApp(ctx context.Context, app *cli.App, args []string) error {
	runMu.Lock()
	defer runMu.Unlock()
	return app.RunContext(ctx, args)
}

// errReported marks an error whose message was already printed (for example inside a JSON
// envelope plus a stderr line); Run only turns it into an exit code.
var errReported = errors.New("reported")

// exitError carries an exit code through urfave/cli and fmt.Errorf wrapping.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode implements cli.ExitCoder.
func (e *exitError) ExitCode() int { return e.code }

// withCode attaches an exit code to err.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// usagef builds a usage error (exit 2).
func usagef(format string, a ...any) error {
	return withCode(ExitUsage, fmt.Errorf(format, a...))
}

func exitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return classify(err)
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:                 "sessionctl",
		Usage:                "inspect and repair a Hermes Agent gateway's sessions (sessions.json and state.db)",
		Writer:               stdout,
		ErrWriter:            stderr,
		HideHelpCommand:      true,
		Suggest:              true,
		EnableBashCompletion: false,
		ExitErrHandler:       func(*cli.Context, error) {},
		Flags:                globalFlags(),
		Commands:             allCommands(),
		Action:               topLevel,
	}
	app.OnUsageError = usageError
	setUsageError(app.Commands)
	return app
}

func allCommands() []*cli.Command {
	return []*cli.Command{
		statusCommand(),
		checkCommand(),
		entriesCommand(),
		sessionsCommand(),
		resumeCommand(),
		suspendCommand(),
		unsuspendCommand(),
		suspendStuckCommand(),
		repointCommand(),
		finalizeOrphansCommand(),
		pruneGhostsCommand(),
		maintainCommand(),
		undoCommand(),
		demoCommand(),
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
		return usagef("unknown command %q (see sessionctl --help)", args[0])
	}
	return cli.ShowAppHelp(c)
}

func usageError(_ *cli.Context, err error, _ bool) error {
	return withCode(ExitUsage, err)
}

func setUsageError(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = usageError
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = unknownSubcommand
		}
		setUsageError(c.Subcommands)
	}
}

// unknownSubcommand is the action of a command group: reaching it means the subcommand was
// missing or not one the group knows, which is a usage error.
func unknownSubcommand(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("%s needs a subcommand (see sessionctl %s --help)", c.Command.Name, c.Command.Name)
	}
	return usagef("%s: unknown subcommand %q", c.Command.Name, c.Args().First())
}
