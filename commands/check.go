package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "run every read-only health check; exit 1 when a finding is at or above --fail-on",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "fail-on", Value: sevError, Usage: "`LEVEL` that fails the run: error, warn or never"},
			&cli.BoolFlag{Name: "deep", Usage: "also run PRAGMA integrity_check over the whole database (slow on large homes)"},
		},
		Action: runCheck,
	}
}

func runCheck(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("check takes no arguments")
	}
	failOn := c.String("fail-on")
	if failOn != sevError && failOn != sevWarn && failOn != "never" {
		return usagef("--fail-on must be error, warn or never")
	}
	o, err := loadOptions(c, "check")
	if err != nil {
		return err
	}
	v, err := loadView(c.Context, o, true)
	if err != nil {
		return err
	}
	defer v.close()
	findings, err := runChecks(c.Context, v, c.Bool("deep"))
	if err != nil {
		return err
	}
	return reportFindings(o, v, findings, failOn, nil)
}

// reportFindings prints findings (human or JSON) and returns exit 1 when one reaches failOn.
func reportFindings(o *options, v *homeView, findings []Finding, failOn string, data any) error {
	code := ExitOK
	if failsAt(findings, failOn) {
		code = ExitFindings
	}
	if o.json {
		if err := emitJSON(o, newEnvelope(v, o, result{findings: findings, exitCode: code, data: data})); err != nil {
			return err
		}
	} else if !o.quiet || code != ExitOK {
		printFindings(o, findings)
		if !o.quiet {
			fmt.Fprintf(o.stdout, "%s\n", summarise(findings))
		}
	}
	if code != ExitOK {
		return withCode(code, fmt.Errorf("%w", errReported))
	}
	return nil
}

func failsAt(findings []Finding, failOn string) bool {
	for _, f := range findings {
		if f.Severity == sevError && failOn != "never" {
			return true
		}
		if f.Severity == sevWarn && failOn == sevWarn {
			return true
		}
	}
	return false
}

func summarise(findings []Finding) string {
	n := map[string]int{}
	for _, f := range findings {
		n[f.Severity]++
	}
	return fmt.Sprintf("%d error(s), %d warning(s), %d info", n[sevError], n[sevWarn], n[sevInfo])
}

// runChecks runs every check family over the view.
func runChecks(ctx context.Context, v *homeView, deep bool) ([]Finding, error) {
	var out []Finding
	out = append(out, scopeFindings(v)...)
	out = append(out, checkSessionsFile(v)...)
	out = append(out, checkEntries(v)...)
	out = append(out, checkCountsFile(v)...)
	rows, err := v.loadRows(ctx)
	if err != nil {
		return nil, err
	}
	out = append(out, checkRoutingRows(v, rows)...)
	out = append(out, checkMirror(v)...)
	dbFindings, err := checkDatabase(ctx, v, deep)
	if err != nil {
		return nil, err
	}
	out = append(out, dbFindings...)
	out = append(out, checkGateway(v, out)...)
	return out, nil
}

func checkSessionsFile(v *homeView) []Finding {
	var out []Finding
	if v.docErr != nil {
		out = append(out, Finding{"sessions-json.unreadable", sevError, "sessions.json",
			oneLine(v.docErr) + ": the runtime starts empty and overwrites it on its next save; restore it from a backup"})
	}
	tmps, _ := filepath.Glob(filepath.Join(v.opts.home.SessionsDir(), ".sessions_*.tmp"))
	for _, t := range tmps {
		out = append(out, Finding{"sessions-json.leftover-tmp", sevWarn, filepath.Base(t),
			"leftover temp file from an interrupted save: safe to delete once the gateway is stopped"})
	}
	return out
}

func checkEntries(v *homeView) []Finding {
	now := v.opts.clock.NaiveLocalMicros(time.Local)
	var out []Finding
	owners := map[string][]string{}
	for _, e := range v.routing {
		if e.Skip != "" {
			out = append(out, Finding{"entry.skipped", sevWarn, e.Key, "the runtime skips this entry: " + e.Skip + "; fix or remove it by hand"})
			continue
		}
		owners[e.SessionID] = append(owners[e.SessionID], e.Key)
		out = append(out, checkEntry(e, now)...)
	}
	for id, keys := range owners {
		if len(keys) > 1 {
			out = append(out, Finding{"entry.shared-session", sevWarn, id, "session shared by " + strings.Join(keys, ", ") + ": suspend all but one (sessionctl suspend KEY)"})
		}
	}
	return out
}

