package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fatih/color"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "home", Usage: "the Hermes home `DIR`", DefaultText: "$HERMES_HOME, else ~/.hermes"},
		&cli.StringFlag{Name: "profile", Usage: "use the home of profile `NAME`, <root>/profiles/NAME (NAME default is the root)"},
		&cli.BoolFlag{Name: "json", EnvVars: []string{"SESSIONCTL_JSON"}, Usage: "print exactly one JSON document (the envelope) on stdout"},
		&cli.BoolFlag{Name: "ndjson", Usage: "like --json, each envelope on one line (with --all-profiles: one line per home)"},
		&cli.BoolFlag{Name: "all-profiles", Usage: "run a read-only command (or maintain) on the root home and every profiles/NAME"},
		&cli.StringFlag{Name: "now", Usage: "evaluate time rules as of `TIME` (RFC 3339 or Unix seconds) and stamp writes with it"},
		&cli.BoolFlag{Name: "no-color", EnvVars: []string{"SESSIONCTL_NO_COLOR"}, Usage: "plain output (also when NO_COLOR is set and not empty)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "nothing on stdout when all is well"},
	}
}

// settings are the engine knobs a run is given; Run uses the defaults, tests may not.
type settings struct {
	batchRows   int           // rows per state.db repair transaction (0: sized by batchTarget)
	batchTarget time.Duration // the lock hold a batch is sized for (0: the engine's default)
}

// options are the global flags, resolved once per command: what the engine is given
// (home.Options) and how the face prints.
type options struct {
	home.Options
	json, quiet, color bool
	all                bool   // --all: no group folded (group.Fit)
	allHint            string // the flag that lists a folded group's every subject
	stdout, stderr     io.Writer
	settings           settings
	state              *runState
}

// loadOptions resolves the global flags of the running command.
func loadOptions(c *cli.Context, command string) (*options, error) {
	h, err := resolveHome(c)
	var bad *sessionsjson.ActiveProfileError
	if errors.As(err, &bad) {
		return nil, failure.Mark(failure.Data, fmt.Errorf("resolve home: %w", err))
	}
	if err != nil {
		return nil, usage(fmt.Errorf("resolve home: %w", err))
	}
	clock, err := parseClock(c.String("now"), c.IsSet("now"))
	if err != nil {
		return nil, err
	}
	s, _ := c.App.Metadata[settingsKey].(settings)
	state, _ := c.App.Metadata[stateKey].(*runState)
	if state == nil {
		state = &runState{}
	}
	wait, err := lockWait(c)
	if err != nil {
		return nil, err
	}
	o := &options{
		Options:  home.Options{Home: h, Clock: clock, Command: command, LockWait: wait, AssumeStopped: c.Bool("force")},
		json:     c.Bool("json"),
		quiet:    c.Bool("quiet"),
		all:      c.Bool("all"),
		allHint:  listAllHint(c),
		color:    useColor(c.Bool("no-color"), c.App.Writer),
		stdout:   c.App.Writer,
		stderr:   c.App.ErrWriter,
		settings: s,
		state:    state,
	}
	o.Warn = o.warn
	if showProgress(isTerminal(o.stderr), o.quiet, o.json) {
		state.progress = &progress{w: o.stderr}
		o.Progress = state.progress.report
	}
	state.opts = o
	if state.metrics, err = prepareMetrics(c); err != nil {
		return nil, err
	}
	return o, nil
}

// resolveHome resolves the home that --home and --profile name, as the runtime does.
func resolveHome(c *cli.Context) (sessionsjson.Home, error) {
	if c.IsSet("home") && c.String("home") == "" { // not the default home: a variable that expanded to nothing
		return sessionsjson.Home{}, errors.New("--home: empty: name the Hermes home directory")
	}
	return sessionsjson.ResolveHome(sessionsjson.HomeOptions{Home: c.String("home"), Profile: c.String("profile"), Getenv: os.Getenv})
}

// parseClock parses --now; without the flag the clock is now. The flag given an empty value
// is a usage error, not the clock.
func parseClock(value string, set bool) (sessionsjson.Clock, error) {
	if !set {
		return sessionsjson.ClockFromTime(time.Now()), nil
	}
	clock, err := sessionsjson.ParseNow(value)
	if err != nil {
		return clock, usagef("--now %q: %v", value, err)
	}
	return clock, nil
}

// useColor reports whether colour is wanted: never with --no-color or NO_COLOR, and only
// when stdout is a terminal.
func useColor(noColor bool, w io.Writer) bool {
	if noColor || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}

// paint colours s with attrs when colour is on.
func (o *options) paint(s string, attrs ...color.Attribute) string {
	if !o.color {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor()
	return c.Sprint(s)
}

// warn prints a one-line warning on stderr (never suppressed; each warning once a run).
func (o *options) warn(format string, a ...any) {
	if msg := fmt.Sprintf(format, a...); o.state.firstWarning(msg) {
		fmt.Fprintf(o.stderr, "sessionctl: warning: %s\n", listout.Printable(msg, false))
	}
}
