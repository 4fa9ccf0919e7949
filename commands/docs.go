package commands

import (
	"io"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/cmdtree"
	"github.com/urfave/cli/v2"
)

//go:generate go run ../scripts/gendocs -o ../docs/cli.md

// docsHeader heads docs/cli.md.
const docsHeader = "<!-- Generated from the command table by `go run ./scripts/gendocs` (or `go generate ./...`); do not edit. -->\n\n"

// Markdown is docs/cli.md: the command table as urfave/cli's ToMarkdown writes it (hidden
// commands and flags left out), no line ending in spaces.
func Markdown() (string, error) {
	md, err := docsApp().ToMarkdown()
	lines := strings.Split(md, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return docsHeader + strings.Join(lines, "\n"), err
}

// docsApp is the app as its documents show it, whatever the run: not set up by a run (which
// adds the help flags), and no version.
func docsApp() *cli.App {
	app := newApp(io.Discard, io.Discard, settings{}, &runState{})
	app.Version = ""
	return app
}

func manCommand() *cli.Command {
	return &cli.Command{
		Name:      "man",
		Usage:     "print the man page (section 8, the same command table as --help and docs/cli.md)",
		ArgsUsage: " ",
		UsageText: "sessionctl man > /usr/local/share/man/man8/sessionctl.8",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 || c.Bool("json") {
				return usagef("man takes no arguments and prints the man page, not JSON")
			}
			_, err := io.WriteString(c.App.Writer, cmdtree.Man(tree(docsApp()), cmdtree.Date(time.Now()), version()))
			return err
		},
	}
}

// synopsis is the usage line of c, whose command path is path: "command" for a group, then
// "[command options]" when it has flags, then its ArgsUsage.
func synopsis(c *cli.Command, path string) string {
	s := path
	if len(c.Subcommands) > 0 && c.Action == nil {
		s += " command"
	}
	if len(c.Flags) > 0 {
		s += " [command options]"
	}
	if args := strings.TrimSpace(c.ArgsUsage); args != "" {
		s += " " + args
	}
	return s
}

// examplesText is the block that follows the synopsis: the command lines of examples (one a
// line), indented under "Example:" or "Examples:"; "" for none.
func examplesText(examples string) string {
	if examples == "" {
		return ""
	}
	label := "Example:"
	if strings.Contains(examples, "\n") {
		label = "Examples:"
	}
	return "\n\n" + label + "\n  " + strings.ReplaceAll(examples, "\n", "\n  ")
}

// quietDefaults drops "(default: false)" from the switches' help: a switch is off unless given.
func quietDefaults(flags []cli.Flag) {
	for _, f := range flags {
		if b, ok := f.(*cli.BoolFlag); ok {
			b.DisableDefaultText = true
		}
	}
}
