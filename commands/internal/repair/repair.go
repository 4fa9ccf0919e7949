// Package repair is sessionctl's repair engine: it plans each repair by the runtime's rules,
// refuses what is unsafe, journals, applies (the routing index, state.db, files), undoes
// journals and runs maintain's steps. Every run ends in an Outcome value: what changed, which
// journals hold it, and what was noticed. It never prints.
package repair

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// ErrGatewayRunning refuses routing-index writes while a gateway holds the home.
var ErrGatewayRunning = errors.New("a gateway is running; it rewrites the routing index from memory and would undo this change (stop it first, or pass --force)")

// Options are how a repair runs.
type Options struct {
	Apply bool // write the change (else plan only)
	Force bool // write routing changes even while a gateway runs
	// BatchRows, when set, is the rows of every state.db transaction (a fixed size instead
	// of one measured against BatchTarget).
	BatchRows int
	// BatchTarget is the write-lock hold each state.db transaction is sized for (0:
	// DefaultBatchTarget).
	BatchTarget time.Duration
	// Ignore lists the checks whose findings maintain leaves out (--ignore): not counted as
	// found, not among what remains.
	Ignore map[check.ID]bool
}

// Change is one changed field, entry, row or file (the contract's {store, target, op, before, after}).
type Change struct {
	Store  string `json:"store"`
	Target string `json:"target"`
	Op     string `json:"op"`
	Before any    `json:"before"`
	After  any    `json:"after"`
}

// Outcome is what a repair run did (or, as a plan, would do).
type Outcome struct {
	Applied  bool
	Findings []check.Finding
	Changes  []Change
	Journals []string       // every journal written, oldest first
	Batches  []*BatchRecord // the state.db transactions that wrote something
}

// Journal returns the newest journal written, "" when none.
func (o *Outcome) Journal() string {
	if len(o.Journals) == 0 {
		return ""
	}
	return o.Journals[len(o.Journals)-1]
}

// add appends another batch's findings and changes.
func (o *Outcome) add(batch Outcome) {
	o.Findings = append(o.Findings, batch.Findings...)
	o.Changes = append(o.Changes, batch.Changes...)
}

// Run is one repair on one opened home. sessionctl's lock is taken only once the run is about
// to write (a plan, a refused run or one with nothing to change creates nothing in the home);
// what was planned before is planned again under it.
type Run struct {
	H *home.Home
	Options
	purpose home.Purpose
	release func() error // nil until the lock is held
	// moves are the background work Close waits for: files being moved into a committed
	// batch's stash, the write connection closing.
	moves sync.WaitGroup
	// moveWarnings holds what the moves warn of until Close passes it on (they run while
	// the face writes).
	moveWarnings warnings
	// temp is the pattern of the temporary files this run writes beside sessions.json and
	// the counts file, named by its journal (writeJournal).
	temp string
}

// warnings collects one-line warnings from goroutines.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

// add records one warning.
func (w *warnings) add(format string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprintf(format, a...))
}

// Start opens the home for purpose. It locks nothing. A run that is to write (Apply) a home
// sessionctl may not write at all — a schema or generation newer than it knows — is refused
// here, before any plan, whatever it would change: nothing is created in the home.
func Start(ctx context.Context, o home.Options, purpose home.Purpose, opts Options) (*Run, error) {
	if opts.Apply {
		home.RecoverInterrupted(ctx, o)
	}
	h, err := home.Open(ctx, o, purpose)
	if err != nil {
		return nil, err
	}
	if opts.Apply {
		if err := checkWritable(h); err != nil {
			h.Close()
			return nil, err
		}
	}
	return &Run{H: h, Options: opts, purpose: purpose}, nil
}

// lock takes sessionctl's lock on the home, once, and reports whether it was taken now (the
// home is then opened again: what was read before may have changed).
func (r *Run) lock(ctx context.Context) (fresh bool, err error) {
	if r.release != nil {
		return false, nil
	}
	if r.release, err = LockHome(ctx, r.H.Opts); err != nil {
		return false, err
	}
	o, mirror := r.H.Opts, r.H.Mirror
	if r.H.Storage == home.StorageDB {
		// a db-primary home reads its rows again before its mirror: keeping the mirror's
		// decode through that read held both (75–81 MB live on a 20,000-entry home, issue
		// 30); planMirror decodes it again once the rows are let go
		mirror = home.Mirror{}
	}
	r.H.Close()
	r.H = &home.Home{Opts: o} // the old home is garbage while the new one is read, but for its sessions.json
	h, err := home.Reopen(ctx, o, r.purpose, mirror)
	if err != nil {
		return false, err
	}
	r.H = h
	return true, nil
}

// Close waits for the background work still running (stash moves, the write connection's
// close) and passes the moves' warnings on, closes the home and releases the lock.
func (r *Run) Close() {
	r.moves.Wait()
	for _, w := range r.moveWarnings.lines {
		r.H.Opts.Warnf("%s", w)
	}
	r.H.Close()
	if r.release != nil {
		_ = r.release()
	}
}

