package repair

import (
	"context"
	"time"

	"github.com/sessionctl/sessionctl/statedb"
)

// DefaultBatchTarget is the write-lock hold a state.db batch aims at: the batches are sized by
// their measured cost so that each holds the lock about this long, whatever the size of the
// job, well under the 250 ms the contract allows one transaction ("A live gateway never waits
// long") and the 0.5 s after which the newest runtime gives up an activity write.
const DefaultBatchTarget = 100 * time.Millisecond

// firstBatchUnits is the cost units (rows, or a prune's rows plus messages) the first batch of
// a run takes at DefaultBatchTarget (in proportion at another target), before any batch is
// measured: small enough to stay under the target on a slow
// disk, large enough that the next batch's estimate is not all fixed cost (journal and commit).
const firstBatchUnits = 100

// batchGrowth bounds how much larger a batch is than the one before it: the cost per unit is
// measured on a batch whose fixed cost weighs more the smaller it is, so the estimate errs
// on the long side, and a batch of another make-up (larger sessions, another part of the
// table) cannot be many times the measured one.
const batchGrowth = 4

// sizer chooses each batch's rows from what the batches before it cost. With fixed set every
// batch takes fixed rows (Options.BatchRows: tests and the rare operator who wants it).
type sizer struct {
	fixed  int
	target time.Duration
	// weight is the cost units of one candidate (nil: one per row).
	weight func(id string) float64
	// perUnit is the lock held per cost unit in the last batch measured (0: none yet).
	perUnit float64
	units   float64 // the units of the batch last sized
	largest int     // the most rows a batch took
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
		budget := firstBatchUnits * float64(s.target) / float64(DefaultBatchTarget)
		if s.perUnit > 0 {
			budget = min(float64(s.target)/s.perUnit, batchGrowth*s.units)
		}
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

// measured records the lock a batch sized by size held.
func (s *sizer) measured(held time.Duration) {
	if s.units > 0 && held > 0 {
		s.perUnit = float64(held) / s.units
	}
}

// yield leaves state.db's write lock free after a batch that held it for held, long enough for
// a writer that waited for it all along (in SQLite's busy handler, as the runtime's
// connections wait) to try again and take it, before the next batch begins. It returns the
// context's error when the run is cancelled meanwhile.
func yield(ctx context.Context, held time.Duration) error {
	t := time.NewTimer(statedb.WaiterGap(held) + time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
