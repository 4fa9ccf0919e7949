package startup

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// ErrNoDatabase is returned when the home's state.db could not be opened: the target's first
// start cannot be predicted (its own open would fail on the file).
var ErrNoDatabase = errors.New("state.db unreadable: the target's start is not predicted")

// state_meta keys maybe_auto_prune_and_vacuum reads and writes.
const (
	metaLastAutoPrune = "last_auto_prune"
	metaLastVacuum    = "last_vacuum"
)

// Seconds per hour and per day, as the runtime multiplies its settings.
const (
	secondsPerHour = 3600
	secondsPerDay  = 86400
	microsPerDay   = secondsPerDay * 1_000_000
)

// Start predicts, read-only, what the first start of the target generation does to the home
// after its open, under the target's rules and defaults and the home's config.yaml, at the
// home's clock (h.Opts.Clock), in the runtime's order (the package upgrade comment's steps
// 2–5): the gateway's auto-prune, the routing store's first load, the CLI's latched repairs
// and auto-prune, the gateway's first-hour entries prune. Each step sees what the earlier ones
// changed (statedb.View). fills is the v18 backfill the target's open runs (nil when it runs
// none). Routing.LoadedByFrom and Dropped.LoadedByFrom come from the home's own generation's
// load (h.Rules) of the home as it is.
func Start(ctx context.Context, h *home.Home, to Target, fills []statedb.PeerFill) (Routing, StartMaintenance, error) {
	return start(ctx, h, to, fills, true)
}

// start is Start; without report the routing load's report (and the home's own generation's
// load it compares with, a second view of state.db) is not made.
func start(ctx context.Context, h *home.Home, to Target, fills []statedb.PeerFill, report bool) (Routing, StartMaintenance, error) {
	if h.DBErr != nil {
		return Routing{}, StartMaintenance{}, fmt.Errorf("%w: %v", ErrNoDatabase, h.DBErr)
	}
	s, err := newStartRun(ctx, h, to, fills)
	if err != nil {
		return Routing{}, StartMaintenance{}, err
	}
	s.report = report
	for _, step := range []func(context.Context) error{s.gatewayInit, s.gatewayLoad, s.cliStart} {
		if err := step(ctx); err != nil {
			return Routing{}, StartMaintenance{}, errors.Join(err, s.close())
		}
	}
	s.firstHour()
	return s.routing, s.maint, s.close()
}

// Own is the home's own generation as a start's target: its rules, and the schema its open
// writes (the file's when the file is newer than the generation's code, as within a
// generation's range). Its open never runs the v18 backfill: no generation's range crosses v18
// (r0703 writes v17 and reads v18, r0715 starts at v19).
func Own(h *home.Home) Target {
	return Target{Gen: h.Gen, Rules: h.Rules, Schema: max(sessionsjson.CodeSchema(h.Gen), h.Schema.Version)}
}

// Next is what the home's own generation's next start and first hour do to its storage
// (status's data.start_maintenance). The routing load's report is not made (status does
// not show it): on a home of 100,000 sessions its second view of state.db was a third of
// status' time (issue 30).
func Next(ctx context.Context, h *home.Home) (StartMaintenance, error) {
	_, m, err := start(ctx, h, Own(h), nil, false)
	return m, err
}

// startRun is one predicted start: the view of state.db, the settings read from config.yaml,
// the state_meta values the start writes, and what each step found.
type startRun struct {
	h     *home.Home
	rules sessionsjson.Rules
	now   float64
	view  *statedb.View // nil without state.db
	cfg   autoPruneSettings
	meta  map[string]string
	load  *storeLoad
	// report: the routing load is reported (with the home's own generation's load of the
	// home as it is, for LoadedByFrom).
	report bool

	routing Routing
	maint   StartMaintenance
}

// newStartRun prepares the start: the view as the target's open leaves the file (its added
// columns, the v18 backfill fills when it runs it) and the auto-prune settings.
func newStartRun(ctx context.Context, h *home.Home, to Target, fills []statedb.PeerFill) (*startRun, error) {
	s := &startRun{h: h, rules: to.Rules, now: h.Opts.Clock.Unix, meta: map[string]string{}}
	if h.DB != nil {
		var err error
		if s.view, err = h.DB.NewView(ctx, to.Schema, fills); err != nil {
			return nil, fmt.Errorf("state.db: %w", err)
		}
	}
	section := readSessionsSection(h.Opts.Home)
	s.cfg = section.settings(to.Rules.Maintenance)
	a := AutoPrune{RetentionDays: float64(s.cfg.retentionDays), MinIntervalHours: float64(s.cfg.minIntervalHours),
		Configured: section.configured}
	if to.Rules.Maintenance.AutoPrune { // before r0506 nothing reads the section
		a.Enabled, a.Raises, a.Note = s.cfg.enabled, s.cfg.raises, section.note
	}
	s.maint.AutoPrune = a
	s.maint.EntriesPrune = EntriesPrune{MaxAgeDays: sessionsjson.SessionStoreMaxAgeDays, Keys: []string{}}
	return s, nil
}

