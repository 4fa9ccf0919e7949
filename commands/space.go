package commands

import (
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/space"
	"github.com/urfave/cli/v2"
)

func spaceCommand() *cli.Command {
	return &cli.Command{
		Name:      "space",
		Usage:     "read-only: where the bytes are (tables, indexes, WAL, free pages, FTS, transcripts) and what prune, compact and entries prune would reclaim",
		ArgsUsage: " ",
		UsageText: "sessionctl space --older-than 30d",
		Flags: []cli.Flag{&cli.StringFlag{Name: "older-than", Value: "90d",
			Usage: "the age `D` of the prune and entries prune estimates (90d: the runtime's retention)"}},
		Action: runSpace,
	}
}

func runSpace(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("space takes no arguments")
	}
	age, err := ageFlag(c, "older-than")
	if err != nil {
		return err
	}
	o, err := loadOptions(c, "space")
	if err != nil {
		return err
	}
	h, err := home.Open(c.Context, o.Options, home.Read)
	if err != nil {
		return err
	}
	defer h.Close()
	days := age / 86400
	rep, err := space.Measure(c.Context, h, space.Options{PruneDays: days, EntriesDays: days})
	if err != nil {
		return err
	}
	if o.json {
		return emitJSON(o, newEnvelope(h, o, result{data: map[string]space.Report{"space": rep}}))
	}
	for _, line := range rep.Lines() {
		fmt.Fprintln(o.stdout, line)
	}
	return nil
}
