package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
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
	v, err := loadViewFor(c.Context, o, true, mirrorCompare)
	if err != nil {
		return err
	}
	defer v.close()
	findings, err := runChecks(c.Context, v, c.Bool("deep"))
	if err != nil {
		return err
	}
	return reportFindings(o, v, findings, failOn, newCheckData(findings, failOn, c.Bool("deep")))
}

// checkData is data of `check --json`.
type checkData struct {
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	Info     int    `json:"info"`
	FailOn   string `json:"fail_on"`
	Deep     bool   `json:"deep"`
}

func newCheckData(findings []Finding, failOn string, deep bool) checkData {
	d := checkData{FailOn: failOn, Deep: deep}
	for _, f := range findings {
		switch f.Severity {
		case sevError:
			d.Errors++
		case sevWarn:
			d.Warnings++
		default:
			d.Info++
		}
	}
	return d
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
	mirror, err := checkMirror(ctx, v)
	if err != nil {
		return nil, err
	}
	out = append(out, mirror...)
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
		out = append(out, unreadableFinding(v))
	}
	tmps, _ := filepath.Glob(filepath.Join(v.opts.home.SessionsDir(), ".sessions_*.tmp"))
	for _, t := range tmps {
		out = append(out, Finding{"sessions-json.leftover-tmp", sevWarn, filepath.Base(t),
			"leftover temp file from an interrupted save: safe to delete once the gateway is stopped (rm " + relToHome(v.opts, t) + ")"})
	}
	return out
}

// unreadableFinding words sessions-json.unreadable after what is wrong with the file: a BOM
// (recoverable by stripping it), a top level that is not an object, invalid JSON or UTF-8, or
// a file that cannot be read.
func unreadableFinding(v *homeView) Finding {
	msg := oneLine(v.docErr)
	msg = strings.TrimPrefix(msg, v.opts.home.SessionsJSON()+": ")
	msg = strings.TrimSuffix(msg, ": "+sessionsjson.ErrCorrupt.Error())
	effect := "the runtime fails to load it, starts with no entries and overwrites it on its next save (no backup)"
	sev := sevError
	if v.routingSrc == "gateway_routing" {
		sev = sevWarn
		effect = "it is only the mirror: the runtime routes from gateway_routing, imports nothing from it and rewrites it on its next save"
	}
	fix := "with the gateway stopped, restore it from a backup"
	switch {
	case strings.Contains(msg, "UTF-8 BOM"):
		msg = "starts with a UTF-8 BOM (the runtime reads strict UTF-8)"
		fix = `with the gateway stopped, strip the 3 BOM bytes: sed -i '1s/^\xEF\xBB\xBF//' sessions/sessions.json; then sessionctl check`
	case strings.Contains(msg, "not an object"):
		msg = strings.Replace(msg, "top level is ", "top level is not a JSON object but ", 1)
		msg = strings.TrimSuffix(msg, ", not an object")
	case strings.Contains(msg, "invalid JSON") || strings.Contains(msg, "UTF-8"):
		msg = "not valid JSON: " + msg
	default:
		msg = "cannot be read: " + msg
	}
	return Finding{"sessions-json.unreadable", sev, "sessions.json", "sessions.json " + msg + ": " + effect + "; " + fix}
}

func checkEntries(v *homeView) []Finding {
	now := v.opts.clock.NaiveLocalMicros(time.Local)
	var out []Finding
	owners := map[string][]string{}
	var ids []string
	for _, e := range v.routing {
		if e.Skip != "" {
			out = append(out, skippedFinding(e))
			continue
		}
		if _, seen := owners[e.SessionID]; !seen {
			ids = append(ids, e.SessionID)
		}
		owners[e.SessionID] = append(owners[e.SessionID], e.Key)
		out = append(out, pathSafetyFindings(v, e)...)
		out = append(out, checkEntry(e, now)...)
	}
	for _, id := range ids {
		if keys := owners[id]; len(keys) > 1 {
			out = append(out, Finding{"entry.shared-session", sevWarn, id, "session shared by " + strings.Join(keys, ", ") +
				": both conversations write into one transcript; suspend all but one (sessionctl suspend KEY --apply)"})
		}
	}
	return out
}

