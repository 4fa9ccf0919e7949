package metrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sessionctl/sessionctl/commands/internal/check"
)

// namespace prefixes every metric name.
const namespace = "sessionctl"

// gauge is one gauge without labels of its own, and its value.
type gauge struct {
	name, help string
	value      float64
}

// registry is a registry of its own (never the default one, which holds the process's
// collectors) with the run's gauges and, when h is known, the home's; every series carries
// the labels home (the home's directory) and command.
func registry(dir string, run Run, took time.Duration, h *Home) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	r := prometheus.WrapRegistererWith(prometheus.Labels{"home": dir, "command": run.Command}, reg)
	gauges := runGauges(run, took)
	var errs []error
	if h != nil {
		gauges = append(gauges, h.gauges()...)
		errs = append(errs, r.Register(h.findings()))
	}
	for _, g := range gauges {
		m := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: g.name, Help: g.help})
		m.Set(g.value)
		errs = append(errs, r.Register(m))
	}
	return reg, errors.Join(errs...)
}

// runGauges are the run's own gauges.
func runGauges(run Run, took time.Duration) []gauge {
	out := []gauge{
		{"last_run_timestamp_seconds", "When the run started (its clock: --now, else the system clock), in Unix seconds.", run.Clock.Unix},
		{"last_run_duration_seconds", "How long the run took, in seconds.", took.Seconds()},
		{"last_run_exit_code", "The run's exit code (0 ok, 1 findings at or above --fail-on, 3 refused or busy, 4 data, 5 rolled back, 6 partial, 130/143 interrupted).", float64(run.ExitCode)},
	}
	if m := run.Maintain; m != nil {
		out = append(out,
			gauge{"maintain_problems_found", "Findings above info before maintain's repairs.", float64(m.Found)},
			gauge{"maintain_changes_planned", "Changes maintain's repairs would make (a run without --apply).", float64(m.Planned)},
			gauge{"maintain_changes_applied", "Changes maintain applied.", float64(m.Changed)},
			gauge{"maintain_journals", "Journals maintain wrote (one per step or batch that changed something).", float64(m.Journals)})
	}
	return out
}

// gauges are the home's gauges; those of state.db only when the home has a readable one.
func (h *Home) gauges() []gauge {
	c := h.Counts
	out := []gauge{
		{"routing_entries", "Routing entries the runtime loads (sessions.json, or gateway_routing from schema v19).", float64(c.Entries)},
		{"routing_entries_skipped", "Routing entries the runtime skips when it loads the index.", float64(c.Skipped)},
		{"resume_pending", "Routing entries marked resume_pending.", float64(c.ResumePending)},
		{"suspended", "Routing entries marked suspended.", float64(c.Suspended)},
		{"stale_resume_markers", "resume_pending markers older than the runtime's freshness window (1 h).", float64(c.Stale)},
		{"stuck_loops", "Entries at or over the stuck-loop threshold of restart failures and not suspended (check counts.stuck).", float64(h.count(check.CountsStuck))},
		{"gateway_running", "1 when a gateway runs on the home, else 0.", boolValue(h.GatewayRunning)},
	}
	if h.DB == nil {
		return out
	}
	return append(out,
		gauge{"sessions", "Sessions in state.db.", float64(c.Sessions)},
		gauge{"sessions_open", "Open sessions in state.db (not ended).", float64(c.OpenSessions)},
		gauge{"messages", "Messages in state.db.", float64(c.Messages)},
		gauge{"orphaned_continuations", "Orphaned compression continuations finalize-orphans would end (check db.orphaned-continuation).", float64(h.count(check.DBOrphanedContinuation))},
		gauge{"ghost_sessions", "Empty, untitled, ended TUI sessions prune-ghosts would delete (check db.tui-ghost).", float64(h.count(check.DBTUIGhost))},
		gauge{"schema_version", "state.db's schema version.", float64(h.SchemaVersion)},
		gauge{"database_bytes", "Size of state.db on disk, in bytes.", float64(h.DB.FileBytes)},
		gauge{"wal_bytes", "Size of state.db-wal, in bytes (0 without one).", float64(h.DB.WALBytes)},
		gauge{"free_bytes", "Bytes in state.db's free pages (freelist_count × page_size): what compact reclaims.", float64(h.DB.FreeBytes())})
}

// findings is sessionctl_findings: the run's findings by check and severity.
func (h *Home) findings() *prometheus.GaugeVec {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "findings",
		Help: "Findings of the run by check id and severity (error, warn, info); a pair without findings has no series."}, []string{"check", "severity"})
	for _, f := range h.Findings {
		v.WithLabelValues(string(f.Check), string(f.Severity)).Inc()
	}
	return v
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
