package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestHelpConventions walks the command table and holds every command and flag to the help
// conventions (docs/decisions.md, "Help text"): a usage without a final period, at least one
// example that runs this very command with flags it knows, no "(default: false)" and no
// default said twice, and a placeholder for every value.
func TestHelpConventions(t *testing.T) {
	app := newApp(nil, nil, settings{}, &runState{})
	checkFlags := func(where string, flags []cli.Flag) {
		for _, f := range flags {
			checkFlagHelp(t, where, f)
		}
	}
	checkFlags("global", app.Flags)
	var walk func(cmds []*cli.Command, path string)
	walk = func(cmds []*cli.Command, path string) {
		for _, c := range cmds {
			p := strings.TrimSpace(path + " " + c.Name)
			if c.Usage == "" || strings.HasSuffix(c.Usage, ".") {
				t.Errorf("%s: usage %q: want one, without a final period", p, c.Usage)
			}
			checkExamples(t, app, p, c.UsageText)
			checkFlags(p, c.Flags)
			walk(c.Subcommands, p)
		}
	}
	walk(app.Commands, "")
}

func checkFlagHelp(t *testing.T, where string, f cli.Flag) {
	t.Helper()
	help := f.String()
	name := where + " --" + f.Names()[0]
	usage := f.(cli.DocGenerationFlag).GetUsage()
	switch {
	case strings.HasSuffix(usage, "."):
		t.Errorf("%s: usage %q ends in a period", name, usage)
	case strings.Contains(help, "(default: false)"):
		t.Errorf("%s: help %q shows (default: false)", name, help)
	case strings.Count(strings.ToLower(help), "default:") > 1:
		t.Errorf("%s: help %q says its default twice: put it in Value or DefaultText only", name, help)
	case strings.Contains(help, " value\t"):
		t.Errorf("%s: help %q: name the value with a `PLACEHOLDER` in the usage", name, help)
	}
}

// checkExamples checks the examples block finishCommands made of a command's UsageText: each
// example runs the command at path (a group's, one of its subcommands), and its flags are ones
// the command (or sessionctl) knows.
func checkExamples(t *testing.T, app *cli.App, path, usageText string) {
	t.Helper()
	_, block, ok := strings.Cut(usageText, "\n\nExample")
	if !ok {
		t.Errorf("%s: no example: give the command one in UsageText (an example command line a line)", path)
		return
	}
	_, block, _ = strings.Cut(block, "\n")
	for _, line := range strings.Split(block, "\n") {
		words := strings.Fields(line)
		if i := indexOf(words, ">"); i >= 0 {
			words = words[:i]
		}
		_, rest := splitLeadingFlags(words[1:], app.Flags)
		if got := strings.Join(commandPath(app.Commands, rest), " "); words[0] != "sessionctl" || (got != path && !strings.HasPrefix(got, path+" ")) {
			t.Errorf("%s: example %q runs %q", path, line, got)
			continue
		}
		if _, err := normaliseArgs(app, words); err != nil {
			t.Errorf("%s: example %q: %v", path, line, err)
		}
	}
}

// commandPath is the command path that args (after the global flags) name.
func commandPath(cmds []*cli.Command, args []string) []string {
	if len(args) == 0 {
		return nil
	}
	c := findCommand(cmds, args[0])
	if c == nil {
		return nil
	}
	return append([]string{c.Name}, commandPath(c.Subcommands, args[1:])...)
}

func indexOf(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

// TestDocsCurrent: docs/cli.md is what the command table generates, hidden commands left out.
func TestDocsCurrent(t *testing.T) {
	want, err := Markdown()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "docs", "cli.md"))
	if err != nil || string(got) != want {
		t.Fatalf("docs/cli.md is stale (%v): regenerate it with `go run ./scripts/gendocs` (or `go generate ./...`) and commit it", err)
	}
	for _, c := range docsApp().Commands {
		if heading := "\n## " + c.Name + "\n"; strings.Contains(want, heading) == c.Hidden {
			t.Errorf("docs/cli.md: command %s (hidden: %v)", c.Name, c.Hidden)
		}
	}
}