// close drops the view's table.
func (s *startRun) close() error {
	if s.view == nil {
		return nil
	}
	return s.view.Close()
}

// getMeta reads state_meta as the start left it so far.
func (s *startRun) getMeta(ctx context.Context, key string) (string, error) {
	if v, ok := s.meta[key]; ok {
		return v, nil
	}
	if s.h.DB == nil {
		return "", nil
	}
	v, _, err := s.h.DB.Meta(ctx, key)
	return v, err
}

// gatewayInit is GatewayRunner.__init__'s maybe_auto_prune_and_vacuum (gateway/run.py).
func (s *startRun) gatewayInit(ctx context.Context) error {
	if !s.maint.AutoPrune.Enabled {
		return nil
	}
	return s.autoPrune(ctx, true)
}

// autoPrune is maybe_auto_prune_and_vacuum (hermes_state.py, b8663813b; VACUUM throttle
// bd856a02f): skipped within min_interval_hours of last_auto_prune, else prune_sessions
// (older_than_days = retention_days), VACUUM when it deleted something (and, r0817, when
// min_vacuum_interval_days passed since last_vacuum), last_auto_prune = now.
func (s *startRun) autoPrune(ctx context.Context, first bool) error {
	last, err := s.getMeta(ctx, metaLastAutoPrune)
	if err != nil {
		return err
	}
	if f, err := statedb.PyFloat(last); last != "" && err == nil && s.now-f < float64(s.cfg.minIntervalHours)*secondsPerHour {
		s.maint.AutoPrune.Throttled = s.maint.AutoPrune.Throttled || first
		return nil
	}
	var ids []string
	if s.view != nil {
		cutoff := s.now - float64(s.cfg.retentionDays)*secondsPerDay
		if ids, err = s.view.PruneCandidates(ctx, cutoff, s.rules.Maintenance.Age); err != nil {
			return fmt.Errorf("auto-prune: %w", err)
		}
		if err := s.view.Delete(ctx, ids...); err != nil {
			return err
		}
	}
	s.maint.AutoPrune.WouldDelete += len(ids)
	due, err := s.vacuumDue(ctx)
	if err != nil {
		return err
	}
	if s.cfg.vacuum && len(ids) > 0 && due {
		s.maint.AutoPrune.Vacuum = true
		if s.rules.Maintenance.VacuumThrottle {
			s.meta[metaLastVacuum] = pyFloatStr(s.now)
		}
	}
	s.meta[metaLastAutoPrune] = pyFloatStr(s.now)
	return nil
}

// vacuumDue is r0817's VACUUM throttle: due when last_vacuum is absent, empty, not a number,
// or min_vacuum_interval_days old; always due before r0817.
func (s *startRun) vacuumDue(ctx context.Context) (bool, error) {
	if !s.rules.Maintenance.VacuumThrottle {
		return true, nil
	}
	last, err := s.getMeta(ctx, metaLastVacuum)
	if err != nil {
		return false, err
	}
	f, perr := statedb.PyFloat(last)
	return last == "" || perr != nil || s.now-f >= float64(s.cfg.minVacuumIntervalDays)*secondsPerDay, nil
}

