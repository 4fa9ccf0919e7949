package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// The fault points of compact (Vacuum), selected by sessionsjson.FaultPointEnv.
const (
	FaultAfterOptimize = "compact.after-optimize" // optimize_fts() committed, VACUUM not yet run
	FaultAfterVacuum   = "compact.after-vacuum"   // VACUUM committed, the last checkpoint not yet run
)

// The statements of the runtime's vacuum(). The two TRUNCATE checkpoints are the runtime's
// own (b8663813b before VACUUM until ba80f3b86; 9cf4fe551 after it): compact runs them only
// while no other process holds the database, and nothing else in sessionctl checkpoints other
// than PASSIVE (TestNoJournalModeOrCheckpointWrites allows them in this file only).
const (
	checkpointPassive  = "PRAGMA wal_checkpoint(PASSIVE)"
	checkpointTruncate = "PRAGMA wal_checkpoint(TRUNCATE)"
	vacuumStatement    = "VACUUM"
)

// VacuumSteps lists the statements of a vacuum() rule after optimize_fts(), in order.
func VacuumSteps(rule sessionsjson.VacuumRule) []string {
	switch rule {
	case sessionsjson.VacuumCheckpointFirst:
		return []string{checkpointTruncate, vacuumStatement}
	case sessionsjson.VacuumCheckpointAround:
		return []string{checkpointPassive, vacuumStatement, checkpointTruncate}
	}
	return nil
}

// VacuumResult is what Vacuum did.
type VacuumResult struct {
	// Optimized lists the FTS tables optimize_fts() merged.
	Optimized []string
	// Skipped maps an FTS table of the rule that the file has but that was not optimized to
	// why: not queryable here (its tokenizer not loadable: the runtime without it skips it
	// too) or the error of its 'optimize' (the runtime logs it and goes on). A table the file
	// lacks is passed over silently, as the runtime does.
	Skipped map[string]string
	// Checkpointed: a checkpoint before VACUUM changed the files (WAL frames copied into the
	// database, a WAL holding frames truncated), or failed so that whether it did is not known.
	// The database reads the same, but its bytes changed: a VACUUM that fails after it leaves
	// the home changed.
	Checkpointed bool
	// Vacuumed: VACUUM committed.
	Vacuumed bool
	// Interrupted: an optimize or VACUUM failed part-way and state.db still holds its hot
	// journal (ErrInterrupted): its bytes changed until SQLite rolls it back.
	Interrupted bool
}

// ErrNoVacuum: the generation has no vacuum() (sessionsjson.VacuumNone).
var ErrNoVacuum = errors.New("the runtime of this generation has no vacuum()")

// Vacuum runs the runtime's SessionDB.vacuum() of rule on the database at path, over a
// connection of its own (busy timeout 1 s, temporary files on disk, never the journal mode):
// optimize_fts() — `INSERT INTO t(t) VALUES('optimize')` on each of fts that is queryable,
// each its own transaction, a failure noted and passed over — then the rule's checkpoints and
// VACUUM (VacuumSteps; a checkpoint's failure is ignored, as the runtime does). The caller
// makes sure no other process holds the database: VACUUM needs it alone, and a TRUNCATE
// checkpoint would race a live writer (ba80f3b86). An error after an optimize committed comes
// with the result of what was done.
func Vacuum(ctx context.Context, path string, rule sessionsjson.VacuumRule, fts []string) (VacuumResult, error) {
	res := VacuumResult{Skipped: map[string]string{}}
	steps := VacuumSteps(rule)
	if steps == nil {
		return res, ErrNoVacuum
	}
	db, closeDB, err := openMaintenance(path)
	if err != nil {
		return res, err
	}
	defer closeDB()
	for _, t := range fts {
		switch err := optimizeFTS(ctx, db, t); {
		case errors.Is(err, errAbsent):
		case errors.Is(err, errNotQueryable):
			res.Skipped[t] = "not queryable here (its tokenizer cannot be loaded): not optimized, as the runtime without it does"
		case err != nil:
			if serr := settle(ctx, db, path); serr != nil {
				res.Interrupted = true
				return res, fmt.Errorf("optimize %s: %w: %w", t, err, serr)
			}
			res.Skipped[t] = "optimize failed: " + err.Error()
		default:
			res.Optimized = append(res.Optimized, t)
		}
	}
	faultPoint(FaultAfterOptimize)
	for _, stmt := range steps {
		if stmt != vacuumStatement {
			changed := checkpoint(ctx, db, stmt)
			res.Checkpointed = res.Checkpointed || (changed && !res.Vacuumed)
			continue
		}
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			if serr := settle(ctx, db, path); serr != nil {
				res.Interrupted = true
				return res, fmt.Errorf("VACUUM: %w: %w", err, serr)
			}
			return res, fmt.Errorf("VACUUM: %w", err)
		}
		res.Vacuumed = true
		faultPoint(FaultAfterVacuum)
	}
	return res, nil
}

