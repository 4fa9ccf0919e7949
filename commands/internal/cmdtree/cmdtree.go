// Package cmdtree is sessionctl's command table as the documents and the shells read it,
// free of the CLI library: each command's path, flags (which take a value, and which values
// when they are a closed set) and arguments. The face converts its urfave/cli app into a
// Command once; the completion engine (commands/internal/complete) and the man page (Man)
// are written from it.
package cmdtree

import (
	"regexp"
	"strings"
)

// Command is one command of the table; the root is the program itself (its Flags are the
// global flags).
type Command struct {
	Name        string
	Aliases     []string
	Usage       string // one line
	UsageText   string // the synopsis, then the examples (as --help shows them)
	Description string
	ArgsUsage   string // "KEY...", "ID", "SHELL", "KEY FIELD=VALUE..."
	Flags       []Flag
	Subcommands []*Command
}

// Flag is one flag of a command.
type Flag struct {
	Names   []string // the first is the long name
	Usage   string   // its help, the value's name in backquotes ("the Hermes home `DIR`")
	Value   bool     // it takes a value
	Many    bool     // it may be repeated
	EnvVars []string // the environment variables it is read from
	// Synopsis and Help are the two halves of the flag's line in --help: "--home DIR" and
	// "the Hermes home DIR (default: $HERMES_HOME, else ~/.hermes)".
	Synopsis, Help string
}

// Dashed is name as typed: -q, --home.
func Dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// Find is the subcommand of c named name (or aliased so), nil for none.
func (c *Command) Find(name string) *Command {
	for _, s := range c.Subcommands {
		if s.Name == name {
			return s
		}
		for _, a := range s.Aliases {
			if a == name {
				return s
			}
		}
	}
	return nil
}

// Flag is c's flag named name (without dashes), nil for none.
func (c *Command) Flag(name string) *Flag {
	for i, f := range c.Flags {
		for _, n := range f.Names {
			if n == name {
				return &c.Flags[i]
			}
		}
	}
	return nil
}

// Walk calls fn with every command below c (not c itself), parents first, and its path of
// names below c ("entries list").
func (c *Command) Walk(fn func(path string, cmd *Command)) {
	c.walk("", fn)
}

func (c *Command) walk(prefix string, fn func(string, *Command)) {
	for _, s := range c.Subcommands {
		path := strings.TrimSpace(prefix + " " + s.Name)
		fn(path, s)
		s.walk(path, fn)
	}
}

// choiceWord is one value of a closed set as the help lists them; parenthesised is an
// explanation in the help.
var (
	choiceWord    = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	parenthesised = regexp.MustCompile(` ?\([^)]*\)`)
)

// Choices are the values a flag takes when its help lists a closed set right after the
// value's name ("`LEVEL` that fails the run: error, warn or never", "order by `KEY`:
// started, ended, messages or id"; what parentheses hold explains, and is left out), nil when
// it does not: every listed value must be one plain word.
func (f Flag) Choices() []string {
	usage := parenthesised.ReplaceAllString(f.Usage, "")
	_, afterName, ok := strings.Cut(usage, "`")
	if ok {
		_, afterName, ok = strings.Cut(afterName, "`")
	}
	lead, list, found := strings.Cut(afterName, ": ")
	if !f.Value || !ok || !found || strings.Contains(lead, ",") {
		return nil
	}
	var out []string
	for _, item := range strings.Split(strings.ReplaceAll(list, " or ", ", "), ", ") {
		if !choiceWord.MatchString(item) {
			return nil
		}
		out = append(out, item)
	}
	return out
}
