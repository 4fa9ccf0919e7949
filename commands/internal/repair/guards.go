package repair

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/statedb"
)

// dbWrite is what a run is about to write in state.db, for the write-safety guards of the
// r0817 runtime (runtime-v26.md §4.9) that depend on the operation.
type dbWrite struct {
	routing  bool // gateway_routing rows
	deletes  bool // sessions rows deleted (foreign-key actions may reach other tables)
	messages bool // messages rows inserted, updated or deleted
}

// guardDB refuses a state.db write the r0817 runtime's guards forbid, on a home of any
// generation (the files they read exist only where an r0817+ runtime made them). First the
// file-level guards, which hold for every write: the runtime's repair lock held by another
// process (a refusal, exit 3: try later), its ledger of failed repairs giving up on the file
// as it is now or unreadable, state.db, -wal, -shm or the directory not writable (data,
// exit 4); then those of the operation: a legacy gateway_routing key for a routing write,
// messages triggers sessionctl cannot run for a write that reaches messages rows (data,
// exit 4). A zeroed state.db never gets here: no open accepts it (statedb.ErrZeroed). It
// creates nothing, and is run before sessionctl's lock is taken and again under it.
func guardDB(ctx context.Context, h *home.Home, w dbWrite) error {
	if h.DB == nil {
		return nil
	}
	if err := statedb.CheckWriteSafety(h.Opts.Home.StateDB()); err != nil {
		return guardRefusal(err)
	}
	return guardOp(ctx, h, w)
}

// guardOp applies the guards of the operation only (guardDB's second half).
func guardOp(ctx context.Context, h *home.Home, w dbWrite) error {
	if w.routing {
		if err := h.DB.CheckRoutingKey(ctx); err != nil {
			return guardRefusal(err)
		}
	}
	switch {
	case w.messages:
		return guardRefusal(h.DB.CheckMessageWrites(ctx))
	case w.deletes:
		return guardRefusal(h.DB.CheckSessionDeletes(ctx))
	}
	return nil
}

// guardRefusal marks a guard's refusal with its class: the repair lock is a refusal (exit 3,
// like sessionctl's own lock), anything else a data or environment error (exit 4).
func guardRefusal(err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("refusing to write state.db: %w", err)
	if errors.Is(err, statedb.ErrRepairInProgress) {
		return failure.Mark(failure.Refused, err)
	}
	return failure.Mark(failure.Data, err)
}

// What the state.db repairs write: finalize-orphans updates sessions rows (and the latch in
// state_meta), which no messages trigger sees; prune-ghosts deletes sessions rows.
var (
	finalizeWrite = dbWrite{}
	pruneWrite    = dbWrite{deletes: true}
)

// checkDBWrite refuses a state.db write of w on the home as it is now opened: the schema and
// generation (CheckWritable), then the runtime's guards (guardDB).
func (r *Run) checkDBWrite(ctx context.Context, w dbWrite) error {
	if err := r.CheckWritable(); err != nil {
		return err
	}
	return guardDB(ctx, r.H, w)
}

// rowsWrite says what restoring rows writes: a sessions row taken back out is a delete, a
// messages row any write.
func rowsWrite(rows []statedb.RowChange) dbWrite {
	var w dbWrite
	for _, c := range rows {
		switch c.Table {
		case "messages":
			w.messages = true
		case "sessions":
			w.deletes = w.deletes || c.After == nil
		case statedb.TableGatewayRouting:
			w.routing = true
		}
	}
	return w
}
