package check

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

func database(ctx context.Context, h *home.Home, deep bool) ([]Finding, error) {
	if errors.Is(h.DBErr, statedb.ErrInterrupted) { // a hot journal, not damage: let SQLite roll it back
		return []Finding{{DBInterrupted, Error, "state.db", oneLine(h.DBErr) + "; the next sessionctl --apply rolls it back too; do not delete state.db-journal: it holds the bytes that put state.db back; the checks above ran without it"}}, nil
	}
	if h.DBErr != nil {
		return []Finding{{DBCorrupt, Error, "state.db", oneLine(h.DBErr) + ": every command that reads it fails; stop every Hermes process, back up state.db and restore it from a backup (or run `hermes sessions repair`); the checks above ran without it"}}, nil
	}
	if h.DB == nil {
		return []Finding{{DBMissing, Info, "state.db", "no state.db in this home"}}, nil
	}
	var out []Finding
	if h.Schema.Intermediate {
		out = append(out, Finding{SchemaIntermediate, Warn, "state.db", fmt.Sprintf("schema v%d was written by a short-lived build between r0715 (v21) and r0817 (v26), whose routing and prune rules changed inside that range and no fixture settles: reads work, every write is refused (exit 4); start a current gateway once (it migrates the file to v26), then run sessionctl again", h.Schema.Version)})
	} else if !h.Schema.Known {
		what := fmt.Sprintf("newer than this sessionctl knows (≤ v%d)", sessionsjson.NewestKnownSchema())
		if !h.Schema.Newer {
			what = "not a schema version any Hermes runtime wrote"
		}
		out = append(out, Finding{DBSchemaUnknown, Error, "state.db", fmt.Sprintf("schema v%d is %s: reads work, every write is refused (exit 4); upgrade sessionctl", h.Schema.Version, what)})
	}
	if h.Schema.VersionMissing {
		out = append(out, Finding{DBSchemaVersionMissing, Info, "state.db", fmt.Sprintf("schema_version has no row: the tables and columns are generation %s's, whose runtime inserts v%d when it next opens the file and carries on; sessionctl reads and repairs by that generation's rules and never writes the row (no action needed)", h.Gen, h.Schema.Version)})
	}
	problems, err := h.DB.QuickCheck(ctx, deep)
	if err != nil {
		return nil, fmt.Errorf("state.db check: %w", err)
	}
	for _, p := range problems {
		out = append(out, Finding{DBIntegrity, Error, "state.db", p + ": stop every Hermes process, back up state.db and run `hermes sessions repair`; sessionctl check --deep for the full report"})
	}
	more, err := repairs(ctx, h)
	if err != nil {
		return nil, err
	}
	out = append(out, more...)
	if more, err = badModelConfigs(ctx, h); err != nil {
		return nil, err
	}
	out = append(out, more...)
	if more, err = oddValues(ctx, h); err != nil {
		return nil, err
	}
	out = append(out, more...)
	if more, err = storage(ctx, h, deep); err != nil {
		return nil, err
	}
	return append(out, more...), nil
}

func repairs(ctx context.Context, h *home.Home) ([]Finding, error) {
	var out []Finding
	now := h.Opts.Clock.Unix
	if h.Schema.SessionColumns["api_call_count"] {
		orphans, err := h.DB.FinalizeCandidates(ctx, now, statedb.DefaultOrphanMinAge)
		if err != nil {
			return nil, fmt.Errorf("orphan check: %w", err)
		}
		for _, o := range orphans {
			if o.LiveLock == nil && o.LiveLease == nil {
				out = append(out, Finding{DBOrphanedContinuation, Warn, o.Session.ID, "open compression continuation older than 7 days with no API calls (never used)" + say(h, ": sessionctl finalize-orphans --apply", "")})
			}
		}
	}
	if !h.Rules.DBRepairs {
		// r0418: the runtime has neither repair; their rules do not apply to this home.
		return out, nil
	}
	ghosts, err := h.DB.GhostCandidates(ctx, now, statedb.DefaultGhostMinAge)
	if err != nil {
		return nil, fmt.Errorf("ghost check: %w", err)
	}
	for _, g := range ghosts {
		if g.Leased != nil {
			continue // a turn is running on its conversation: prune-ghosts skips it
		}
		out = append(out, Finding{DBTUIGhost, Info, g.Session.ID, "empty, untitled, ended TUI session older than 24 h" + say(h, ": sessionctl prune-ghosts --apply", "")})
	}
	expired, err := h.DB.OpenWithExpiredLock(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("lock check: %w", err)
	}
	for _, id := range expired {
		out = append(out, Finding{DBExpiredLock, Info, id, "open session whose compression lock has expired (a compression died mid-way): " +
			say(h, "the next compression reclaims it (no action needed; sessionctl sessions show ID)", "sessionctl sessions show ID")})
	}
	return out, nil
}

