package commands

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

// envJSON reports whether $SESSIONCTL_JSON (the --json flag's variable) asks for --json.
func envJSON() bool {
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
func emitErrorEnvelope(app *cli.App, args []string, state *runState, err error, code int, format listout.Format) error {
	o := state.opts
	if o == nil {
		o = bareOptions(app, args, state)
	}
	res := result{exitCode: code}
	var inc *repair.Incomplete
	if errors.As(err, &inc) {
		res = outcomeResult(inc.Outcome)
		res.exitCode = code
	}
	env := newEnvelope(nil, o, res)
	env.Error = errorFor(code, err)
	if format == listout.NDJSON {
		return listout.Line(o.stdout, env)
	}
	return emitJSON(o, env)
}

// bareOptions are the options of a run that ended before resolving its own: command, now.
func bareOptions(app *cli.App, args []string, state *runState) *options {
	o := &options{stdout: app.Writer, stderr: app.ErrWriter, state: state}
	o.Command, o.Clock = commandName(app, args), sessionsjson.ClockFromTime(time.Now())
	return o
}

// errorFor is the envelope's error for a run that ended in err with code.
func errorFor(code int, err error) *errorJSON {
	return &errorJSON{Code: code, Kind: errorKind(code), Message: oneLine(err)}
}
