package commands

import (
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/group"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
)

// envelope is the one JSON document printed by --json.
type envelope struct {
	Command        string            `json:"command"`
	Home           string            `json:"home"`
	Paths          map[string]string `json:"paths"`
	Now            string            `json:"now"`
	NowUnix        float64           `json:"now_unix"`
	GatewayRunning bool              `json:"gateway_running"`
	Gateway        any               `json:"gateway"`
	Storage        string            `json:"storage"`
	Generation     string            `json:"generation"`
	SchemaVersion  *int              `json:"schema_version"`
	SchemaKnown    bool              `json:"schema_known"`
	Applied        bool              `json:"applied"`
	Findings       []check.Finding   `json:"findings"`
	Changes        []repair.Change   `json:"changes"`
	Journal        *string           `json:"journal"`
	Journals       []string          `json:"journals"`
	Version        string            `json:"version"`
	Summary        *group.Summaries  `json:"summary"` // of status, check, upgrade-check, maintain, the repairs; null for the rest
	Data           any               `json:"data"`
	// Error and ExitCode come last: a list streamed into data learns them at its end.
	Error    *errorJSON `json:"error"`
	ExitCode int        `json:"exit_code"`
}

// errorJSON is the envelope's error: what ended the run, null on success.
type errorJSON struct {
	Code    int    `json:"code"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// gatewayJSON is how the envelope says whether a gateway runs and how that was decided.
type gatewayJSON struct {
	Running bool   `json:"running"`
	Method  string `json:"method"`
	PID     int    `json:"pid"`
	Detail  string `json:"detail"`
}

// result is what a command hands to the printer.
type result struct {
	applied  bool
	findings []check.Finding
	changes  []repair.Change
	journals []string // every journal written, oldest first
	exitCode int
	data     any
	summary  bool           // the envelope has summary (of findings, changes and nextStart)
	next     *group.Summary // status' next start, grouped
}

// outcomeResult is the printable form of a repair's outcome: data.batches lists the
// transactions of a state.db repair.
func outcomeResult(out repair.Outcome) result {
	res := result{applied: out.Applied, findings: out.Findings, changes: out.Changes, journals: out.Journals, summary: true}
	if len(out.Batches) > 0 {
		res.data = map[string][]*repair.BatchRecord{"batches": out.Batches}
	}
	return res
}

func newEnvelope(h *home.Home, o *options, r result) envelope {
	env := envelope{
		Command:  o.Command,
		Home:     o.Home.Dir,
		Paths:    homePaths(o),
		Now:      formatInstant(o.Clock.UnixMicros),
		NowUnix:  o.Clock.Unix,
		Applied:  r.applied,
		Findings: orEmpty(r.findings),
		Changes:  orEmpty(r.changes),
		Journals: orEmpty(r.journals),
		ExitCode: r.exitCode,
		Version:  version(),
		Data:     r.data,
	}
	if r.summary {
		env.Summary = &group.Summaries{Findings: group.OfFindings(r.findings), Changes: group.OfChanges(r.changes), NextStart: r.next}
	}
	if n := len(r.journals); n > 0 {
		env.Journal = &r.journals[n-1]
	}
	if h != nil {
		g := h.Gateway
		env.GatewayRunning = g.Running
		env.Gateway = gatewayJSON{Running: g.Running, Method: g.Method, PID: g.PID, Detail: g.Detail}
		env.Storage = h.Storage.String()
		env.Generation = string(h.Gen)
		if h.DB != nil {
			ver := h.Schema.Version
			env.SchemaVersion = &ver
			env.SchemaKnown = h.Schema.Known
		}
	}
	return env
}

func homePaths(o *options) map[string]string {
	h := o.Home
	if h.Dir == "" {
		return map[string]string{}
	}
	return map[string]string{
		"home":                   h.Dir,
		"root":                   h.Root,
		"profile":                h.Profile,
		"sessions_json":          h.SessionsJSON(),
		"state_db":               h.StateDB(),
		"restart_failure_counts": h.CountsFile(),
		"clean_shutdown":         h.CleanShutdownFile(),
		"gateway_lock":           h.GatewayLockFile(),
		"gateway_pid":            h.PIDFile(),
	}
}

// orEmpty returns s, or an empty slice for nil, so that JSON shows [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// emitJSON writes the envelope as one indented JSON document.
func emitJSON(o *options, env envelope) error {
	data, err := listout.Encode(env, true)
	if err != nil {
		return err
	}
	o.state.emitted = true
	_, err = o.stdout.Write(data)
	return err
}

// formatInstant renders Unix microseconds as RFC 3339 UTC with microseconds.
func formatInstant(micros int64) string {
	return time.UnixMicro(micros).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
}
