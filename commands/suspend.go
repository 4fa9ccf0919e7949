package commands

import (
	"context"
	"fmt"

	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

func suspendCommand() *cli.Command {
	return &cli.Command{
		Name:      "suspend",
		Usage:     "suspend entries: the next message starts a fresh session (the runtime's suspend_session)",
		ArgsUsage: "KEY...",
		Flags:     repairFlags(),
		Action:    func(c *cli.Context) error { return runSetSuspended(c, "suspend", true) },
	}
}

func unsuspendCommand() *cli.Command {
	return &cli.Command{
		Name:      "unsuspend",
		Usage:     "clear the suspended flag",
		ArgsUsage: "KEY...",
		Flags:     repairFlags(),
		Action:    func(c *cli.Context) error { return runSetSuspended(c, "unsuspend", false) },
	}
}

func runSetSuspended(c *cli.Context, command string, value bool) error {
	if c.NArg() == 0 {
		return usagef("%s needs at least one KEY", command)
	}
	r, err := startRepair(c, command)
	if err != nil {
		return err
	}
	var p routingPlan
	for _, key := range c.Args().Slice() {
		e, f := lookupForEdit(r.v, key)
		if f != nil {
			p.findings = append(p.findings, *f)
			continue
		}
		if e.Suspended == value {
			continue
		}
		p.edits = append(p.edits, entryEdit{key, []fieldEdit{{"suspended", value}}})
	}
	return runRoutingRepair(r, p)
}

func suspendStuckCommand() *cli.Command {
	return &cli.Command{
		Name:      "suspend-stuck",
		Usage:     "suspend entries whose restart count is at or over the threshold (the gateway's stuck-loop rule)",
		ArgsUsage: " ",
		Flags:     repairFlags(&cli.IntFlag{Name: "threshold", Value: stuckLoopThreshold, Usage: "restart count `N` that marks a stuck loop"}),
		Action:    runSuspendStuck,
	}
}

func runSuspendStuck(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("suspend-stuck takes no arguments")
	}
	threshold := c.Int("threshold")
	if threshold < 1 {
		return usagef("--threshold must be 1 or more")
	}
	r, err := startRepair(c, "suspend-stuck")
	if err != nil {
		return err
	}
	return runRoutingRepair(r, planSuspendStuck(r.v, int64(threshold)))
}

// planSuspendStuck suspends loaded, unsuspended entries at or over the threshold and removes
// exactly those keys from the counts file (removing the file when it becomes empty).
func planSuspendStuck(v *homeView, threshold int64) routingPlan {
	var p routingPlan
	if v.countsErr != nil {
		p.findings = append(p.findings, Finding{"counts.unparseable", sevWarn, ".restart_failure_counts",
			fmt.Sprintf("unparseable (%v): left alone, as the runtime does", v.countsErr)})
		return p
	}
	if v.counts == nil {
		return p
	}
	var acted []string
	for _, key := range v.counts.Keys {
		n, ok := v.counts.Int(key)
		if !ok {
			p.findings = append(p.findings, Finding{"counts.not-integer", sevWarn, key, "count is not an integer: skipped"})
			continue
		}
		e := v.entry(key)
		if n < threshold || e == nil || e.Skip != "" || e.Suspended {
			continue
		}
		p.edits = append(p.edits, entryEdit{key, []fieldEdit{{"suspended", true}}})
		acted = append(acted, key)
	}
	if len(acted) > 0 {
		p.counts = countsImage(v, acted)
	}
	return p
}

func countsImage(v *homeView, acted []string) *fileImage {
	before := v.countsData
	rest := v.counts.Without(acted...)
	img := &fileImage{Path: v.opts.home.CountsFile(), Before: &before}
	if rest.Len() > 0 {
		after := rest.Encode()
		img.After = &after
	}
	return img
}

func repointCommand() *cli.Command {
	return &cli.Command{
		Name:      "repoint",
		Usage:     "point entries on a compression-ended session at its continuation (the compression tip)",
		ArgsUsage: " ",
		Flags:     repairFlags(),
		Action:    runRepoint,
	}
}

func runRepoint(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("repoint takes no arguments")
	}
	r, err := startRepair(c, "repoint")
	if err != nil {
		return err
	}
	if statedb.TipRuleForSchema(r.v.schema.Version) == statedb.TipNone || r.v.db == nil {
		r.finish()
		return withCode(ExitData, fmt.Errorf("generation %s has no compression-tip rule (get_compression_tip arrived with schema v11): nothing to repoint by the runtime's rules", r.v.gen))
	}
	p, err := planRepoint(c.Context, r.v)
	if err != nil {
		r.finish()
		return err
	}
	return runRoutingRepair(r, p)
}

// planRepoint moves entries on a compression-ended row to the compression tip.
func planRepoint(ctx context.Context, v *homeView) (routingPlan, error) {
	var p routingPlan
	if v.db == nil || statedb.TipRuleForSchema(v.schema.Version) == statedb.TipNone {
		return p, nil
	}
	rows, err := v.loadRows(ctx)
	if err != nil {
		return p, err
	}
	for _, e := range v.loaded() {
		if tip := rows[e.SessionID].Tip; tip != "" {
			p.edits = append(p.edits, entryEdit{e.Key, []fieldEdit{{"session_id", tip}}})
		}
	}
	return p, nil
}