// checkpoint runs one of vacuum()'s checkpoints, ignoring its failure as the runtime does,
// and reports whether it may have changed the files: frames copied into the database, or
// (TRUNCATE) a WAL that held frames emptied; a checkpoint that failed may have copied some.
// In rollback-journal mode a checkpoint does nothing.
func checkpoint(ctx context.Context, db *sql.DB, stmt string) (changed bool) {
	var busy, frames, copied int64 // the WAL's frames (-1 when not in WAL mode), those copied
	if err := db.QueryRowContext(ctx, stmt).Scan(&busy, &frames, &copied); err != nil {
		return true
	}
	return copied > 0 || (stmt == checkpointTruncate && busy == 0 && frames > 0)
}

// errNotQueryable: `SELECT 1 FROM t LIMIT 0` fails (the runtime's _fts_table_exists).
var errNotQueryable = errors.New("not queryable")

// errAbsent: the file has no such table (the runtime's probe fails the same way, silently).
var errAbsent = errors.New("absent")

// optimizeFTS merges one FTS5 index into one segment, when it is queryable.
func optimizeFTS(ctx context.Context, db *sql.DB, table string) error {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return errAbsent
	}
	q := quoteIdent(table)
	if _, err := db.ExecContext(ctx, "SELECT 1 FROM "+q+" LIMIT 0"); err != nil {
		return errNotQueryable
	}
	_, err := db.ExecContext(ctx, "INSERT INTO "+q+"("+q+") VALUES('optimize')")
	return err
}

// openMaintenance opens the existing database at path read-write for compact: one
// connection, the writer's busy timeout, and SQLite's default temporary storage (on disk:
// VACUUM builds its copy there, which must not be held in memory). The connection counts
// among this process's (connections) until closeDB.
func openMaintenance(path string) (db *sql.DB, closeDB func() error, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, err
	}
	first := connections.add(abs)
	if err := checkFirst(abs, first); err != nil {
		connections.done(abs)
		return nil, nil, fmt.Errorf("state.db %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", "rw")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", writeBusyTimeoutMS))
	if db, err = sql.Open("sqlite", "file:"+(&url.URL{Path: abs}).EscapedPath()+"?"+q.Encode()); err != nil {
		connections.done(abs)
		return nil, nil, err
	}
	db.SetMaxOpenConns(1)
	return db, func() error { defer connections.done(abs); return db.Close() }, nil
}

// VacuumInto writes a compacted copy of the database to dst (`VACUUM INTO`), which must not
// exist; the database itself is only read. SQLite writes the copy in rollback-journal mode
// and does not sync it: the caller syncs it.
func (db *DB) VacuumInto(ctx context.Context, dst string) error {
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s exists: %w", dst, fs.ErrExist)
	}
	_, err := db.sql.ExecContext(ctx, "VACUUM INTO ?", dst)
	return err
}
