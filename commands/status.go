package commands

import (
	"fmt"
	"time"

	"github.com/fatih/color"
	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show the home: paths, gateway, storage model, schema, counts and what the next gateway start will do",
		ArgsUsage: " ",
		Action:    runStatus,
	}
}

// statusCounts is data.counts of `status --json`.
type statusCounts struct {
	Entries       int   `json:"entries"`
	Skipped       int   `json:"skipped"`
	ResumePending int   `json:"resume_pending"`
	Suspended     int   `json:"suspended"`
	Stale         int   `json:"stale"`
	Sessions      int64 `json:"sessions"`
	OpenSessions  int64 `json:"open_sessions"`
	EndedSessions int64 `json:"ended_sessions"`
	Messages      int64 `json:"messages"`
}

// statusData is data of `status --json`.
type statusData struct {
	Counts        statusCounts        `json:"counts"`
	RoutingSource string              `json:"routing_source"`
	ForeignScopes map[string]int      `json:"foreign_scopes,omitempty"`
	RestartCounts map[string]any      `json:"restart_failure_counts"`
	CleanShutdown bool                `json:"clean_shutdown"`
	JournalMode   string              `json:"journal_mode,omitempty"`
	NextStart     []check.StartAction `json:"next_start"`
	Gateway       string              `json:"gateway_detail"`
	SQLiteVersion string              `json:"sqlite_version,omitempty"`
	Schema        *schemaSummary      `json:"schema,omitempty"`
}

// schemaSummary is the state.db schema as status reports it.
type schemaSummary struct {
	Version          int    `json:"version"`
	Known            bool   `json:"known"`
	FTSLayout        string `json:"fts_layout"`
	CompressionLocks bool   `json:"compression_locks"`
	GatewayRouting   bool   `json:"gateway_routing"`
	StateMeta        bool   `json:"state_meta"`
	PageCount        int64  `json:"page_count"`
	FreelistCount    int64  `json:"freelist_count"`
}

func summariseSchema(s statedb.Schema) *schemaSummary {
	return &schemaSummary{Version: s.Version, Known: s.Known, FTSLayout: s.FTSLayout, CompressionLocks: s.HasCompressionLocks,
		GatewayRouting: s.HasGatewayRouting, StateMeta: s.HasStateMeta, PageCount: s.PageCount, FreelistCount: s.FreelistCount}
}

func runStatus(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("status takes no arguments")
	}
	o, err := loadOptions(c, "status")
	if err != nil {
		return err
	}
	return showStatus(c, o)
}

func showStatus(c *cli.Context, o *options) error {
	h, err := home.Open(c.Context, o.Options, home.Read)
	if err != nil {
		return err
	}
	defer h.Close()
	data, err := buildStatus(c, h)
	if err != nil {
		return err
	}
	findings := check.Scope(h)
	if o.json {
		return emitJSON(o, newEnvelope(h, o, result{data: data, findings: findings}))
	}
	if o.quiet {
		return nil
	}
	return printStatus(o, h, data, findings)
}

func buildStatus(c *cli.Context, h *home.Home) (statusData, error) {
	rows, err := h.Rows(c.Context)
	if err != nil {
		return statusData{}, err
	}
	d := statusData{
		RoutingSource: h.Routing.Source.String(),
		ForeignScopes: h.Routing.Foreign,
		RestartCounts: countsMap(h),
		CleanShutdown: h.CleanShutdown,
		Gateway:       h.Gateway.Detail,
		NextStart:     orEmpty(check.PreviewStart(h, rows)),
	}
	d.Counts = routingCounts(h)
	if h.DB != nil {
		t, err := h.DB.Totals(c.Context)
		if err != nil {
			return d, fmt.Errorf("state.db: %w", err)
		}
		d.Counts.Sessions, d.Counts.OpenSessions, d.Counts.EndedSessions, d.Counts.Messages = t.Sessions, t.Open, t.Ended, t.Messages
		d.Schema = summariseSchema(h.Schema)
		d.JournalMode = h.Schema.JournalMode
		d.SQLiteVersion = h.Schema.SQLiteVersion
	}
	return d, nil
}

func routingCounts(h *home.Home) statusCounts {
	now := h.Opts.Clock.NaiveLocalMicros(time.Local)
	var c statusCounts
	for _, e := range h.Routing.Entries {
		if e.Skip != "" {
			c.Skipped++
			continue
		}
		c.Entries++
		if e.ResumePending {
			c.ResumePending++
			if e.StaleMarker(now) {
				c.Stale++
			}
		}
		if e.Suspended {
			c.Suspended++
		}
	}
	return c
}

