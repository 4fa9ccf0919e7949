package repair

import (
	"context"
	"time"

	"github.com/sessionctl/sessionctl/statedb"
)

// DefaultBatchTarget is the write-lock hold a state.db batch aims at: the batches are sized by
// their measured cost so that each holds the lock about this long, whatever the size of the
// job, well under the 250 ms the contract allows one transaction ("A live gateway never waits
// long") and the 0.5 s after which the newest runtime gives up an activity write. 160 ms was
// tried (docs/decisions.md, issue 30 item 5): half the transactions, the same total hold.
const DefaultBatchTarget = 100 * time.Millisecond

// firstBatchUnits is the cost units (rows, or a prune's rows plus messages) the first batch of
// a run takes at DefaultBatchTarget (in proportion at another target), before any batch is
// measured: small enough to stay under the target on a slow disk, large enough that the next
// batch's estimate is not all fixed cost (journal and commit).
const firstBatchUnits = 100

// batchGrowth bounds how much larger a batch is than the one before it: a batch of another
// make-up (larger sessions, another part of the table) cannot be many times the measured one.
const batchGrowth = 4

// maxAim bounds what a batch aims at when the fixed cost of a transaction (its journal, its
// commit, their fsyncs) alone comes near the target: the batch then takes as much again as
// that cost, up to this hold, rather than many batches of fixed cost each; it stays under the
// contract's 250 ms: no batch aims, by the fitted line, at more than this.
const maxAim = 200 * time.Millisecond

// sizer chooses each batch's rows from what the batches before it cost. With fixed set every
// batch takes fixed rows (Options.BatchRows: tests and the rare operator who wants it).
//
// The cost of a batch is modelled as a fixed part and a part per cost unit, fitted by least
// squares over every batch measured so far: a single batch that stalls (another process
// holding the disk or the processors) moves the estimate by its share only.
type sizer struct {
	fixed  int
	target time.Duration
	// weight is the cost units of one candidate (nil: one per row).
	weight func(id string) float64
	// The sums of the fit: batches measured, their units, their holds (ns), units², units×hold.
	n, su, sh, suu, suh float64
	shortest            float64 // the shortest hold measured (ns)
	units               float64 // the units of the batch last sized
	largest             int     // the most rows a batch took
}

// sizer returns the batch sizer of a run; weight gives each candidate's cost units (nil: one
// per row).
func (o Options) sizer(weight func(id string) float64) *sizer {
	target := o.BatchTarget
	if target <= 0 {
		target = DefaultBatchTarget
	}
	return &sizer{fixed: o.BatchRows, target: target, weight: weight}
}

// size returns how many of among, oldest first, the next batch takes: as many as the target
// holds at the cost measured so far (at most batchGrowth times the last batch's units), at
// least one.
func (s *sizer) size(among []string) int {
	n := len(among)
	if s.fixed > 0 {
		n = min(n, s.fixed)
	} else {
		budget := s.budget()
		units := 0.0
		for i, id := range among {
			w := 1.0
			if s.weight != nil {
				w = s.weight(id)
			}
			if i > 0 && units+w > budget {
				n = i
				break
			}
			units += w
		}
		s.units = units
	}
	s.largest = max(s.largest, n)
	return n
}

// take returns how many of remaining units of one cost each (an FTS rebuild's message ids) the
// next batch takes, as size does for candidates: at least one.
func (s *sizer) take(remaining int64) int64 {
	n := remaining
	if s.fixed > 0 {
		n = min(n, int64(s.fixed))
	} else {
		n = max(min(n, int64(s.budget())), 1)
		s.units = float64(n)
	}
	s.largest = max(s.largest, int(min(n, 1<<31-1)))
	return n
}

// budget is the cost units the next batch may take.
func (s *sizer) budget() float64 {
	target := float64(s.target)
	if s.n == 0 {
		return firstBatchUnits * target / float64(DefaultBatchTarget)
	}
	fixed, perUnit := s.fit()
	variable := target - fixed
	if fixed > target/2 { // the fixed cost dominates: as much again, within maxAim
		variable = max(variable, min(fixed, float64(maxAim)-fixed))
	}
	variable = max(variable, target/10)
	return min(variable/perUnit, batchGrowth*s.units)
}

// fit returns the fixed cost of a batch and its cost per unit, in ns: the least-squares line
// through the batches measured, or, while they do not determine one (a single batch, batches
// of one size, noise that makes the line fall or start below zero), the lower envelope: the
// shortest hold measured as the fixed cost (none while one batch is measured), the rest of
// every hold spread over the units.
func (s *sizer) fit() (fixed, perUnit float64) {
	mu, mh := s.su/s.n, s.sh/s.n
	if den := s.suu - s.su*mu; s.n >= 2 && den > 0 {
		perUnit = (s.suh - s.su*mh) / den
		if fixed = mh - perUnit*mu; perUnit > 0 && fixed >= 0 {
			return fixed, perUnit
		}
	}
	if s.n >= 2 {
		fixed = s.shortest
	}
	return fixed, max((s.sh-s.n*fixed)/s.su, 1)
}

// measured records the lock a batch sized by size held.
func (s *sizer) measured(held time.Duration) {
	if s.fixed > 0 || s.units <= 0 || held <= 0 {
		return
	}
	h := float64(held)
	if s.n == 0 || h < s.shortest {
		s.shortest = h
	}
	s.n, s.su, s.sh, s.suu, s.suh = s.n+1, s.su+s.units, s.sh+h, s.suu+s.units*s.units, s.suh+s.units*h
}

// yield leaves state.db's write lock free after a batch that held it for held, long enough for
// a writer that waited for it all along (in SQLite's busy handler, as the runtime's
// connections wait) to try again and take it, before the next batch begins. It returns the
// context's error when the run is cancelled meanwhile.
func yield(ctx context.Context, held time.Duration) error {
	return statedb.Sleep(ctx, statedb.WaiterGap(held)+time.Millisecond)
}