func checkEntry(e *sessionsjson.Entry, now int64) []Finding {
	var out []Finding
	for _, ts := range []struct {
		name string
		t    *sessionsjson.Timestamp
	}{{"created_at", &e.CreatedAt}, {"updated_at", &e.UpdatedAt}, {"last_resume_marked_at", e.LastResumeMarkedAt}} {
		if ts.t == nil {
			continue
		}
		if ts.t.Aware {
			out = append(out, Finding{"entry.aware-timestamp", sevError, e.Key, ts.name + " " + ts.t.Raw + " has a time zone: the gateway crashes comparing it; rewrite it as naive local time"})
		} else if ts.t.WallMicros() > now {
			out = append(out, Finding{"entry.future-timestamp", sevWarn, e.Key, ts.name + " " + ts.t.Raw + " is in the future: idle reset is delayed; check the gateway's clock and TZ"})
		}
	}
	if e.Key != e.SessionKey {
		out = append(out, Finding{"entry.key-mismatch", sevWarn, e.Key, "session_key field is " + e.SessionKey + ": the runtime indexes by the dict key"})
	}
	if e.Suspended && e.ResumePending {
		out = append(out, Finding{"entry.suspended-and-pending", sevWarn, e.Key, "both suspended and resume_pending: suspended wins; clear the marker (sessionctl resume clear KEY)"})
	}
	if e.ResumePending && markerAge(e, now) > freshnessWindowMicros {
		out = append(out, Finding{"entry.stale-resume", sevWarn, e.Key, "resume marker older than the 1 h freshness window: never auto-resumed (sessionctl resume clear --stale)"})
	}
	if e.ResumePending && (e.ResumeReason == nil || !autoResumeReasons[*e.ResumeReason]) {
		out = append(out, Finding{"entry.unknown-resume-reason", sevWarn, e.Key, "resume_reason is not one the runtime auto-resumes: clear it (sessionctl resume clear KEY)"})
	}
	if !e.PlatformKnown && e.Platform != "" {
		out = append(out, Finding{"entry.unknown-platform", sevInfo, e.Key, "platform " + e.Platform + " is not a built-in one: the runtime loads it as null unless a plugin provides it"})
	}
	if len(e.UnknownFields) > 0 {
		out = append(out, Finding{"entry.unknown-fields", sevInfo, e.Key, "fields the runtime drops on its next save: " + strings.Join(e.UnknownFields, ", ")})
	}
	return out
}

func checkCountsFile(v *homeView) []Finding {
	if v.countsErr != nil {
		return []Finding{{"counts.unparseable", sevWarn, ".restart_failure_counts", oneLine(v.countsErr) + ": the runtime ignores and keeps it; delete it with the gateway stopped"}}
	}
	if v.counts == nil {
		return nil
	}
	var out []Finding
	for _, key := range v.counts.Keys {
		n, ok := v.counts.Int(key)
		e := v.entry(key)
		switch {
		case !ok:
			out = append(out, Finding{"counts.not-integer", sevWarn, key, "count " + string(v.counts.Values[key]) + " is not an integer: the gateway's shutdown raises on it; delete the file with the gateway stopped"})
		case e == nil:
			out = append(out, Finding{"counts.orphan-key", sevInfo, key, "count for a key with no routing entry: ignored by the runtime"})
		case n >= stuckLoopThreshold && !e.Suspended:
			out = append(out, Finding{"counts.stuck", sevWarn, key, fmt.Sprintf("active across %d restarts (threshold 3), not suspended: sessionctl suspend-stuck", n)})
		}
	}
	return out
}

func checkRoutingRows(v *homeView, rows map[string]rowInfo) []Finding {
	if v.db == nil {
		return nil
	}
	var out []Finding
	for _, e := range v.loaded() {
		row, ok := rows[e.SessionID]
		if !ok {
			out = append(out, Finding{"entry.row-missing", sevWarn, e.Key, "session " + e.SessionID + " has no state.db row (the row insert failed or the DB was replaced)"})
			continue
		}
		out = append(out, rowStateFinding(e, row)...)
		if e.Platform != "" && row.Session.Source != e.Platform {
			out = append(out, Finding{"entry.source-mismatch", sevWarn, e.Key, "row source " + row.Session.Source + " differs from the entry's platform " + e.Platform})
		}
		if row.Session.SessionKey != nil && *row.Session.SessionKey != "" && *row.Session.SessionKey != e.Key {
			out = append(out, Finding{"entry.row-key-mismatch", sevWarn, e.Key, "row " + e.SessionID + " belongs to key " + *row.Session.SessionKey})
		}
	}
	return out
}

func rowStateFinding(e *sessionsjson.Entry, row rowInfo) []Finding {
	switch {
	case row.EndReason == "":
		return nil
	case row.Tip != "":
		return []Finding{{"entry.repointable", sevWarn, e.Key, "points at " + e.SessionID + ", ended by compression; continuation " + row.Tip + " (sessionctl repoint)"}}
	case row.EndReason == "agent_close" || row.EndReason == "ws_orphan_reap":
		return []Finding{{"entry.row-ended", sevInfo, e.Key, "row ended " + row.EndReason + ": recoverable, the runtime reopens it"}}
	default:
		return []Finding{{"entry.row-ended", sevWarn, e.Key, "row ended " + row.EndReason + ": the next start or message drops this mapping and starts a new session"}}
	}
}