// CheckWritable refuses writes on schemas or generations the tool cannot write safely.
func (r *Run) CheckWritable() error {
	return checkWritable(r.H)
}

func checkWritable(h *home.Home) error {
	if h.DB != nil && h.Schema.Intermediate {
		return failure.Mark(failure.Data, fmt.Errorf("state.db schema v%d was written by a short-lived build between r0715 (v21) and r0817 (v26) whose rules no fixture settles: refusing to write; reads still work; start a current gateway once (it migrates the file to v26)", h.Schema.Version))
	}
	if h.DB != nil && !h.Schema.Known {
		return failure.Mark(failure.Data, fmt.Errorf("state.db schema v%d is newer than this sessionctl knows (≤ v%d): refusing to write; reads still work", h.Schema.Version, sessionsjson.NewestKnownSchema()))
	}
	if h.Gen == sessionsjson.GenNewer {
		return failure.Mark(failure.Data, errors.New("sessions.json is from a generation newer than this sessionctl knows (its _README is not one it knows): refusing to write; reads still work"))
	}
	if !h.Rules.WritesAllowed {
		return failure.Mark(failure.Data, fmt.Errorf("generation %s: refusing to write", h.Gen))
	}
	return nil
}

// PlanNote is what a plan's summary says about writing it: how to, or why sessionctl will
// not on this home (a plan is a read: it is shown all the same).
func PlanNote(h *home.Home) string {
	if err := checkWritable(h); err != nil {
		return "not written: " + err.Error()
	}
	return "run again with --apply to write"
}

// checkRoutingWritable adds the routing-index refusals: a running gateway (refused unless
// Force), routing rows that belong to another scope, and, where the write reaches
// gateway_routing, the runtime's guards on state.db writes (guardDB).
func (r *Run) checkRoutingWritable(ctx context.Context) error {
	return r.routingWritable(ctx, false)
}

// routingWritable is checkRoutingWritable; foreignOK lets a write that moves rows between
// scopes (relocate, and the undo of one) through where every row belongs to another scope.
// Such a write is a gateway_routing write whatever this home's routing source is (a home to
// relocate has none of its own: SourceForeignOnly), so it is guarded as one.
func (r *Run) routingWritable(ctx context.Context, foreignOK bool) error {
	if err := r.CheckWritable(); err != nil {
		return err
	}
	h := r.H
	if h.ForeignRowsOnly() && !foreignOK {
		return failure.Mark(failure.Data, errors.New("the gateway_routing rows belong to another scope (see status); refusing to write until they are relocated (sessionctl relocate)"))
	}
	if h.Routing.Source == home.SourceGatewayRouting || foreignOK {
		if err := guardDB(ctx, h, dbWrite{routing: true}); err != nil {
			return err
		}
	}
	if h.Gateway.Running {
		if !r.Force {
			return failure.Mark(failure.Refused, fmt.Errorf("%w (%s)", ErrGatewayRunning, h.Gateway.Detail))
		}
		h.Opts.Warnf("--force: a gateway is running (%s); it rewrites the routing index from memory on its next save and will likely undo this change", h.Gateway.Detail)
	}
	return nil
}

// Incomplete is the error of a run that changed the home before it failed or was
// interrupted: Outcome says what was applied and names every journal that holds it
// (`undo` reverts them, newest first). Err is what stopped the run.
type Incomplete struct {
	Outcome Outcome
	Err     error
}

func (e *Incomplete) Error() string {
	if len(e.Outcome.Journals) == 0 { // a change that keeps no journal (journal prune)
		return fmt.Sprintf("%v; %d change(s) were applied before it stopped (listed in changes); run it again to finish", e.Err, len(e.Outcome.Changes))
	}
	return fmt.Sprintf("%v; what was applied before it stopped is journaled in %s (sessionctl undo reverts it, newest first)",
		e.Err, strings.Join(e.Outcome.Journals, ", "))
}

// Unwrap returns what stopped the run.
func (e *Incomplete) Unwrap() error { return e.Err }

// stopped ends a run that applied out before err stopped it: an Incomplete when anything was
// applied, else err itself.
func stopped(out Outcome, err error) error {
	if !out.Applied || len(out.Journals) == 0 {
		return err
	}
	return &Incomplete{Outcome: out, Err: err}
}

// LockHome takes sessionctl's lock on the home (home.Lock) and settles, under it, what an
// interrupted run left (journal.Settle: its temporary files, torn journals): every write
// takes the lock this way, so the next write after a crash puts right what it can prove
// sessionctl's.
func LockHome(ctx context.Context, o home.Options) (func() error, error) {
	release, err := home.Lock(ctx, o)
	if err != nil {
		return nil, err
	}
	journal.Settle(o.Home, o.Warnf)
	return release, nil
}