func countsMap(h *home.Home) map[string]any {
	counts := h.Counts.Parsed
	if counts == nil {
		return nil
	}
	out := make(map[string]any, len(counts.Keys))
	for _, k := range counts.Keys {
		if n, ok := counts.Int(k); ok {
			out[k] = n
		} else {
			out[k] = string(counts.Values[k])
		}
	}
	return out
}

func printStatus(o *options, h *home.Home, d statusData, findings []check.Finding) error {
	w := o.stdout
	fmt.Fprintf(w, "home        %s\n", o.Home.Dir)
	if o.Home.Profile != "" {
		fmt.Fprintf(w, "profile     %s (from %s)\n", o.Home.Profile, o.Home.ProfileSource)
	}
	fmt.Fprintf(w, "sessions    %s\n", o.Home.SessionsJSON())
	fmt.Fprintf(w, "state.db    %s\n", o.Home.StateDB())
	fmt.Fprintf(w, "gateway     %s (%s)\n", gatewayWord(o, h.Gateway.Running), h.Gateway.Detail)
	fmt.Fprintf(w, "storage     %s, routing read from %s\n", h.Storage, h.Routing.Source)
	fmt.Fprintf(w, "generation  %s\n", h.Gen)
	if h.DB != nil {
		known := "known"
		if !h.Schema.Known {
			known = o.paint("UNKNOWN (newer than this tool: read-only)", color.FgRed)
		}
		fmt.Fprintf(w, "schema      v%d, %s, journal %s, SQLite %s\n", h.Schema.Version, known, h.Schema.JournalMode, h.Schema.SQLiteVersion)
	} else {
		fmt.Fprintf(w, "schema      no state.db\n")
	}
	c := d.Counts
	fmt.Fprintf(w, "entries     %d loaded, %d skipped by the runtime; %d resume_pending (%d stale), %d suspended\n",
		c.Entries, c.Skipped, c.ResumePending, c.Stale, c.Suspended)
	fmt.Fprintf(w, "sessions    %d (%d open, %d ended), %d messages\n", c.Sessions, c.OpenSessions, c.EndedSessions, c.Messages)
	fmt.Fprintf(w, "counts      %s\n", describeCounts(h.Counts))
	fmt.Fprintf(w, "shutdown    %s\n", describeCleanShutdown(h.CleanShutdown))
	printFindings(o, findings)
	return printNextStart(o, d.NextStart)
}

func gatewayWord(o *options, running bool) string {
	if running {
		return o.paint("RUNNING", color.FgYellow, color.Bold)
	}
	return "not running"
}

func describeCounts(c home.Counts) string {
	switch {
	case !c.Present:
		return ".restart_failure_counts absent"
	case c.Err != nil:
		return fmt.Sprintf(".restart_failure_counts unreadable (%v); the runtime leaves it in place", c.Err)
	default:
		return fmt.Sprintf(".restart_failure_counts: %d key(s)", len(c.Parsed.Keys))
	}
}

func describeCleanShutdown(present bool) string {
	if present {
		return ".clean_shutdown present: the next start skips crash recovery"
	}
	return ".clean_shutdown absent: the next start runs crash recovery (entries updated within 120 s)"
}

func printNextStart(o *options, actions []check.StartAction) error {
	if len(actions) == 0 {
		fmt.Fprintln(o.stdout, "next start  nothing changes")
		return nil
	}
	fmt.Fprintln(o.stdout, "next start:")
	rows := make([][]string, 0, len(actions))
	for _, a := range actions {
		rows = append(rows, []string{a.Key, a.Action, a.Reason})
	}
	return renderTable(o.stdout, []string{"KEY", "ACTION", "WHY"}, rows)
}

func printFindings(o *options, findings []check.Finding) {
	for _, f := range findings {
		fmt.Fprintf(o.stdout, "%s %s %s: %s\n", severityWord(o, f.Severity), f.Check, f.Subject, f.Message)
	}
}

func severityWord(o *options, sev check.Severity) string {
	switch sev {
	case check.Error:
		return o.paint("ERROR", color.FgRed, color.Bold)
	case check.Warn:
		return o.paint("WARN ", color.FgYellow)
	default:
		return "INFO "
	}
}
