package commands

import (
	"math"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/metrics"
	"github.com/urfave/cli/v2"
)

// waitFlag is --wait of every write.
func waitFlag() cli.Flag {
	return &cli.StringFlag{Name: "wait", Usage: "wait up to `D` for the home's lock while another sessionctl holds it (with a unit: 90s, 5m, 2h, 1d; default: refuse at once, exit 3)"}
}

// metricsFlag is --metrics-file of check, status and maintain.
func metricsFlag() cli.Flag {
	return &cli.StringFlag{Name: "metrics-file", Usage: "write the home's gauges to `PATH` for node_exporter's textfile collector, atomically, on every exit (docs/metrics.md)"}
}

// lockWait reads --wait: 0 when the command has no such flag or it is not given.
func lockWait(c *cli.Context) (time.Duration, error) {
	if !c.IsSet("wait") {
		return 0, nil
	}
	secs, err := ageFlag(c, "wait")
	if err == nil && secs >= math.MaxInt64/float64(time.Second) {
		err = usagef("--wait %s is too long", c.String("wait"))
	}
	return time.Duration(secs * float64(time.Second)), err
}

// prepareMetrics checks --metrics-file before the run (nil without the flag).
func prepareMetrics(c *cli.Context) (*metrics.File, error) {
	if !c.IsSet("metrics-file") {
		return nil, nil
	}
	if c.String("metrics-file") == "" {
		return nil, usagef("--metrics-file: empty: name a file such as /var/lib/node_exporter/textfile_collector/sessionctl.prom")
	}
	return metrics.Prepare(c.String("metrics-file"))
}

// withMetrics wraps the action of a command with --metrics-file: a run that ends in an error
// (a usage error aside) before it wrote the file still writes it; a failure to write it then
// is a warning, and the run's own error stands.
func withMetrics(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		err := action(c)
		state, _ := c.App.Metadata[stateKey].(*runState)
		if code := exitCode(c.Context, err); code != ExitOK && code != ExitUsage && state != nil && state.opts != nil {
			if werr := state.metrics.RecordStopped(c.Context, state.opts.Options, code, err); werr != nil {
				state.opts.warn("%s", oneLine(werr))
			}
		}
		return err
	}
}
