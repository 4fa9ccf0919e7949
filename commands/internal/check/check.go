package check

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Run runs every check family over the home (opened for home.Inspect or home.Survey).
func Run(ctx context.Context, h *home.Home, deep bool) ([]Finding, error) {
	var out []Finding
	out = append(out, Scope(h)...)
	out = append(out, sessionsFile(h)...)
	out = append(out, entries(h)...)
	out = append(out, countsFile(h)...)
	rows, err := h.Rows(ctx)
	if err != nil {
		return nil, err
	}
	out = append(out, routingRows(h, rows)...)
	mirror, err := mirrorFindings(ctx, h)
	if err != nil {
		return nil, err
	}
	out = append(out, mirror...)
	h.Opts.Report("check", 1, 2)
	dbFindings, err := database(ctx, h, deep)
	h.Opts.Report("check", 2, 2)
	if err != nil {
		return nil, err
	}
	out = append(out, dbFindings...)
	if verified(h) { // on a newer generation they would say what its runtime's open and start do
		more, err := r0817Findings(ctx, h, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	out = append(out, newer(h)...)
	out = append(out, deletedHolders(h)...)
	out = append(out, orphanRowStores(h)...)
	out = append(out, orphanStashes(h)...)
	out = append(out, interrupted(h)...)
	out = append(out, gateway(h, out)...)
	return out, nil
}

// Scope says clearly when the gateway_routing rows belong to another home, in scope order.
func Scope(h *home.Home) []Finding {
	scopes := make([]string, 0, len(h.Routing.Foreign))
	for scope := range h.Routing.Foreign {
		scopes = append(scopes, scope)
	}
	sort.Strings(scopes)
	var out []Finding
	for _, scope := range scopes {
		rows := fmt.Sprintf("%d gateway_routing row(s) belong to scope %s, not this home's %s (home copied or restored elsewhere?); ",
			h.Routing.Foreign[scope], scope, h.Routing.Scope)
		out = append(out, Finding{RoutingForeignScope, Error, scope, rows + say(h,
			"the runtime ignores them here: move them to this home with sessionctl relocate --apply (--from "+scope+" when there are several), or run the gateway at the original path",
			"sessionctl reads none of them here, and cannot move them on a generation newer than it knows (every write is refused): use the home at the original path, or move them with a sessionctl that knows this generation")})
	}
	return out
}

func sessionsFile(h *home.Home) []Finding {
	var out []Finding
	if h.Mirror.Err != nil {
		out = append(out, unreadable(h))
	}
	tmps, _ := filepath.Glob(filepath.Join(h.Opts.Home.SessionsDir(), ".sessions_*.tmp"))
	for _, t := range tmps {
		out = append(out, Finding{SessionsJSONLeftoverTmp, Warn, filepath.Base(t),
			"leftover temp file from an interrupted save: safe to delete once the gateway is stopped (rm " + h.Opts.Rel(t) + ")"})
	}
	return out
}

// unreadable words sessions-json.unreadable after what is wrong with the file
// (sessionsjson.FormatError): a BOM (recoverable by stripping it), a top level that is not an
// object, invalid JSON or UTF-8, or a file that cannot be read.
func unreadable(h *home.Home) Finding {
	effect := "the runtime fails to load it, starts with no entries and overwrites it on its next save (no backup)"
	sev := Error
	if h.Routing.Source == home.SourceGatewayRouting {
		sev = Warn
		effect = "it is only the mirror: the runtime routes from gateway_routing, imports nothing from it and rewrites it on its next save"
	}
	if !verified(h) {
		effect = "what a runtime newer than this sessionctl does with it is not known"
	}
	fix := "with the gateway stopped, restore it from a backup"
	var msg string
	var fe *sessionsjson.FormatError
	switch {
	case !errors.As(h.Mirror.Err, &fe):
		msg = strings.TrimPrefix(oneLine(h.Mirror.Err), h.Opts.Home.SessionsJSON()+": ")
		msg = "cannot be read: " + strings.TrimSuffix(msg, ": "+sessionsjson.ErrCorrupt.Error())
	case fe.Problem == sessionsjson.ProblemBOM:
		msg = "starts with a UTF-8 BOM (the runtime reads strict UTF-8)"
		fix = `with the gateway stopped, strip the 3 BOM bytes: sed -i '1s/^\xEF\xBB\xBF//' sessions/sessions.json; then sessionctl check`
	case fe.Problem == sessionsjson.ProblemNotObject:
		msg = "top level is not a JSON object but " + fe.Found
	default:
		msg = "not valid JSON: " + oneLine(errors.New(fe.Detail))
	}
	return Finding{SessionsJSONUnreadable, sev, "sessions.json", "sessions.json " + msg + ": " + effect + "; " + fix}
}

// oneLine folds an error's text onto one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

func entries(h *home.Home) []Finding {
	now := h.Opts.Clock.NaiveLocalMicros(time.Local)
	var out []Finding
	owners := map[string][]string{}
	var ids []string
	for _, e := range h.Routing.Entries {
		if e.Skip != "" {
			out = append(out, skipped(h, e))
			continue
		}
		if _, seen := owners[e.SessionID]; !seen {
			ids = append(ids, e.SessionID)
		}
		owners[e.SessionID] = append(owners[e.SessionID], e.Key)
		out = append(out, pathSafety(h, e)...)
		out = append(out, entry(h, e, now)...)
	}
	for _, id := range ids {
		if keys := owners[id]; len(keys) > 1 {
			out = append(out, Finding{EntrySharedSession, Warn, id, "session shared by " + strings.Join(keys, ", ") +
				say(h, ": both conversations write into one transcript; suspend all but one (sessionctl suspend KEY --apply)", "")})
		}
	}
	return out
}

// skipped reports an entry the runtime does not load. Entries skipped for path safety get
// their own check id (entry.path-unsafe); every other reason is entry.skipped. On a newer
// generation no skip is claimed: sessionctl cannot read the entry (entry.unreadable).
func skipped(h *home.Home, e *sessionsjson.Entry) Finding {
	if !verified(h) {
		return Finding{EntryUnreadable, Warn, e.Key, "this sessionctl cannot read this entry by the rules it knows (" + e.Skip +
			"); whether a newer runtime loads it is not known: inspect it (sessionctl entries show KEY)"}
	}
	if strings.Contains(e.Skip, " path-unsafe: ") {
		return Finding{EntryPathUnsafe, Warn, e.Key, "skipped by the runtime, " + e.Skip +
			": the conversation starts a new session and this entry is dropped on the next save; inspect it (sessionctl entries show KEY), then, with the gateway stopped, fix it (sessionctl entries set KEY session_id=… --apply) or remove it (sessionctl entries rm KEY --apply)"}
	}
	return Finding{EntrySkipped, Warn, e.Key, "the runtime skips this entry: " + e.Skip +
		"; inspect it (sessionctl entries show KEY), then, with the gateway stopped, fix it (sessionctl entries set KEY FIELD=VALUE --apply) or remove it (sessionctl entries rm KEY --apply)"}
}

// pathSafety flags path-unsafe ids and keys in generations whose loader does not check them
// (before r0703): the runtime loads the entry, builds transcript paths from the id, and a
// later runtime skips it.
func pathSafety(h *home.Home, e *sessionsjson.Entry) []Finding {
	if h.Rules.PathSafety != sessionsjson.PathSafetyNone {
		return nil
	}
	var out []Finding
	if p := sessionsjson.SessionIDProblem(e.SessionID); p != "" {
		out = append(out, Finding{EntryPathUnsafe, Warn, e.Key, "session_id " + e.SessionID + " is path-unsafe (" + p +
			"): this generation loads it and names transcript files after it; r0703+ runtimes skip the entry; suspend it (sessionctl suspend KEY --apply) or remove it (sessionctl entries rm KEY --apply)"})
	}
	if p := sessionsjson.SessionKeyProblem(e.Key, true); p != "" {
		out = append(out, Finding{EntryPathUnsafe, Warn, e.Key, "key is path-unsafe (" + p +
			"): r0703+ runtimes skip the entry; suspend it (sessionctl suspend KEY --apply) or remove it (sessionctl entries rm KEY --apply)"})
	}
	return out
}

func entry(h *home.Home, e *sessionsjson.Entry, now int64) []Finding {
	out := timestamps(h, e, now)
	if e.Key != e.SessionKey {
		out = append(out, Finding{EntryKeyMismatch, Warn, e.Key, "session_key field is " + e.SessionKey + say(h, ": the runtime indexes by the dict key; sessionctl entries set KEY session_key=KEY --apply makes them agree", ", not the key")})
	}
	if e.Suspended && e.ResumePending {
		out = append(out, Finding{EntrySuspendedPending, Warn, e.Key, "both suspended and resume_pending" + say(h, ": suspended wins and the marker never fires; clear it (sessionctl resume clear KEY --apply)", "")})
	}
	if e.StaleMarker(now) {
		out = append(out, Finding{EntryStaleResume, Warn, e.Key, say(h, "resume marker older than the 1 h freshness window: never auto-resumed; clear it (sessionctl resume clear --stale --apply)",
			"resume marker older than 1 h (the freshness window of the generations this sessionctl knows)")})
	}
	if e.ResumePending && (e.ResumeReason == nil || !sessionsjson.IsAutoResumeReason(*e.ResumeReason)) {
		out = append(out, Finding{EntryUnknownReason, Warn, e.Key, say(h, "resume_reason is not one the runtime auto-resumes (restart_timeout, shutdown_timeout, restart_interrupted): clear it (sessionctl resume clear KEY --apply)",
			"resume_reason is not one the generations this sessionctl knows auto-resume (restart_timeout, shutdown_timeout, restart_interrupted)")})
	}
	if !e.PlatformKnown && e.Platform != "" {
		out = append(out, Finding{EntryUnknownPlatform, Info, e.Key, say(h, "platform "+e.Platform+" is neither built in nor a bundled plugin platform of this generation: the runtime loads it as null unless a plugin the user installed provides it",
			"platform "+e.Platform+" is not one this sessionctl knows (built in or bundled in the generations it knows); a newer runtime may know it")})
	}
	if len(e.UnknownFields) > 0 {
		out = append(out, Finding{EntryUnknownFields, Info, e.Key, say(h, "fields the runtime drops on its next save: ", "fields this sessionctl does not know: ") + strings.Join(e.UnknownFields, ", ")})
	}
	return out
}

func timestamps(h *home.Home, e *sessionsjson.Entry, now int64) []Finding {
	var out []Finding
	for _, ts := range []struct {
		name string
		t    *sessionsjson.Timestamp
	}{{"created_at", &e.CreatedAt}, {"updated_at", &e.UpdatedAt}, {"last_resume_marked_at", e.LastResumeMarkedAt}} {
		if ts.t == nil {
			continue
		}
		if ts.t.Aware {
			out = append(out, Finding{EntryAwareTimestamp, Error, e.Key, ts.name + " " + ts.t.Raw + say(h, " has a time zone: the gateway crashes comparing it; rewrite it as naive local time (sessionctl entries set KEY "+ts.name+"=… --apply)",
				" has a time zone (the gateways this sessionctl knows crash comparing it)")})
		} else if ts.t.WallMicros() > now {
			out = append(out, Finding{EntryFutureTimestamp, Warn, e.Key, ts.name + " " + ts.t.Raw + " is in the future: " + say(h, "idle reset is delayed; ", "") + "check the gateway's clock and TZ"})
		}
	}
	return out
}

func countsFile(h *home.Home) []Finding {
	c := h.Counts
	if c.Err != nil {
		if sessionsjson.ReadNeverEnds(c.Err) {
			return []Finding{{CountsUnparseable, Error, ".restart_failure_counts", oneLine(c.Err) + ": the gateway's start-up reads it and never finishes; remove it with the gateway stopped"}}
		}
		return []Finding{{CountsUnparseable, Warn, ".restart_failure_counts", oneLine(c.Err) + say(h, ": the runtime ignores and keeps it; delete it with the gateway stopped", "")}}
	}
	if c.Parsed == nil {
		return nil
	}
	var out []Finding
	_, raises := c.Parsed.ComparisonRaises(sessionsjson.StuckLoopThreshold)
	for _, key := range c.Parsed.Keys {
		raw := c.Parsed.Values[key]
		cmp := sessionsjson.CompareCount(raw, sessionsjson.StuckLoopThreshold)
		e := h.Entry(key)
		if e != nil && e.Skip != "" {
			e = nil
		}
		switch {
		case cmp == sessionsjson.CountRaises:
			out = append(out, Finding{CountsNotInteger, Warn, key, "count " + string(raw) + " is not a number" + say(h, ": the runtime's stuck-loop check raises on it, so the next start suspends no session and keeps the file, and the gateway's shutdown raises on it; delete the file with the gateway stopped", "")})
		case e == nil:
			out = append(out, Finding{CountsOrphanKey, Info, key, "count for a key with no loaded routing entry" + say(h, ": ignored by the runtime, harmless (no action needed)", "")})
		case cmp == sessionsjson.CountReaches && !e.Suspended && !raises:
			out = append(out, Finding{CountsStuck, Warn, key, fmt.Sprintf("active across %s restarts (at or over the threshold %d", raw, sessionsjson.StuckLoopThreshold) +
				say(h, "), not suspended: the next start suspends it; sessionctl suspend-stuck --apply", " of the generations this sessionctl knows), not suspended")})
		}
	}
	return out
}

func routingRows(h *home.Home, rows map[string]home.Row) []Finding {
	if h.DB == nil {
		return nil
	}
	var out []Finding
	for _, e := range h.Loaded() {
		row, ok := rows[e.SessionID]
		if !ok {
			out = append(out, Finding{EntryRowMissing, Warn, e.Key, "session " + e.SessionID + " has no state.db row (the row insert failed or the DB was replaced): " + say(h, "the transcript is not searchable; ", "") + "sessionctl entries show KEY"})
			continue
		}
		out = append(out, rowState(h, e, row)...)
		if e.Platform != "" && row.Session.Source != e.Platform {
			out = append(out, Finding{EntrySourceMismatch, Warn, e.Key, "row source " + row.Session.Source + " differs from the entry's platform " + e.Platform + ": the entry points at another platform's session; sessionctl sessions show " + e.SessionID})
		}
		if row.Session.SessionKey != nil && *row.Session.SessionKey != "" && *row.Session.SessionKey != e.Key {
			out = append(out, Finding{EntryRowKeyMismatch, Warn, e.Key, "row " + e.SessionID + " belongs to key " + *row.Session.SessionKey + say(h, ": two conversations share one session; suspend one (sessionctl suspend KEY --apply)", "")})
		}
	}
	return out
}

func rowState(h *home.Home, e *sessionsjson.Entry, row home.Row) []Finding {
	switch {
	case row.EndReason == "":
		return nil
	case !verified(h) && row.Tip != "":
		return []Finding{{EntryRepointable, Warn, e.Key, "points at " + e.SessionID + ", ended by compression; its continuation is " + row.Tip}}
	case !verified(h):
		return []Finding{{EntryRowEnded, Info, e.Key, "row ended " + row.EndReason + ": what a newer runtime's next start does with this entry is not known (sessionctl entries show KEY)"}}
	case row.Tip != "":
		return []Finding{{EntryRepointable, Warn, e.Key, "points at " + e.SessionID + ", ended by compression; its continuation is " + row.Tip + ": sessionctl repoint --apply"}}
	case statedb.Recoverable(row.EndReason):
		return []Finding{{EntryRowEnded, Info, e.Key, "row ended " + row.EndReason + ": recoverable, the runtime reopens it (no action needed)"}}
	case h.Rules.PruneEndedAtLoad:
		return []Finding{{EntryRowEnded, Info, e.Key, "row ended " + row.EndReason + " with no continuation: the next start drops this mapping and the next message starts a new session (no action needed; sessionctl entries show KEY)"}}
	case row.EndReason == statedb.EndReasonCompression && h.TipRule() == statedb.TipNone:
		return []Finding{{EntryRowEnded, Warn, e.Key, "row ended compression (stale mapping): generation " + string(h.Gen) + " keeps using it and continues on the ended row; it has no compression-tip rule, so sessionctl repoint does not apply: upgrade the gateway"}}
	default:
		return []Finding{{EntryRowEnded, Warn, e.Key, "row ended " + row.EndReason + " (stale mapping): generation " + string(h.Gen) + " keeps using it and continues on the ended row; no continuation to repoint to: sessionctl entries show KEY"}}
	}
}

// mirrorFindings reports how the sessions.json mirror of a db-primary home differs from
// gateway_routing: from the comparison made while opening the home when there was one, else
// by comparing now.
func mirrorFindings(ctx context.Context, h *home.Home) ([]Finding, error) {
	diffs := h.Mirror.Diffs
	switch {
	case h.Routing.Source != home.SourceGatewayRouting:
		return nil, nil
	case h.Mirror.Compared:
	case h.Mirror.Doc == nil:
		return nil, nil
	default:
		var err error
		if diffs, err = h.CompareMirror(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]Finding, 0, len(diffs))
	for _, d := range diffs {
		out = append(out, mirrorFinding(h, d))
	}
	return out, nil
}

func mirrorFinding(h *home.Home, d home.MirrorDiff) Finding {
	if !verified(h) {
		return newerMirrorFinding(d)
	}
	switch d.Kind {
	case home.MirrorMissing:
		return Finding{RoutingMirrorMissing, Info, d.Key, "in gateway_routing but not in the sessions.json mirror: tools reading sessions.json miss it; the gateway's next save rewrites the mirror (no action needed)"}
	case home.MirrorOnly:
		return Finding{RoutingMirrorOnly, Warn, d.Key, "only in the sessions.json mirror, not in gateway_routing: the next gateway start imports it, and sessionctl lists it as legacy and edits it there (check it is wanted: sessionctl entries show KEY)"}
	default:
		return Finding{RoutingMirrorDiffers, Info, d.Key, "sessions.json mirror differs from gateway_routing: the database wins and the gateway's next save rewrites the mirror (no action needed)"}
	}
}

func gateway(h *home.Home, findings []Finding) []Finding {
	if !h.Gateway.Running || !verified(h) { // newer: every write is refused, running gateway or not
		return nil
	}
	for _, f := range findings {
		if f.Severity != Info {
			return []Finding{{GatewayRunning, Info, "gateway", "a gateway is running while repairs are pending: routing repairs are refused until it stops (sessionctl maintain --apply runs the state.db repairs now and skips the routing ones)"}}
		}
	}
	return nil
}
