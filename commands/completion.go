package commands

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/cmdtree"
	"github.com/sessionctl/sessionctl/commands/internal/complete"
	"github.com/urfave/cli/v2"
)

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
	script, ok := complete.Script(shell, tree(docsApp()))
	if !ok {
		return usagef("completion: unknown shell %q%s (bash, zsh, fish or powershell)", shell, didYouMean(shell, complete.Shells))
	}
	_, err := io.WriteString(c.App.Writer, script)
	return err
}

// completeArgs answers a completion request (complete.Parse): candidates on stdout, one a
// line, nothing on stderr, exit 0, and no command run.
func completeArgs(ctx context.Context, app *cli.App, r complete.Request) int {
	for _, v := range complete.Answer(ctx, tree(app), r, complete.Env{Getenv: os.Getenv, Now: time.Now()}) {
		fmt.Fprintln(app.Writer, v)
	}
	return ExitOK
}

// tree is the app's command table as cmdtree reads it (hidden commands and flags left out).
func tree(app *cli.App) *cmdtree.Command {
	return &cmdtree.Command{Name: app.Name, Usage: app.Usage, Description: app.Description, Flags: treeFlags(app.Flags), Subcommands: treeCommands(app.Commands)}
}

func treeCommands(cmds []*cli.Command) []*cmdtree.Command {
	var out []*cmdtree.Command
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, &cmdtree.Command{Name: c.Name, Aliases: c.Aliases, Usage: c.Usage, UsageText: c.UsageText, Description: c.Description,
				ArgsUsage: c.ArgsUsage, Flags: treeFlags(c.Flags), Subcommands: treeCommands(c.Subcommands)})
		}
	}
	return out
}

func treeFlags(flags []cli.Flag) []cmdtree.Flag {
	var out []cmdtree.Flag
	for _, f := range flags {
		d, ok := f.(cli.DocGenerationFlag)
		if v, vok := f.(cli.VisibleFlag); !ok || vok && !v.IsVisible() {
			continue
		}
		s, many := f.(cli.DocGenerationSliceFlag)
		synopsis, help, _ := strings.Cut(f.String(), "\t")
		out = append(out, cmdtree.Flag{Names: f.Names(), Usage: d.GetUsage(), Value: d.TakesValue(), Many: many && s.IsSliceFlag(),
			EnvVars: d.GetEnvVars(), Synopsis: synopsis, Help: help})
	}
	return out
}
