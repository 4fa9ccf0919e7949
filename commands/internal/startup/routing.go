package startup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Reasons of Dropped and Changed.
const (
	ReasonSessionEnded = "session_ended" // the load-time prune deleted the entry: its row ended
	ReasonLoaderFailed = "loader_failed" // the loader does not load the entry
	ReasonRepointed    = "repointed"     // the load-time prune rebuilt the entry on another row
)

// storeEntry is an entry in the store after the load: what the gateway's first-hour entries
// prune reads of it, and whether the load imported it.
type storeEntry struct {
	sessionsjson.StoreEntry
	imported bool // taken from sessions.json into gateway_routing (a db-primary loader)
}

// storeLoad is one generation's routing store load (gateway/session.py _ensure_loaded_locked
// and _prune_stale_sessions_locked) on the view of state.db: what it read, kept, dropped and
// rebuilt.
type storeLoad struct {
	rules   sessionsjson.Rules
	now     int64 // the start's naive local time (WallMicros scale)
	view    *statedb.View
	read    int
	kept    []storeEntry
	dropped []Dropped
	changed []Changed
	// loadErr is why sessions.json loads no entry (the runtime's load of it fails).
	loadErr error
}

// loadStore runs the store load of rules on h, with the view of state.db v (nil without
// state.db: no row ends, nothing is pruned). Rows the recovery reopens are recorded in v.
func loadStore(ctx context.Context, h *home.Home, rules sessionsjson.Rules, v *statedb.View) (*storeLoad, error) {
	r, mirrorErr, err := routingOf(ctx, h, rules)
	if err != nil {
		return nil, err
	}
	l := &storeLoad{rules: rules, now: h.Opts.Clock.NaiveLocalMicros(time.Local), view: v, loadErr: mirrorErr}
	if err := l.prune(ctx, l.readEntries(r.Entries), r.Legacy); err != nil {
		return nil, err
	}
	return l, nil
}

// routingOf is the routing index the store of rules loads: under the home's own rules the
// one home.Open read (not decoded again), unless its rows all belong to another scope (the
// store then imports sessions.json) or Open did not read it (home.Database).
func routingOf(ctx context.Context, h *home.Home, rules sessionsjson.Rules) (home.Routing, error, error) {
	if ownRouting(h, rules) {
		return h.Routing, nil, nil
	}
	return h.RoutingUnder(ctx, rules)
}

// ownRouting reports whether the store of rules loads the routing index home.Open read on h
// (routingOf), not one it reads again.
func ownRouting(h *home.Home, rules sessionsjson.Rules) bool {
	own := rules.Generation == h.Rules.Generation && rules.Recovery == h.Rules.Recovery
	return own && h.Routing.Scope != "" && h.Routing.Source != home.SourceForeignOnly && h.Mirror.Err == nil
}

// readEntries counts the entries the loader reads ("_" keys are not entries) and returns
// those it loads; the others are dropped (loader_failed), with the entry whose TypeError
// ended the load of the rest named (r0418–r0525).
func (l *storeLoad) readEntries(entries []*sessionsjson.Entry) []*sessionsjson.Entry {
	var loaded []*sessionsjson.Entry
	abortedBy := ""
	for _, e := range entries {
		if e.AbortsLoad() && abortedBy == "" {
			abortedBy = fmt.Sprintf("%q: %s", e.Key, e.Skip)
		}
		if strings.HasPrefix(e.Key, "_") {
			continue
		}
		l.read++
		if e.Skip == "" {
			loaded = append(loaded, e)
			continue
		}
		msg := e.Skip
		if e.Skip == sessionsjson.SkipAborted {
			msg += " at " + abortedBy
		}
		l.dropped = append(l.dropped, Dropped{Key: e.Key, Reason: ReasonLoaderFailed, Message: msg})
	}
	return loaded
}

// prune is the load-time prune over the loaded entries, in the store's order: an entry
// whose row ended is kept, dropped, or rebuilt on the row the recovery lookup finds; the
// rows the lookup finds are reopened.
func (l *storeLoad) prune(ctx context.Context, loaded []*sessionsjson.Entry, imported map[string]bool) error {
	ended, err := l.endedRows(ctx, loaded)
	if err != nil {
		return err
	}
	for _, e := range loaded {
		reason := ended[e.SessionID]
		if reason == nil || l.view.Reopened(e.SessionID) {
			l.keep(e, imported[e.Key])
			continue
		}
		if err := l.stale(ctx, e, *reason, imported[e.Key]); err != nil {
			return err
		}
	}
	return nil
}

// endedRows returns the end_reason of the rows the loaded entries point at that the view has
// and that ended (get_session before the loop; the loop's reopenings are in the view).
func (l *storeLoad) endedRows(ctx context.Context, loaded []*sessionsjson.Entry) (map[string]*string, error) {
	if !l.rules.PruneEndedAtLoad || l.view == nil || len(loaded) == 0 {
		return nil, nil
	}
	ids := make([]string, 0, len(loaded))
	for _, e := range loaded {
		ids = append(ids, e.SessionID)
	}
	rows, err := l.view.EndReasons(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("load-time prune: %w", err)
	}
	return rows, nil
}

