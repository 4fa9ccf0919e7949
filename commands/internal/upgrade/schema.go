package upgrade

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// ErrNoOpenRules is returned for a target generation whose open sessionctl cannot replay (no
// runtime schema or no rules for it: the v22–v25 builds, a newer runtime).
var ErrNoOpenRules = errors.New("no schema rules for this generation")

// Schema predicts what the target's first open (SessionDB._init_schema) does to the home's
// state.db: the DDL steps in a deterministic order (tables by name — each created, or its
// added columns then its rebuild —, virtual tables, views, indexes, triggers, then
// schema_version), the full-text rebuild it runs, and whether the home's own generation still
// opens the file afterwards. It replays the file's schema in a scratch database, runs the
// target's DDL (the schema its runtime creates, statedb/schema/<gen>.sql) and its rules
// (openRules) on it, and compares; only counts and state_meta keys are read from the file's
// rows. A home without state.db gets the file the target creates.
func Schema(ctx context.Context, h *home.Home, to Target) (steps []SchemaStep, fts FTSRebuild, down *Downgrade, err error) {
	st, err := readFileState(ctx, h)
	if err != nil {
		return nil, FTSRebuild{}, nil, err
	}
	sim, err := newSimulation(ctx, st.objects)
	if err != nil {
		return nil, FTSRebuild{}, nil, err
	}
	defer sim.Close()
	before, err := sim.snapshot(ctx)
	if err != nil {
		return nil, FTSRebuild{}, nil, err
	}
	run, err := sim.open(ctx, to.Gen, st.fileVersion)
	if err != nil {
		return nil, FTSRebuild{}, nil, err
	}
	after, err := sim.snapshot(ctx)
	if err != nil {
		return nil, FTSRebuild{}, nil, err
	}
	steps = diffSchemas(before, after, run)
	if fts, err = ftsOutcome(ctx, h, run); err != nil {
		return nil, FTSRebuild{}, nil, err
	}
	down, err = downgrade(ctx, sim, h.Gen, run.after)
	return steps, fts, down, err
}

// fileState is what the prediction reads from the home's state.db.
type fileState struct {
	objects     []statedb.Object // sqlite_master in creation order; none without state.db
	fileVersion fileVersion
}

// fileVersion is the schema_version row of a file and the state_meta keys its open consults.
type fileVersion struct {
	version int
	// row: schema_version holds a row; without one the runtime inserts its own version and
	// runs no version-gated step.
	row bool
	// ftsStale: state_meta.fts_stale is set (r0817 recovers the FTS tables on open).
	ftsStale bool
}

// readFileState reads the home's schema, version and FTS markers (nothing without state.db).
func readFileState(ctx context.Context, h *home.Home) (fileState, error) {
	if h.DB == nil {
		return fileState{}, nil
	}
	objs, err := h.DB.Objects(ctx)
	if err != nil {
		return fileState{}, err
	}
	_, stale, err := h.DB.Meta(ctx, "fts_stale")
	if err != nil {
		return fileState{}, err
	}
	v := fileVersion{version: h.Schema.Version, row: !h.Schema.VersionMissing, ftsStale: stale}
	return fileState{objects: objs, fileVersion: v}, nil
}

// ftsOutcome turns the simulated open's FTS work into the report: the messages a rebuild
// indexes (counted in the file), its estimated time, and r0817's optimize flag after the open.
func ftsOutcome(ctx context.Context, h *home.Home, run *openRun) (FTSRebuild, error) {
	out := FTSRebuild{Tables: []string{}}
	if len(run.ftsRebuilt) > 0 && h.DB != nil { // a new file has nothing to fill
		n, err := h.DB.CountRows(ctx, "messages")
		if err != nil {
			return out, err
		}
		out.Triggered, out.Tables, out.Rows = true, run.ftsRebuilt, n
		out.EstimateSeconds = EstimateRebuildSeconds(n)
	}
	if !run.rules.knowsOptimizeFlag() {
		return out, nil
	}
	if run.setsOptimizeFlag {
		out.OptimizeAvailable = "1"
		return out, nil
	}
	if h.DB != nil {
		v, ok, err := h.DB.Meta(ctx, "fts_optimize_available")
		if err != nil {
			return out, err
		}
		if ok {
			out.OptimizeAvailable = v
		}
	}
	return out, nil
}

// downgrade starts the home's own generation again on the upgraded schema (a rollback): its
// open never lowers schema_version and only creates what its own DDL lacks, so it opens the
// file unless creating one of its declared objects fails there. Nil when sessionctl has no
// rules for the home's generation (a newer runtime, no state.db); the v22–v25 builds open
// any later file the same way (the version is never lowered) and are not replayed.
func downgrade(ctx context.Context, sim *simulation, gen sessionsjson.Generation, upgraded fileVersion) (*Downgrade, error) {
	if gen == sessionsjson.GenV22V25 {
		return &Downgrade{Generation: string(gen), DBOpens: true}, nil
	}
	if _, ok := generationOpenRules[gen]; !ok {
		return nil, nil
	}
	run, err := sim.open(ctx, gen, upgraded)
	if err != nil {
		return nil, err
	}
	return &Downgrade{Generation: string(gen), DBOpens: len(run.failed) == 0}, nil
}

// ftsRebuildRowsPerSecond is the measured rate of a full FTS rebuild — both tables of the
// inline layout, DELETE then INSERT … SELECT of every message, as the v11 step and the
// trigger repair run it — with modernc SQLite on a genhome home: 100,000 messages of 235
// characters on average in 16.2 s (15.0–20.5, five runs on 2 shared cores), rounded down
// (docs/performance.md, "FTS rebuild rate"). The sqlite3 3.40.1 shell, the C SQLite of the
// runtime's host, took 10.9 s, so estimates err long; messages larger than genhome's take
// longer per row.
const ftsRebuildRowsPerSecond = 6000

// EstimateRebuildSeconds estimates how long a full FTS rebuild of rows messages takes.
func EstimateRebuildSeconds(rows int64) float64 {
	return float64(rows) / ftsRebuildRowsPerSecond
}

// errorf wraps err with what the prediction was doing.
func errorf(what string, err error) error {
	return fmt.Errorf("predict schema steps: %s: %w", what, err)
}
