package check

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// r0817Findings reports what the r0817 runtime's next open and start will do that an operator
// should know about (runtime-v26.md §3.8): legacy primary keys and FTS state healed on open,
// running-turn markers, entries the start recovers elsewhere than repoint would, and a reset
// policy the preview does not model.
func r0817Findings(ctx context.Context, h *home.Home, rows map[string]home.Row) ([]Finding, error) {
	if h.DB == nil || !h.Rules.HealsOnOpen {
		return nil, nil
	}
	out, err := openHeals(ctx, h)
	if err != nil {
		return nil, err
	}
	for _, e := range h.Loaded() {
		if started, ok := e.TurnStartedAt(); ok {
			out = append(out, Finding{EntryTurnMarker, Info, e.Key, fmt.Sprintf("a turn is marked running since %s (active_turn_token): normal while the gateway runs; after a crash the next start marks the entry resume_pending (restart_interrupted) when the turn started within the hour, and a clean start clears the marker (no action needed)", started.Raw)})
		}
	}
	rec, err := h.Recoveries(ctx, rows)
	if err != nil {
		return nil, err
	}
	for _, e := range h.Loaded() {
		r, ok := rec[e.Key]
		key, row := e.Key, rows[e.SessionID]
		if ok && r.Found && r.Target.ID != e.SessionID && row.Tip != "" && row.Tip != r.Target.ID {
			out = append(out, Finding{EntryStartTarget, Warn, key, fmt.Sprintf("points at %s, ended by compression: sessionctl repoint --apply moves it to the compression tip %s (the runtime's store heal), but the next gateway start rebuilds it on %s, the latest row of its key (find_latest_gateway_session_for_peer); repoint before starting the gateway if %s is the conversation to keep", e.SessionID, row.Tip, r.Target.ID, row.Tip)})
		}
	}
	return append(out, resetPolicy(h)...), nil
}

// openHeals reports what the runtime's next writable open changes in the file.
func openHeals(ctx context.Context, h *home.Home) ([]Finding, error) {
	var out []Finding
	legacy, err := h.DB.LegacyPrimaryKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("primary key check: %w", err)
	}
	for _, t := range legacy {
		out = append(out, Finding{DBLegacyPrimaryKey, Info, t, "primary key of an older runtime: the gateway's next open rebuilds the table with r0817's key (no action needed; start the gateway once)"})
	}
	fts, err := h.DB.FTS(ctx)
	if err != nil {
		return nil, fmt.Errorf("FTS state: %w", err)
	}
	if fts.OptimizeAvailable {
		out = append(out, Finding{DBFTSOptimizable, Info, "state.db", "legacy inline full-text index (fts_optimize_available = '1'): `hermes sessions optimize-storage` converts it to the smaller external-content layout (optional)"})
	}
	for _, key := range fts.Stale {
		out = append(out, Finding{DBFTSStale, Warn, key, "the full-text triggers are detached and search misses newer messages until the runtime's next open rebuilds the index; sessionctl never touches FTS tables (start the gateway once)"})
	}
	switch {
	case fts.Trash:
		out = append(out, Finding{DBFTSRebuildInterrupted, Warn, "state.db", "an optimize-storage run stopped part-way (fts_v22_trash_* tables): run `hermes sessions optimize-storage` again with the gateway stopped"})
	case fts.RebuildInterrupted:
		out = append(out, Finding{DBFTSRebuildInterrupted, Warn, "state.db", "a full-text rebuild stopped part-way (fts_rebuild_high_water set: search misses what it has not refilled): `sessionctl fts rebuild --apply` resumes it from its recorded progress, or run `hermes sessions optimize-storage` again with the gateway stopped"})
	}
	return out, nil
}

// maxConfigBytes bounds what resetPolicy reads of config.yaml or gateway.json.
const maxConfigBytes = 1 << 20

// The reset-policy keys: config.yaml's top-level session_reset: (a comment or another key
// that mentions a reset is not one), a session_reset or reset_policy member of gateway.json.
var (
	resetKeyYAML = regexp.MustCompile(`(?m)^session_reset\s*:`)
	resetKeyJSON = regexp.MustCompile(`"(session_reset|reset_policy)"\s*:`)
)

// resetPolicy says that the next-start preview assumes reset mode none when the home may
// configure another (config.yaml session_reset, or the legacy gateway.json overrides): under
// idle or daily policies r0817 ends recovered rows and expires markers by rules sessionctl
// does not model (runtime-v26.md §2.3, §7 Q5).
func resetPolicy(h *home.Home) []Finding {
	for _, f := range []struct {
		name string
		key  *regexp.Regexp
	}{{"config.yaml", resetKeyYAML}, {"gateway.json", resetKeyJSON}} {
		data, err := sessionsjson.ReadRegularFile(filepath.Join(h.Opts.Home.Dir, f.name), maxConfigBytes)
		if err == nil && f.key.Match(data) {
			return []Finding{{PreviewResetPolicy, Info, f.name, "may configure a session reset policy: the next-start preview assumes mode none (the default); under an idle or daily policy the start may end recovered rows (end_reason idle/daily) instead of rebuilding their entries, and expire stale markers"}}
		}
	}
	return nil
}
