package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

// repairFlags are the flags every repair command takes.
func repairFlags(extra ...cli.Flag) []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "apply", Usage: "write the change (default: print the plan only)"},
		&cli.BoolFlag{Name: "force", Usage: "write routing changes even while a gateway runs (it will likely overwrite them)"},
	}, extra...)
}

// repairRun is the shared frame of a repair: options, the tool lock when applying, the view.
type repairRun struct {
	o       *options
	v       *homeView
	apply   bool
	force   bool
	release func() error
}

// startRepair resolves options, takes the tool's lock when --apply is given (read-only plans
// lock nothing), and loads the home. The sessions.json mirror of a db-primary home is not kept:
// planRouting decodes it again once the plan against gateway_routing is made.
func startRepair(c *cli.Context, command string) (*repairRun, error) {
	return startRepairWith(c, command, func(ctx context.Context, o *options) (*homeView, error) {
		return loadViewFor(ctx, o, false, mirrorDrop)
	})
}

// startRepairWith is startRepair with the view loader of the caller's choice.
func startRepairWith(c *cli.Context, command string, load func(context.Context, *options) (*homeView, error)) (*repairRun, error) {
	o, err := loadOptions(c, command)
	if err != nil {
		return nil, err
	}
	release := func() error { return nil }
	if c.Bool("apply") {
		if release, err = lockHome(o); err != nil {
			return nil, err
		}
	}
	v, err := load(c.Context, o)
	if err != nil {
		_ = release()
		return nil, err
	}
	return &repairRun{o: o, v: v, apply: c.Bool("apply"), force: c.Bool("force"), release: release}, nil
}

// lockHome takes the tool's advisory lock (exit 3 with the holder when it is held).
func lockHome(o *options) (func() error, error) {
	if err := o.home.Validate(); err != nil {
		return nil, fmt.Errorf("home %s: %w", o.home.Dir, err)
	}
	release, err := sessionsjson.AcquireToolLock(o.home)
	if err != nil {
		return nil, fmt.Errorf("another sessionctl is writing this home: %w", err)
	}
	return release, nil
}

func (r *repairRun) finish() {
	r.v.close()
	_ = r.release()
}

// checkWritable refuses writes on schemas or generations the tool cannot write safely.
func (r *repairRun) checkWritable() error {
	v := r.v
	if v.db != nil && !v.schema.Known {
		return withCode(ExitData, fmt.Errorf("state.db schema v%d is newer than this sessionctl knows (≤ v21): refusing to write; reads still work", v.schema.Version))
	}
	if !v.rules.WritesAllowed {
		return withCode(ExitData, fmt.Errorf("generation %s: refusing to write", v.gen))
	}
	return nil
}

// checkRoutingWritable adds the routing-index refusals: a running gateway (exit 3 unless
// --force) and routing rows that belong to another scope.
func (r *repairRun) checkRoutingWritable() error {
	if err := r.checkWritable(); err != nil {
		return err
	}
	v := r.v
	if v.foreignRowsOnly() {
		return withCode(ExitData, errors.New("the gateway_routing rows belong to another scope (see status); refusing to write until they are relocated"))
	}
	if v.gateway.Running {
		if !r.force {
			return withCode(ExitRefused, fmt.Errorf("%w (%s)", errGatewayRunning, v.gateway.Detail))
		}
		r.o.warn("--force: a gateway is running (%s); it rewrites the routing index from memory on its next save and will likely undo this change", v.gateway.Detail)
	}
	return nil
}

// report prints the outcome of a repair (plan or applied) and returns the exit error.
func (r *repairRun) report(res result) error {
	o := r.o
	if o.json {
		res.exitCode = ExitOK
		return emitJSON(o, newEnvelope(r.v, o, res))
	}
	if !o.quiet || res.applied {
		printFindings(o, res.findings)
	}
	if o.quiet {
		return nil
	}
	if err := printChanges(o, res.changes); err != nil {
		return err
	}
	switch {
	case len(res.changes) == 0:
		fmt.Fprintln(o.stdout, "nothing to change")
	case res.applied:
		fmt.Fprintf(o.stdout, "applied %d change%s; journal: %s (undo with: sessionctl undo %s)\n", len(res.changes), plural(len(res.changes), "", "s"), res.journal, res.journal)
	default:
		fmt.Fprintf(o.stdout, "plan only: %d change%s; run again with --apply to write\n", len(res.changes), plural(len(res.changes), "", "s"))
	}
	return nil
}

func printChanges(o *options, changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	rows := make([][]string, 0, len(changes))
	for _, c := range changes {
		rows = append(rows, []string{c.Store, c.Target, c.Op, showValue(c.Before), showValue(c.After)})
	}
	return renderTable(o.stdout, []string{"STORE", "TARGET", "OP", "BEFORE", "AFTER"}, rows)
}

func showValue(v any) string {
	if v == nil {
		return "null"
	}
	if raw, ok := v.(json.RawMessage); ok {
		return truncate(string(raw), 60)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(data), 60)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
