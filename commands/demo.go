package commands

import (
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/demo"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "build a sample home with one of every problem, print its path, and show status and check on it",
		ArgsUsage: "[DIR]",
		UsageText: "sessionctl demo /tmp/hermes-demo",
		Action:    runDemo,
	}
}

func runDemo(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("demo takes at most one DIR")
	}
	o, err := loadOptions(c, "demo")
	if err != nil {
		return err
	}
	dir, err := demo.Dir(c.Args().First())
	if err != nil {
		return err
	}
	if err := demo.Build(c.Context, dir, o.Clock); err != nil {
		return failure.Mark(failure.Data, fmt.Errorf("build demo home in %s: %w", dir, err))
	}
	o.Home = sessionsjson.Home{Root: dir, Dir: dir, HomeSource: "demo"}
	if !o.json {
		fmt.Fprintf(o.stdout, "demo home: %s\n(try: sessionctl --home %s check; sessionctl --home %s maintain --apply)\n\n", dir, dir, dir)
	}
	if err := showStatus(c, o); err != nil {
		return err
	}
	if o.json {
		return nil
	}
	fmt.Fprintln(o.stdout)
	return demoCheck(c, o)
}

// demoCheck shows check's findings; findings are the point of the demo, not a failure.
func demoCheck(c *cli.Context, o *options) error {
	h, err := home.Open(c.Context, o.Options, home.Inspect)
	if err != nil {
		return err
	}
	defer h.Close()
	findings, err := check.Run(c.Context, h, false)
	if err != nil {
		return err
	}
	return reportFindings(o, h, findings, check.FailNever, nil)
}