// pyFloatStr is Python's str() of a float time.
func pyFloatStr(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// gatewayLoad is the routing store's first load under the target's rules, on the state the
// gateway's auto-prune left; the home's own generation's load of the home as it is gives
// LoadedByFrom. The own load runs first and only its kept keys are held: where the target
// reads the routing index again (its own decode of it), the home's decoded entries are let go
// before that read, so that the two are never held at once (issue 30: the heap held both).
func (s *startRun) gatewayLoad(ctx context.Context) error {
	var ownKept map[string]bool
	if s.report {
		own, err := s.ownLoad(ctx)
		if err != nil {
			return err
		}
		if ownKept = own.keptKeys(); !ownRouting(s.h, s.rules) {
			s.h.ReleaseRouting()
		}
	}
	l, err := loadStore(ctx, s.h, s.rules, s.view)
	if err != nil {
		return err
	}
	if s.load = l; s.report {
		s.routing = l.report(ownKept)
	}
	return nil
}

// ownLoad is the store load of the home's own generation on the home as it is (its rows are
// only read by a load-time prune).
func (s *startRun) ownLoad(ctx context.Context) (*storeLoad, error) {
	if s.h.DB == nil || !s.h.Rules.PruneEndedAtLoad {
		return loadStore(ctx, s.h, s.h.Rules, nil)
	}
	own, err := s.h.DB.NewView(ctx, s.h.Schema.Version, nil)
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	l, err := loadStore(ctx, s.h, s.h.Rules, own)
	return l, errors.Join(err, own.Close())
}

// cliStart is cli._run_state_db_auto_maintenance: the latched ghost prune, the latched
// orphan finalize (3b750715a … 481156139), then the auto-prune, throttled by the gateway's.
func (s *startRun) cliStart(ctx context.Context) error {
	if !s.rules.DBRepairs {
		return nil // no latched repair before r0506
	}
	var err error
	if s.maint.GhostPrune, err = s.latched(ctx, statedb.LatchPruneGhosts, s.ghostPrune); err != nil {
		return err
	}
	if s.maint.OrphanFinalize, err = s.latched(ctx, statedb.LatchFinalizeOrphans, s.orphanFinalize); err != nil {
		return err
	}
	if !s.maint.AutoPrune.Enabled {
		return nil
	}
	return s.autoPrune(ctx, false)
}

// latched runs a one-time repair unless its state_meta latch is set (any non-empty value:
// `if not get_meta(key)`); the latch is set after a call that did not raise.
func (s *startRun) latched(ctx context.Context, key string, repair func(context.Context) (int, string, error)) (Latched, error) {
	v, err := s.getMeta(ctx, key)
	if err != nil {
		return Latched{}, err
	}
	if v != "" {
		return Latched{Latched: true}, nil
	}
	n, raises, err := repair(ctx)
	if err != nil {
		return Latched{}, err
	}
	if raises == "" {
		s.meta[key] = "1"
	}
	return Latched{WouldChange: n, Raises: raises}, nil
}

// ghostPrune is prune_empty_ghost_sessions at now: its one DELETE fails on a ghost that a
// remaining row names as parent, and then deletes nothing.
func (s *startRun) ghostPrune(ctx context.Context) (int, string, error) {
	if s.view == nil {
		return 0, "", nil
	}
	ids, fails, err := s.view.Ghosts(ctx, s.now-statedb.DefaultGhostMinAge)
	if raises, err := raisesOn(err); raises != "" || err != nil {
		return 0, raises, err
	}
	if fails {
		return 0, "FOREIGN KEY constraint failed: a session that is not a ghost names a ghost as its parent", nil
	}
	return len(ids), "", s.view.Delete(ctx, ids...)
}

// orphanFinalize is finalize_orphaned_compression_sessions at now. Like the runtime, it
// ends continuations holding a live compression lock or turn lease too.
func (s *startRun) orphanFinalize(ctx context.Context) (int, string, error) {
	if s.view == nil {
		return 0, "", nil
	}
	ids, err := s.view.Orphans(ctx, s.now-statedb.DefaultOrphanMinAge)
	if raises, err := raisesOn(err); raises != "" || err != nil {
		return 0, raises, err
	}
	return len(ids), "", s.view.Finalize(ctx, s.now, ids...)
}

// raisesOn splits a view error: a query the runtime's SQL cannot run on the file (the
// runtime's call raises) from a failure to read it.
func raisesOn(err error) (string, error) {
	if errors.Is(err, statedb.ErrUnsupportedSchema) {
		return err.Error(), nil
	}
	return "", err
}

// firstHour is SessionStore.prune_old_entries(session_store_max_age_days) in the gateway's
// first hour (sessionsjson.PruneOldEntries): entries not updated for 90 days (strictly older)
// are dropped, suspended ones kept; an aware updated_at makes it raise, and nothing is dropped.
func (s *startRun) firstHour() {
	p := &s.maint.EntriesPrune
	entries := make([]sessionsjson.StoreEntry, len(s.load.kept))
	for i, e := range s.load.kept {
		entries[i] = e.StoreEntry
	}
	keys, raises := sessionsjson.PruneOldEntries(entries, sessionsjson.OldEntriesCutoff(s.load.now, sessionsjson.SessionStoreMaxAgeDays*86400))
	if raises != "" {
		p.Raises = raises
		return
	}
	p.Keys = append(p.Keys, keys...)
	p.WouldDrop = len(keys)
}
