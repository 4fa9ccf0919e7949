// Package storage is sessionctl's storage engine: compact (the runtime's vacuum() of the
// home's generation, or a compacted copy), backup (a consistent online snapshot with a
// manifest), backup verify, and restore (a verified backup swapped in, undoable). Writes that
// need the database alone are refused while a gateway runs or any other process holds it
// (package holders). It never prints.
package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/holders"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// ErrGatewayRunning refuses a write that needs the database alone while a gateway runs.
var ErrGatewayRunning = errors.New("a gateway is running (stop it first)")

// OpenHome opens the home for restore and its undo: as home.Database, and when its state.db
// cannot be read as a database (corrupt, zeroed) with h.DBErr set instead of failing — a
// restore is what mends such a home. With apply, an interrupted write's hot journal is
// rolled back first (home.RecoverInterrupted).
func OpenHome(ctx context.Context, o home.Options, apply bool) (*home.Home, error) {
	if apply { // a restore or its undo that writes rolls back what an interrupted write left
		home.RecoverInterrupted(ctx, o)
	}
	h, err := home.Open(ctx, o, home.Database)
	if !errors.Is(err, statedb.ErrCorrupt) {
		return h, err
	}
	return &home.Home{Opts: o, Gateway: sessionsjson.DetectGateway(o.Home), DBErr: err, Gen: sessionsjson.GenUnknown,
		Rules: sessionsjson.RulesFor(sessionsjson.GenUnknown)}, nil
}

// refuseShared refuses (exit 3) a write that needs the database to itself: a running gateway,
// another process holding state.db, its -wal or -shm (holders), the runtime's repair lock;
// and (exit 4) files it cannot write, and, unless the write replaces state.db (a restore),
// a repair ledger that gave up on the file.
func refuseShared(h *home.Home, what string, replaces bool) error {
	switch {
	case h.Gateway.Running && h.Gateway.Method == sessionsjson.MethodUnsupported && h.Opts.AssumeStopped:
		h.Opts.Warnf("%s: %s; going ahead on --force", what, h.Gateway.Detail)
	case h.Gateway.Running:
		return failure.Mark(failure.Refused, fmt.Errorf("%s: %w (%s)", what, ErrGatewayRunning, h.Gateway.Detail))
	}
	if err := holders.RefuseHeld(h.Opts.Home, what, h.Opts.AssumeStopped, h.Opts.Warnf); err != nil {
		return err
	}
	if _, err := os.Lstat(h.Opts.Home.StateDB()); err != nil {
		return nil
	}
	err := statedb.CheckWriteSafety(h.Opts.Home.StateDB())
	if errors.Is(err, statedb.ErrRepairAbandoned) || errors.Is(err, statedb.ErrRepairLedger) {
		if replaces { // a restore replaces the file the ledger gave up on
			err = statedb.CheckWritable(h.Opts.Home.StateDB())
		}
	}
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%s: refusing to write state.db: %w", what, err)
	if errors.Is(err, statedb.ErrRepairInProgress) {
		return failure.Mark(failure.Refused, err)
	}
	return failure.Mark(failure.Data, err)
}

// SpaceNeed is the free space a write needs on one filesystem.
type SpaceNeed struct {
	Dir       string `json:"dir"`
	What      string `json:"what"`
	Needed    int64  `json:"needed_bytes"`
	Available int64  `json:"available_bytes"`
}

// spaceDemand is space wanted in one directory.
type spaceDemand struct {
	dir, what string
	bytes     int64
}

// needSpace sums the demands per filesystem (fileSystem: by the device of each directory)
// and reads what is free there (the blocks available to this user).
func needSpace(demands []spaceDemand) ([]SpaceNeed, error) {
	byFS := map[string]*SpaceNeed{}
	var ids []string
	for _, d := range demands {
		id, avail, err := fileSystem(d.dir)
		if err != nil {
			return nil, err
		}
		if n := byFS[id]; n != nil {
			n.Needed += d.bytes
			n.What += " + " + d.what
			continue
		}
		byFS[id] = &SpaceNeed{Dir: d.dir, What: d.what, Needed: d.bytes, Available: avail}
		ids = append(ids, id)
	}
	out := make([]SpaceNeed, 0, len(ids))
	for _, id := range ids {
		out = append(out, *byFS[id])
	}
	return out, nil
}

// refuseShort refuses (exit 4) when a filesystem lacks the space a write needs.
func refuseShort(what string, needs []SpaceNeed) error {
	for _, n := range needs {
		if n.Available < n.Needed {
			return failure.Mark(failure.Data, fmt.Errorf("%s needs %d bytes free on the filesystem of %s (%s) and only %d are available: free some space first (nothing was changed)",
				what, n.Needed, n.Dir, n.What, n.Available))
		}
	}
	return nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// absPath returns path absolute and clean.
func absPath(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", failure.Mark(failure.Data, err)
	}
	return p, nil
}