// skippedFinding reports an entry the runtime does not load. Entries skipped for path safety
// get their own check name (entry.path-unsafe); every other reason is entry.skipped.
func skippedFinding(e *sessionsjson.Entry) Finding {
	if strings.Contains(e.Skip, " path-unsafe: ") {
		return Finding{"entry.path-unsafe", sevWarn, e.Key, "skipped by the runtime, " + e.Skip +
			": the conversation starts a new session and this entry is dropped on the next save; inspect it (sessionctl entries show KEY), then fix or remove it by hand with the gateway stopped"}
	}
	return Finding{"entry.skipped", sevWarn, e.Key, "the runtime skips this entry: " + e.Skip +
		"; inspect it (sessionctl entries show KEY), then fix or remove it by hand with the gateway stopped"}
}

// pathSafetyFindings flags path-unsafe ids and keys in generations whose loader does not check
// them (before r0703): the runtime loads the entry, builds transcript paths from the id, and a
// later runtime skips it.
func pathSafetyFindings(v *homeView, e *sessionsjson.Entry) []Finding {
	if v.rules.PathSafety != sessionsjson.PathSafetyNone {
		return nil
	}
	var out []Finding
	if p := sessionsjson.SessionIDProblem(e.SessionID); p != "" {
		out = append(out, Finding{"entry.path-unsafe", sevWarn, e.Key, "session_id " + e.SessionID + " is path-unsafe (" + p +
			"): this generation loads it and names transcript files after it; r0703+ runtimes skip the entry; suspend it (sessionctl suspend KEY --apply) and fix it by hand"})
	}
	if p := sessionsjson.SessionKeyProblem(e.Key, true); p != "" {
		out = append(out, Finding{"entry.path-unsafe", sevWarn, e.Key, "key is path-unsafe (" + p +
			"): r0703+ runtimes skip the entry; suspend it (sessionctl suspend KEY --apply) and fix it by hand"})
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
		out = append(out, Finding{"entry.suspended-and-pending", sevWarn, e.Key, "both suspended and resume_pending: suspended wins and the marker never fires; clear it (sessionctl resume clear KEY --apply)"})
	}
	if e.ResumePending && markerAge(e, now) > freshnessWindowMicros {
		out = append(out, Finding{"entry.stale-resume", sevWarn, e.Key, "resume marker older than the 1 h freshness window: never auto-resumed; clear it (sessionctl resume clear --stale --apply)"})
	}
	if e.ResumePending && (e.ResumeReason == nil || !autoResumeReasons[*e.ResumeReason]) {
		out = append(out, Finding{"entry.unknown-resume-reason", sevWarn, e.Key, "resume_reason is not one the runtime auto-resumes (restart_timeout, shutdown_timeout, restart_interrupted): clear it (sessionctl resume clear KEY --apply)"})
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
		if e != nil && e.Skip != "" {
			e = nil
		}
		switch {
		case !ok:
			out = append(out, Finding{"counts.not-integer", sevWarn, key, "count " + string(v.counts.Values[key]) + " is not an integer: the gateway's shutdown raises on it; delete the file with the gateway stopped"})
		case e == nil:
			out = append(out, Finding{"counts.orphan-key", sevInfo, key, "count for a key with no loaded routing entry: ignored by the runtime, harmless (no action needed)"})
		case n >= stuckLoopThreshold && !e.Suspended:
			out = append(out, Finding{"counts.stuck", sevWarn, key, fmt.Sprintf("active across %d restarts (at or over the threshold 3), not suspended: the next start suspends it; sessionctl suspend-stuck --apply", n)})
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
			out = append(out, Finding{"entry.row-missing", sevWarn, e.Key, "session " + e.SessionID + " has no state.db row (the row insert failed or the DB was replaced): the transcript is not searchable; sessionctl entries show KEY"})
			continue
		}
		out = append(out, rowStateFinding(v, e, row)...)
		if e.Platform != "" && row.Session.Source != e.Platform {
			out = append(out, Finding{"entry.source-mismatch", sevWarn, e.Key, "row source " + row.Session.Source + " differs from the entry's platform " + e.Platform + ": the entry points at another platform's session; sessionctl sessions show " + e.SessionID})
		}
		if row.Session.SessionKey != nil && *row.Session.SessionKey != "" && *row.Session.SessionKey != e.Key {
			out = append(out, Finding{"entry.row-key-mismatch", sevWarn, e.Key, "row " + e.SessionID + " belongs to key " + *row.Session.SessionKey + ": two conversations share one session; suspend one (sessionctl suspend KEY --apply)"})
		}
	}
	return out
}