// keep adds an entry the load keeps as it is.
func (l *storeLoad) keep(e *sessionsjson.Entry, imported bool) {
	l.kept = append(l.kept, storeEntry{StoreEntry: e.StoreEntry(), imported: imported})
}

// stale is the load-time prune of one entry whose row ended with reason.
func (l *storeLoad) stale(ctx context.Context, e *sessionsjson.Entry, reason string, imported bool) error {
	var rec home.Recovery
	if e.OriginPlatform != "" {
		var err error
		rec.Target, rec.Found, err = l.view.Recover(ctx, l.rules.Recovery, e.Key, e.OriginPlatform, home.RecoveryPeer(e, l.rules))
		if err != nil && !errors.Is(err, statedb.ErrUnsupportedSchema) {
			return fmt.Errorf("load-time prune of %q: %w", e.Key, err)
		}
		rec.Err = err // the runtime's lookup raises on this file
	}
	switch home.StaleEntryAction(l.rules, e, rec) {
	case home.StaleKeep:
		l.keep(e, imported)
	case home.StaleRepoint:
		if err := l.view.Reopen(ctx, rec.Target.ID); err != nil {
			return err
		}
		l.kept = append(l.kept, storeEntry{StoreEntry: sessionsjson.StoreEntry{Key: e.Key, Updated: l.rebuiltAt(rec.Target)}, imported: imported})
		l.changed = append(l.changed, Changed{Key: e.Key, Reason: ReasonRepointed, Fields: l.rebuiltFields(e, rec.Target),
			Before: e.SessionID, After: rec.Target.ID})
	case home.StaleReopen:
		if err := l.view.Reopen(ctx, e.SessionID); err != nil {
			return err
		}
		fallthrough
	default:
		l.dropped = append(l.dropped, Dropped{Key: e.Key, Reason: ReasonSessionEnded, EndReason: reason})
	}
	return nil
}

// rebuiltAt is the updated_at of an entry rebuilt on the recovered row: r0817 dates it by the
// row's last activity, else its start (_create_entry_from_recovered_row at 481156139);
// before, the load's now.
func (l *storeLoad) rebuiltAt(t statedb.Recovered) int64 {
	if l.rules.Recovery != sessionsjson.RecoveryV26 {
		return l.now
	}
	return sessionsjson.ClockFromUnix(t.ActiveAt).NaiveLocalMicros(time.Local)
}

// resetOnRebuild are the entry fields a rebuilt entry holds at their defaults (false or
// null): a truthy value before is a change.
var resetOnRebuild = []string{"resume_pending", "resume_reason", "last_resume_marked_at", "suspended", "model_override",
	"was_auto_reset", "auto_reset_reason", "is_fresh_reset", "metadata", "active_turn_token", "active_turn_started_at", "prev_session_id"}

// rebuiltFields names the fields a rebuilt entry changes: the row's id and times, and the
// flags and values the rebuild resets; reset_had_activity is the row's _has_messages from
// r0817 on (false before).
func (l *storeLoad) rebuiltFields(e *sessionsjson.Entry, t statedb.Recovered) []string {
	fields := []string{"created_at", "session_id", "updated_at"}
	for _, name := range resetOnRebuild {
		if raw, ok := e.Get(name); ok && sessionsjson.Truthy(raw) {
			fields = append(fields, name)
		}
	}
	had := false
	if raw, ok := e.Get("reset_had_activity"); ok {
		had = sessionsjson.Truthy(raw)
	}
	if had != (t.HasMessages && l.rules.Recovery == sessionsjson.RecoveryV26) {
		fields = append(fields, "reset_had_activity")
	}
	slices.Sort(fields)
	return fields
}

// keptKeys is the set of keys the load kept.
func (l *storeLoad) keptKeys() map[string]bool {
	out := make(map[string]bool, len(l.kept))
	for _, e := range l.kept {
		out[e.Key] = true
	}
	return out
}

// report is the load as data.upgrade's routing: ownKept are the keys the home's own
// generation's load keeps (LoadedByFrom, and whether a dropped entry is one it loads).
func (l *storeLoad) report(ownKept map[string]bool) Routing {
	r := Routing{EntriesBefore: l.read, Kept: len(l.kept), Dropped: l.dropped, Changed: l.changed, LoadedByFrom: len(ownKept)}
	if l.loadErr != nil {
		r.LoadError = l.loadErr.Error()
	}
	for _, e := range l.kept {
		if e.imported {
			r.Imported++
		}
	}
	for i := range r.Dropped {
		r.Dropped[i].LoadedByFrom = ownKept[r.Dropped[i].Key]
	}
	slices.SortFunc(r.Dropped, func(a, b Dropped) int { return cmp.Compare(a.Key, b.Key) })
	slices.SortFunc(r.Changed, func(a, b Changed) int { return cmp.Compare(a.Key, b.Key) })
	if r.Dropped == nil {
		r.Dropped = []Dropped{}
	}
	if r.Changed == nil {
		r.Changed = []Changed{}
	}
	return r
}