func checkMirror(v *homeView) []Finding {
	if v.routingSrc != "gateway_routing" || v.doc == nil {
		return nil
	}
	var out []Finding
	primary := map[string]*sessionsjson.Entry{}
	for _, e := range v.routing {
		primary[e.Key] = e
	}
	for _, m := range v.doc.Entries() {
		p, ok := primary[m.Key]
		switch {
		case !ok:
			out = append(out, Finding{"routing.mirror-only", sevWarn, m.Key, "only in the sessions.json mirror: imported into gateway_routing at the next gateway start"})
		case !sameJSON(p.Raw(), m.Raw()):
			out = append(out, Finding{"routing.mirror-differs", sevInfo, m.Key, "sessions.json mirror differs from gateway_routing (the database wins)"})
		}
	}
	return out
}

func checkGateway(v *homeView, findings []Finding) []Finding {
	if !v.gateway.Running {
		return nil
	}
	for _, f := range findings {
		if f.Severity != sevInfo {
			return []Finding{{"gateway.running", sevInfo, "gateway", "a gateway is running: routing repairs are refused until it stops (state.db repairs may run)"}}
		}
	}
	return nil
}

func checkDatabase(ctx context.Context, v *homeView, deep bool) ([]Finding, error) {
	if v.db == nil {
		return []Finding{{"db.missing", sevInfo, "state.db", "no state.db in this home"}}, nil
	}
	var out []Finding
	if !v.schema.Known {
		out = append(out, Finding{"db.schema-unknown", sevError, "state.db", fmt.Sprintf("schema v%d is newer than this sessionctl (≤ v21): reads work, writes are refused; upgrade sessionctl", v.schema.Version)})
	}
	problems, err := v.db.QuickCheck(ctx, deep)
	if err != nil {
		return nil, fmt.Errorf("state.db check: %w", err)
	}
	for _, p := range problems {
		out = append(out, Finding{"db.integrity", sevError, "state.db", p + ": stop every Hermes process and run `hermes sessions repair`"})
	}
	more, err := checkRepairs(ctx, v)
	if err != nil {
		return nil, err
	}
	out = append(out, more...)
	return append(out, checkDBFiles(v)...), nil
}

func checkRepairs(ctx context.Context, v *homeView) ([]Finding, error) {
	var out []Finding
	now := v.opts.clock.Unix
	if v.schema.SessionColumns["api_call_count"] {
		orphans, err := v.db.FinalizeCandidates(ctx, now, orphanMinAgeSeconds)
		if err != nil {
			return nil, fmt.Errorf("orphan check: %w", err)
		}
		for _, o := range orphans {
			if o.LiveLock == nil {
				out = append(out, Finding{"db.orphaned-continuation", sevWarn, o.Session.ID, "open compression continuation older than 7 days with no API calls: sessionctl finalize-orphans"})
			}
		}
	}
	ghosts, err := v.db.GhostCandidates(ctx, now, ghostMinAgeSeconds)
	if err != nil {
		return nil, fmt.Errorf("ghost check: %w", err)
	}
	for _, g := range ghosts {
		out = append(out, Finding{"db.tui-ghost", sevInfo, g.Session.ID, "empty, untitled, ended TUI session older than 24 h: sessionctl prune-ghosts"})
	}
	expired, err := v.db.OpenWithExpiredLock(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("lock check: %w", err)
	}
	for _, id := range expired {
		out = append(out, Finding{"db.expired-compression-lock", sevInfo, id, "open session whose compression lock has expired (a compression died mid-way); the next compression reclaims it"})
	}
	return out, nil
}

func checkDBFiles(v *homeView) []Finding {
	var out []Finding
	if st, err := os.Stat(v.opts.home.StateDB() + "-wal"); err == nil && st.Size() > 64<<20 {
		out = append(out, Finding{"db.wal-large", sevWarn, "state.db-wal", fmt.Sprintf("WAL is %d MiB: a reader holds checkpoints back; restart long-running Hermes processes", st.Size()>>20)})
	}
	if v.schema.PageCount > 0 && float64(v.schema.FreelistCount)/float64(v.schema.PageCount) > 0.25 {
		out = append(out, Finding{"db.freelist", sevInfo, "state.db", fmt.Sprintf("%d of %d pages free: `hermes sessions optimize` with every Hermes process stopped reclaims them", v.schema.FreelistCount, v.schema.PageCount)})
	}
	if walResetBug(v.schema.SQLiteVersion) {
		out = append(out, Finding{"db.sqlite-wal-reset-bug", sevInfo, "sqlite " + v.schema.SQLiteVersion, "this SQLite has the WAL-reset bug (3.7.0–3.51.2): sessionctl keeps write transactions short"})
	}
	return out
}

// walResetBug reports SQLite versions 3.7.0 … 3.51.2 except the 3.50.7 and 3.44.6 backports.
func walResetBug(version string) bool {
	var major, minor, patch int
	if _, err := fmt.Sscanf(version, "%d.%d.%d", &major, &minor, &patch); err != nil || major != 3 {
		return false
	}
	if version == "3.50.7" || version == "3.44.6" {
		return false
	}
	n := minor*1000 + patch
	return n >= 7000 && n <= 51002
}