func rowStateFinding(v *homeView, e *sessionsjson.Entry, row rowInfo) []Finding {
	prunes := startRulesFor(v.gen).pruneEndedAtLoad
	switch {
	case row.EndReason == "":
		return nil
	case row.Tip != "":
		return []Finding{{"entry.repointable", sevWarn, e.Key, "points at " + e.SessionID + ", ended by compression; its continuation is " + row.Tip + ": sessionctl repoint --apply"}}
	case row.EndReason == "agent_close" || row.EndReason == "ws_orphan_reap":
		return []Finding{{"entry.row-ended", sevInfo, e.Key, "row ended " + row.EndReason + ": recoverable, the runtime reopens it (no action needed)"}}
	case prunes:
		return []Finding{{"entry.row-ended", sevInfo, e.Key, "row ended " + row.EndReason + " with no continuation: the next start drops this mapping and the next message starts a new session (no action needed; sessionctl entries show KEY)"}}
	case row.EndReason == "compression" && statedb.TipRuleForSchema(v.schema.Version) == statedb.TipNone:
		return []Finding{{"entry.row-ended", sevWarn, e.Key, "row ended compression (stale mapping): generation " + string(v.gen) + " keeps using it and continues on the ended row; it has no compression-tip rule, so sessionctl repoint does not apply: upgrade the gateway"}}
	default:
		return []Finding{{"entry.row-ended", sevWarn, e.Key, "row ended " + row.EndReason + " (stale mapping): generation " + string(v.gen) + " keeps using it and continues on the ended row; no continuation to repoint to: sessionctl entries show KEY"}}
	}
}

func checkGateway(v *homeView, findings []Finding) []Finding {
	if !v.gateway.Running {
		return nil
	}
	for _, f := range findings {
		if f.Severity != sevInfo {
			return []Finding{{"gateway.running", sevInfo, "gateway", "a gateway is running while repairs are pending: routing repairs are refused until it stops (sessionctl maintain --apply runs the state.db repairs now and skips the routing ones)"}}
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
		what := "newer than this sessionctl knows (≤ v21)"
		if !v.schema.Newer {
			what = "not a schema version any Hermes runtime wrote"
		}
		out = append(out, Finding{"db.schema-unknown", sevError, "state.db", fmt.Sprintf("schema v%d is %s: reads work, every write is refused (exit 4); upgrade sessionctl", v.schema.Version, what)})
	}
	problems, err := v.db.QuickCheck(ctx, deep)
	if err != nil {
		return nil, fmt.Errorf("state.db check: %w", err)
	}
	for _, p := range problems {
		out = append(out, Finding{"db.integrity", sevError, "state.db", p + ": stop every Hermes process, back up state.db and run `hermes sessions repair`; sessionctl check --deep for the full report"})
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
				out = append(out, Finding{"db.orphaned-continuation", sevWarn, o.Session.ID, "open compression continuation older than 7 days with no API calls (never used): sessionctl finalize-orphans --apply"})
			}
		}
	}
	if dbRepairAvailable(v, "prune-ghosts") != nil {
		// r0418: the runtime has neither repair; their rules do not apply to this home.
		return out, nil
	}
	ghosts, err := v.db.GhostCandidates(ctx, now, ghostMinAgeSeconds)
	if err != nil {
		return nil, fmt.Errorf("ghost check: %w", err)
	}
	for _, g := range ghosts {
		out = append(out, Finding{"db.tui-ghost", sevInfo, g.Session.ID, "empty, untitled, ended TUI session older than 24 h: sessionctl prune-ghosts --apply"})
	}
	expired, err := v.db.OpenWithExpiredLock(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("lock check: %w", err)
	}
	for _, id := range expired {
		out = append(out, Finding{"db.expired-compression-lock", sevInfo, id, "open session whose compression lock has expired (a compression died mid-way): the next compression reclaims it (no action needed; sessionctl sessions show ID)"})
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
		out = append(out, Finding{"db.sqlite-wal-reset-bug", sevInfo, "sqlite " + v.schema.SQLiteVersion, "the SQLite linked into sessionctl has the WAL-reset bug (3.7.0–3.51.2): its writes stay short, but prefer a sessionctl built with SQLite ≥ 3.51.3"})
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
