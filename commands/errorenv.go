package commands

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

// jsonRequested reports whether the command line (before any "--") or, failing that,
// $SESSIONCTL_JSON asks for --json or --ndjson.
func jsonRequested(args []string) bool {
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && (name == "json" || name == "ndjson") {
			return value == "" || value == "true" || value == "1"
		}
	}
	on, err := strconv.ParseBool(os.Getenv("SESSIONCTL_JSON"))
	return err == nil && on
}

// commandName is the command path of args (after the global flags), "" when none.
func commandName(app *cli.App, args []string) string {
	_, rest := splitLeadingFlags(args[1:], app.Flags)
	var path []string
	cmds := app.Commands
	for _, tok := range rest {
		c := findCommand(cmds, tok)
		if c == nil {
			break
		}
		path = append(path, c.Name)
		cmds = c.Subcommands
	}
	return strings.Join(path, " ")
}

// emitErrorEnvelope prints the envelope of a run that ended in err before printing one: the
// error, and what an Incomplete run applied and where it is journaled.
func emitErrorEnvelope(app *cli.App, args []string, state *runState, err error, code int) error {
	o := state.opts
	if o == nil {
		o = &options{stdout: app.Writer, stderr: app.ErrWriter, state: state}
		o.Command = commandName(app, args)
		o.Clock = sessionsjson.ClockFromTime(time.Now())
	}
	res := result{exitCode: code}
	var inc *repair.Incomplete
	if errors.As(err, &inc) {
		res = outcomeResult(inc.Outcome)
		res.exitCode = code
	}
	env := newEnvelope(nil, o, res)
	env.Error = &errorJSON{Code: code, Kind: errorKind(code), Message: oneLine(err)}
	return emitJSON(o, env)
}