// badModelConfigs reports the rows whose model_config the v17 compression-tip lookup raises
// on. Under the v17 rule (r0703+) a row whose parent ended by compression makes every lookup
// through that parent raise: the gateway catches it and keeps the entry where it is
// (gateway/session.py _compression_tip_for_session_id, 52d0d671e, c2a3b9ce5), and so does
// sessionctl. Older rules never read model_config (hermes_state.py get_compression_tip,
// 3b750715a, 3914089d5).
func badModelConfigs(ctx context.Context, h *home.Home) ([]Finding, error) {
	bad, err := h.DB.BadModelConfigs(ctx)
	if err != nil {
		return nil, fmt.Errorf("model_config check: %w", err)
	}
	var out []Finding
	for _, b := range bad {
		what := "model_config " + b.Value.Literal() + " is not JSON: "
		fix := "; clear it with the gateway stopped (UPDATE sessions SET model_config = NULL WHERE id = …) if the continuation should be followed"
		switch {
		case !verified(h):
			out = append(out, Finding{DBBadModelConfig, Info, b.ID, what + "the compression-tip lookup of the generations this sessionctl knows raises on it once its parent has ended by compression"})
		case h.TipRule() != statedb.TipV17 && h.TipRule() != statedb.TipV24:
			out = append(out, Finding{DBBadModelConfig, Info, b.ID, what + "generation " + string(h.Gen) + "'s runtime does not read it (the compression-tip lookup of r0703 and later raises on it when its parent ended by compression)"})
		case b.ParentCompression:
			out = append(out, Finding{DBBadModelConfig, Warn, b.ID, what + "the runtime's compression-tip lookup through its parent " + *b.ParentID + " (ended by compression) raises on it, so the gateway leaves an entry on that chain where it is, as if there were no continuation; sessionctl does the same (repoint skips it)" + fix})
		default:
			out = append(out, Finding{DBBadModelConfig, Info, b.ID, what + "the runtime's compression-tip lookup raises on it once its parent has ended by compression; no effect today"})
		}
	}
	return out, nil
}

// oddEffects says what the runtime's SQL makes of a value that is not a number where it
// writes one: SQLite orders TEXT and BLOBs after every number, so `started_at < cutoff` and
// `expires_at < now` are false and `api_call_count = 0` never holds (hermes_state.py
// prune_empty_ghost_sessions, finalize_orphaned_compression_sessions,
// try_acquire_compression_lock, c2a3b9ce5), and sessionctl compares them the same way.
var oddEffects = map[string]string{
	"sessions.started_at":             "the runtime's SQL takes it as later than any time: no age cutoff (the ghost prune, the orphan finalize) ever takes this row, and lists sort it first",
	"sessions.ended_at":               "the runtime's SQL takes the row as ended (ended_at IS NOT NULL) at a time later than any other: an empty, untitled TUI row with it is pruned as a ghost",
	"sessions.api_call_count":         "it never equals 0, so the runtime's orphan finalize never ends this row",
	"compression_locks.expires_at":    "the runtime's SQL takes it as later than any time, so the lock never expires: the runtime never reclaims it (no other holder compresses the session) and finalize-orphans skips the session",
	"compression_locks.acquired_at":   "the runtime never compares it (no effect)",
	"session_turn_leases.expires_at":  "the runtime's SQL takes it as later than any time, so the turn lease never expires: finalize-orphans and prune-ghosts skip the sessions it keys, and the other sessions are repaired as usual",
	"session_turn_leases.acquired_at": "the runtime never compares it (no effect)",
	"sessions.last_activity_at":       "the gateway's recovery lookup orders and fences by it as SQLite compares it (later than any time), and the entry it rebuilds on this row is dated by started_at instead (float() raises on it)",
}

// oddValues reports each value of a class the runtime never writes in its column (TEXT or a
// BLOB for a time or a count, a fraction for a count): every command reads it, and its
// effect is the one the runtime's SQL gives it.
func oddValues(ctx context.Context, h *home.Home) ([]Finding, error) {
	odd, err := h.DB.OddRows(ctx)
	if err != nil {
		return nil, fmt.Errorf("value check: %w", err)
	}
	out := make([]Finding, 0, len(odd))
	for _, o := range odd {
		what := o.Table + "." + o.Column
		sev, fix := Warn, "; set it by hand with the gateway stopped (UPDATE "+o.Table+" SET "+o.Column+" = … WHERE "+o.Where+")"
		if noEffect[what] {
			sev, fix = Info, ""
		}
		writes, effect := oddWrites(o.Column), oddEffects[what]
		if effect == "" {
			effect = "its SQL compares the value as SQLite orders it (TEXT and BLOBs after every number), and sessionctl reads and compares it the same way"
		}
		effect = say(h, "the runtime writes "+writes+": "+effect, "the runtimes this sessionctl knows write "+writes)
		out = append(out, Finding{DBOddValue, sev, o.ID, fmt.Sprintf("%s holds %s (%s) in the row %s, where %s%s",
			what, o.Value.Literal(), o.Value.Type, o.Where, effect, fix)})
	}
	return out, nil
}

// noEffect are the columns whose odd value changes nothing the runtime or sessionctl does.
var noEffect = map[string]bool{"compression_locks.acquired_at": true, "session_turn_leases.acquired_at": true}

// oddWrites says what the runtime writes in a column.
func oddWrites(column string) string {
	switch {
	case column == "api_call_count" || strings.HasSuffix(column, "_count") || strings.HasSuffix(column, "_tokens"):
		return "a whole count"
	case strings.HasSuffix(column, "_at") || strings.HasSuffix(column, "_until") || column == "first_seen" || column == "last_seen":
		return "a time"
	}
	return "a value of the column's declared type"
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
