package commands

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/complete"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

// completionFlag ends a completion request: urfave/cli's protocol, which its scripts speak.
const completionFlag = "--generate-bash-completion"

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the completion script of SHELL: bash, zsh, fish or powershell (KEYs and session ids complete from the home)",
		ArgsUsage: "SHELL",
		UsageText: "sessionctl completion bash > ~/.local/share/bash-completion/completions/sessionctl",
		Action:    runCompletion,
	}
}

func runCompletion(c *cli.Context) error {
	if c.NArg() != 1 || c.Bool("json") {
		return usagef("completion takes one SHELL (bash, zsh, fish or powershell) and prints its script, not JSON")
	}
	shell := c.Args().First()
	script, ok := complete.Script(shell, c.App.Name)
	if shell == "fish" {
		static, err := docsApp().ToFishCompletion()
		if err != nil {
			return err
		}
		words := valueCommands(c.App.Commands)
		slices.Sort(words)
		script, ok = static+complete.FishValues(c.App.Name, slices.Compact(words)), true
	}
	if !ok {
		return usagef("completion: unknown shell %q%s (bash, zsh, fish or powershell)", shell, didYouMean(shell, complete.Shells))
	}
	_, err := io.WriteString(c.App.Writer, script)
	return err
}

// valueCommands are the names of the commands whose arguments complete from the home.
func valueCommands(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if _, ok := complete.ForArgs(c.ArgsUsage); ok {
			names = append(names, c.Name)
		}
		names = append(names, valueCommands(c.Subcommands)...)
	}
	return names
}

// completing reports whether args are a completion request.
func completing(args []string) bool {
	return len(args) > 1 && args[len(args)-1] == completionFlag
}

// completeArgs answers a completion request: candidates on stdout, one a line, nothing on
// stderr, exit 0, and no command run. urfave/cli would run the command of a request holding
// "--", so such a request gets no candidates. The flags are put in order first, as for a run,
// where that succeeds (a flag being typed is not one yet).
func completeArgs(ctx context.Context, app *cli.App, args []string) int {
	if slices.Contains(args, "--") {
		return ExitOK
	}
	typed := args[:len(args)-1]
	if state, ok := app.Metadata[stateKey].(*runState); ok && len(typed) > 1 {
		state.word = typed[len(typed)-1]
	}
	if norm, err := normaliseArgs(app, typed); err == nil {
		typed = slices.DeleteFunc(norm, func(a string) bool { return a == "--" })
	}
	app.ErrWriter = io.Discard
	_ = runApp(ctx, app, append(typed, completionFlag))
	return ExitOK
}

// completeValues completes a command's next argument with arg's values from the home, or the
// flag being typed with the command's flags (nothing while a flag's value is typed).
func completeValues(arg complete.Arg) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		word := ""
		if state, ok := c.App.Metadata[stateKey].(*runState); ok {
			word = state.word
		}
		known := lookupFlag(append(slices.Clone(c.Command.Flags), c.App.Flags...), word)
		if _, isSwitch := known.(*cli.BoolFlag); !isFlagToken(word) || isSwitch {
			printValues(c, arg)
			return
		}
		if known != nil { // its value is being typed
			return
		}
		for _, f := range c.Command.Flags {
			for _, name := range f.Names() {
				if strings.HasPrefix(dashed(name), word) {
					fmt.Fprintln(c.App.Writer, dashed(name))
				}
			}
		}
	}
}

// printValues prints the values of arg the home holds, nothing when it cannot be resolved.
func printValues(c *cli.Context, arg complete.Arg) {
	h, err := resolveHome(c)
	if err != nil {
		return
	}
	o := home.Options{Home: h, Clock: sessionsjson.ClockFromTime(time.Now()), Command: "completion"}
	for _, v := range arg.Values(c.Context, o, c.Args().Slice()) {
		fmt.Fprintln(c.App.Writer, v)
	}
}
