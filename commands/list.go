package commands

import (
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/urfave/cli/v2"
)

// formatFlag is the --format flag of the list commands.
func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: string(listout.Table),
		Usage: "output `F`: table, json (the envelope, as --json), ndjson (one item a line, the envelope last), csv or tsv"}
}

// listFormat is the list's --format; --json is --format json.
func listFormat(c *cli.Context, o *options) (listout.Format, error) {
	f, err := listout.ParseFormat(c.String("format"))
	switch {
	case err != nil:
		return f, usagef("--format: %v", err)
	case o.json && c.IsSet("format") && f != listout.JSON:
		return f, usagef("--json and --format %s exclude each other", f)
	case o.json:
		f = listout.JSON
	}
	o.json = f == listout.JSON
	return f, nil
}

// startList starts writing a list in format around env (see listout.Spec for spec); from
// here on the list's end writes the envelope of JSON and NDJSON, whatever happens.
func startList[T any](c *cli.Context, o *options, format listout.Format, env envelope, spec listout.Spec[T]) (*listout.Writer[T], error) {
	spec.Envelope = func(data any, err error) any {
		env.Data = data
		if err != nil {
			env.ExitCode = exitCode(c.Context, err)
			env.Error = errorFor(env.ExitCode, err)
		}
		return env
	}
	o.state.emitted = format.Envelope()
	return listout.NewWriter(o.stdout, format, spec)
}
