// Package metrics writes sessionctl's node_exporter textfile-collector file (--metrics-file of
// check, status and maintain): the gauges of one home as a run found it — routing entries by
// state, stuck loops, sessions, orphans, ghosts, findings by check and severity, state.db's
// bytes — and the run's own (when, how long, its exit code; maintain's changes). The
// exposition format is client_golang's (its own registry, prometheus.WriteToTextfile); the
// file is replaced atomically and durably. docs/metrics.md documents every gauge.
package metrics

import (
	"context"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/statedb"
)

// Home is what a run found in the home: the gauges that describe it.
type Home struct {
	Counts         check.StatusCounts
	Findings       []check.Finding
	GatewayRunning bool
	// DB is state.db's layout; nil when the home has no state.db or it could not be read.
	DB            *statedb.Physical
	SchemaVersion int
}

// Gather reads the gauges of h (opened for home.Inspect or home.Survey, or home.Read) with
// the findings the run made on it.
func Gather(ctx context.Context, h *home.Home, findings []check.Finding) (*Home, error) {
	counts, err := check.Counts(ctx, h)
	if err != nil {
		return nil, err
	}
	out := &Home{Counts: counts, Findings: findings, GatewayRunning: h.Gateway.Running}
	if h.DB != nil {
		p, err := h.DB.Physical(ctx)
		if err != nil {
			return nil, err
		}
		out.DB, out.SchemaVersion = &p, h.Schema.Version
	}
	return out, nil
}

// Inspect opens the home as check does, runs every check and gathers the gauges (status, and
// a maintain that stopped before its report).
func Inspect(ctx context.Context, o home.Options) (*Home, error) {
	h, err := home.Open(ctx, o, home.Inspect)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	findings, err := check.Run(ctx, h, false)
	if err != nil {
		return nil, err
	}
	return Gather(ctx, h, findings)
}

// count is the number of findings of check id.
func (h *Home) count(id check.ID) int {
	n := 0
	for _, f := range h.Findings {
		if f.Check == id {
			n++
		}
	}
	return n
}
