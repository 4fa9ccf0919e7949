package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/fatih/color"
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
	Counts        statusCounts   `json:"counts"`
	RoutingSource string         `json:"routing_source"`
	ForeignScopes map[string]int `json:"foreign_scopes,omitempty"`
	RestartCounts map[string]any `json:"restart_failure_counts"`
	CleanShutdown bool           `json:"clean_shutdown"`
	JournalMode   string         `json:"journal_mode,omitempty"`
	NextStart     []startAction  `json:"next_start"`
	Gateway       string         `json:"gateway_detail"`
	SQLiteVersion string         `json:"sqlite_version,omitempty"`
	Schema        *schemaSummary `json:"schema,omitempty"`
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
	return showStatus(c.Context, o)
}

func showStatus(ctx context.Context, o *options) error {
	v, err := loadViewFor(ctx, o, false, mirrorDrop)
	if err != nil {
		return err
	}
	defer v.close()
	data, findings, err := buildStatus(ctx, v)
	if err != nil {
		return err
	}
	if o.json {
		return emitJSON(o, newEnvelope(v, o, result{data: data, findings: findings}))
	}
	if o.quiet {
		return nil
	}
	return printStatus(v, data, findings)
}

func buildStatus(ctx context.Context, v *homeView) (statusData, []Finding, error) {
	rows, err := v.loadRows(ctx)
	if err != nil {
		return statusData{}, nil, err
	}
	d := statusData{
		RoutingSource: v.routingSrc,
		ForeignScopes: v.foreign,
		RestartCounts: countsMap(v),
		CleanShutdown: v.cleanShut,
		Gateway:       v.gateway.Detail,
		NextStart:     orEmpty(previewStart(v, rows)),
	}
	d.Counts = routingCounts(v)
	if v.db != nil {
		t, err := v.db.Totals(ctx)
		if err != nil {
			return d, nil, fmt.Errorf("state.db: %w", err)
		}
		d.Counts.Sessions, d.Counts.OpenSessions, d.Counts.EndedSessions, d.Counts.Messages = t.Sessions, t.Open, t.Ended, t.Messages
		d.Schema = summariseSchema(v.schema)
		d.JournalMode = v.schema.JournalMode
		d.SQLiteVersion = v.schema.SQLiteVersion
	}
	return d, scopeFindings(v), nil
}

func routingCounts(v *homeView) statusCounts {
	now := v.opts.clock.NaiveLocalMicros(time.Local)
	var c statusCounts
	for _, e := range v.routing {
		if e.Skip != "" {
			c.Skipped++
			continue
		}
		c.Entries++
		if e.ResumePending {
			c.ResumePending++
			if markerAge(e, now) > freshnessWindowMicros {
				c.Stale++
			}
		}
		if e.Suspended {
			c.Suspended++
		}
	}
	return c
}

func countsMap(v *homeView) map[string]any {
	if v.counts == nil {
		return nil
	}
	out := make(map[string]any, len(v.counts.Keys))
	for _, k := range v.counts.Keys {
		if n, ok := v.counts.Int(k); ok {
			out[k] = n
		} else {
			out[k] = string(v.counts.Values[k])
		}
	}
	return out
}

// scopeFindings says clearly when the gateway_routing rows belong to another home.
func scopeFindings(v *homeView) []Finding {
	var out []Finding
	for scope, n := range v.foreign {
		out = append(out, Finding{
			Check:    "routing.foreign-scope",
			Severity: sevError,
			Subject:  scope,
			Message: fmt.Sprintf("%d gateway_routing row(s) belong to scope %s, not this home's %s (home copied or restored elsewhere?); "+
				"the runtime ignores them here: relocate with UPDATE gateway_routing SET scope=… or run the gateway at the original path", n, scope, v.scope),
		})
	}
	return out
}

func printStatus(v *homeView, d statusData, findings []Finding) error {
	o := v.opts
	w := o.stdout
	fmt.Fprintf(w, "home        %s\n", o.home.Dir)
	if o.home.Profile != "" {
		fmt.Fprintf(w, "profile     %s (from %s)\n", o.home.Profile, o.home.ProfileSource)
	}
	fmt.Fprintf(w, "sessions    %s\n", o.home.SessionsJSON())
	fmt.Fprintf(w, "state.db    %s\n", o.home.StateDB())
	fmt.Fprintf(w, "gateway     %s (%s)\n", gatewayWord(o, v.gateway.Running), v.gateway.Detail)
	fmt.Fprintf(w, "storage     %s, routing read from %s\n", v.storage, v.routingSrc)
	fmt.Fprintf(w, "generation  %s\n", v.gen)
	if v.db != nil {
		known := "known"
		if !v.schema.Known {
			known = o.paint("UNKNOWN (newer than this tool: read-only)", color.FgRed)
		}
		fmt.Fprintf(w, "schema      v%d, %s, journal %s, SQLite %s\n", v.schema.Version, known, v.schema.JournalMode, v.schema.SQLiteVersion)
	} else {
		fmt.Fprintf(w, "schema      no state.db\n")
	}
	c := d.Counts
	fmt.Fprintf(w, "entries     %d loaded, %d skipped by the runtime; %d resume_pending (%d stale), %d suspended\n",
		c.Entries, c.Skipped, c.ResumePending, c.Stale, c.Suspended)
	fmt.Fprintf(w, "sessions    %d (%d open, %d ended), %d messages\n", c.Sessions, c.OpenSessions, c.EndedSessions, c.Messages)
	fmt.Fprintf(w, "counts      %s\n", describeCounts(v))
	fmt.Fprintf(w, "shutdown    %s\n", describeCleanShutdown(v.cleanShut))
	printFindings(o, findings)
	return printNextStart(o, d.NextStart)
}

func gatewayWord(o *options, running bool) string {
	if running {
		return o.paint("RUNNING", color.FgYellow, color.Bold)
	}
	return "not running"
}

func describeCounts(v *homeView) string {
	switch {
	case !v.countsRaw:
		return ".restart_failure_counts absent"
	case v.countsErr != nil:
		return fmt.Sprintf(".restart_failure_counts unreadable (%v); the runtime leaves it in place", v.countsErr)
	default:
		return fmt.Sprintf(".restart_failure_counts: %d key(s)", len(v.counts.Keys))
	}
}

func describeCleanShutdown(present bool) string {
	if present {
		return ".clean_shutdown present: the next start skips crash recovery"
	}
	return ".clean_shutdown absent: the next start runs crash recovery (entries updated within 120 s)"
}

func printNextStart(o *options, actions []startAction) error {
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

func printFindings(o *options, findings []Finding) {
	for _, f := range findings {
		fmt.Fprintf(o.stdout, "%s %s %s: %s\n", severityWord(o, f.Severity), f.Check, f.Subject, f.Message)
	}
}

func severityWord(o *options, sev string) string {
	switch sev {
	case sevError:
		return o.paint("ERROR", color.FgRed, color.Bold)
	case sevWarn:
		return o.paint("WARN ", color.FgYellow)
	default:
		return "INFO "
	}
}
