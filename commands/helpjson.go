package commands

import (
	"bytes"
	"io"

	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/urfave/cli/v2"
)

// jsonStdout is stdout under --json: urfave/cli's help and version are held for the envelope.
type jsonStdout struct {
	io.Writer
	help    bytes.Buffer
	version bool
}

// stdoutFor wraps stdout in a jsonStdout when args (or $SESSIONCTL_JSON) ask for an envelope.
func stdoutFor(args []string, stdout io.Writer) io.Writer {
	if len(args) > 0 && (listout.Requested(args[1:]).Envelope() || envJSON()) {
		return &jsonStdout{Writer: stdout}
	}
	return stdout
}

func init() {
	helpText, versionText := cli.HelpPrinter, cli.VersionPrinter
	cli.HelpPrinter = func(w io.Writer, templ string, data any) {
		if j, ok := w.(*jsonStdout); ok {
			w = &j.help
		}
		helpText(w, templ, data)
	}
	cli.VersionPrinter = func(c *cli.Context) {
		if j, ok := c.App.Writer.(*jsonStdout); ok {
			j.version = true
			return
		}
		versionText(c)
	}
}

// emitHeldText prints the help or version a successful run held back (jsonStdout) as its
// envelope: data.topic, the command path ("" for the tool); data.text, the help as shown.
func emitHeldText(app *cli.App, args []string, state *runState) error {
	j, ok := app.Writer.(*jsonStdout)
	if !ok || state.emitted || (j.help.Len() == 0 && !j.version) {
		return nil
	}
	o, res := bareOptions(app, args, state), result{}
	if j.help.Len() > 0 {
		res.data = map[string]string{"topic": o.Command, "text": j.help.String()}
		o.Command = "help"
	} else {
		o.Command = "version"
	}
	env := newEnvelope(nil, o, res)
	if listout.Requested(args[1:]) == listout.NDJSON {
		return listout.Line(o.stdout, env)
	}
	return emitJSON(o, env)
}
