package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

func finalizeOrphansCommand() *cli.Command {
	return &cli.Command{
		Name:      "finalize-orphans",
		Usage:     "end orphaned compression continuations (the runtime's finalize_orphaned_compression_sessions)",
		ArgsUsage: " ",
		Flags:     repairFlags(&cli.StringFlag{Name: "min-age", Value: "7d", Usage: "only continuations started more than `D` ago"}),
		Action:    runFinalizeOrphans,
	}
}

func pruneGhostsCommand() *cli.Command {
	return &cli.Command{
		Name:      "prune-ghosts",
		Usage:     "delete empty, untitled, ended TUI sessions and their transcript files (the runtime's prune_empty_ghost_sessions)",
		ArgsUsage: " ",
		Flags:     repairFlags(&cli.StringFlag{Name: "min-age", Value: "24h", Usage: "only ghosts started more than `D` ago"}),
		Action:    runPruneGhosts,
	}
}

// startDBRepair is startRepair plus the checks every state.db repair shares.
func startDBRepair(c *cli.Context, command string) (*repairRun, float64, error) {
	if c.NArg() > 0 {
		return nil, 0, usagef("%s takes no arguments", command)
	}
	minAge, err := parseAge(c.String("min-age"))
	if err != nil {
		return nil, 0, usagef("--min-age: %v", err)
	}
	r, err := startRepair(c, command)
	if err != nil {
		return nil, 0, err
	}
	if r.v.db == nil {
		r.finish()
		return nil, 0, withCode(ExitData, fmt.Errorf("no state.db at %s", r.o.home.StateDB()))
	}
	return r, minAge, nil
}

func runFinalizeOrphans(c *cli.Context) error {
	r, minAge, err := startDBRepair(c, "finalize-orphans")
	if err != nil {
		return err
	}
	defer r.finish()
	res, err := executeFinalize(c.Context, r, minAge)
	if err != nil {
		return err
	}
	return r.report(res)
}

// executeFinalize plans, and with --apply performs, finalize-orphans.
func executeFinalize(ctx context.Context, r *repairRun, minAge float64) (result, error) {
	now := r.o.clock.Unix
	cands, err := r.v.db.FinalizeCandidates(ctx, now, minAge)
	if err != nil {
		return result{}, withCode(ExitData, fmt.Errorf("finalize-orphans: %w", err))
	}
	var ids []string
	var res result
	for _, o := range cands {
		if o.LiveLock != nil {
			res.findings = append(res.findings, Finding{"orphan.locked", sevInfo, o.Session.ID,
				"holds a live compression lock (" + o.LiveLock.Holder + "): skipped"})
			continue
		}
		ids = append(ids, o.Session.ID)
		res.changes = append(res.changes, finalizeChanges(o.Session.ID, now)...)
	}
	if !r.apply || len(ids) == 0 {
		return res, nil
	}
	if err := r.checkWritable(); err != nil {
		return res, err
	}
	return r.applyDB(ctx, res, func(db *statedb.DB) ([]statedb.RowChange, error) {
		out, err := db.FinalizeOrphans(ctx, ids, now, minAge)
		return append(out.Changes, out.Latch), err
	}, nil)
}

func finalizeChanges(id string, now float64) []Change {
	return []Change{
		{Store: "state.db", Target: "sessions/" + id + "/ended_at", Op: "set", Before: nil, After: now},
		{Store: "state.db", Target: "sessions/" + id + "/end_reason", Op: "set", Before: nil, After: statedb.EndReasonOrphanedCompression},
	}
}

func runPruneGhosts(c *cli.Context) error {
	r, minAge, err := startDBRepair(c, "prune-ghosts")
	if err != nil {
		return err
	}
	defer r.finish()
	res, err := executePrune(c.Context, r, minAge)
	if err != nil {
		return err
	}
	return r.report(res)
}

// executePrune plans, and with --apply performs, prune-ghosts.
func executePrune(ctx context.Context, r *repairRun, minAge float64) (result, error) {
	ghosts, err := r.v.db.GhostCandidates(ctx, r.o.clock.Unix, minAge)
	if err != nil {
		return result{}, withCode(ExitData, fmt.Errorf("prune-ghosts: %w", err))
	}
	var ids, files []string
	var res result
	for _, g := range ghosts {
		if len(g.ChildIDs) > 0 {
			res.findings = append(res.findings, Finding{"ghost.has-children", sevWarn, g.Session.ID,
				fmt.Sprintf("has %d child session(s): kept (the runtime's DELETE would fail on the foreign key)", len(g.ChildIDs))})
			continue
		}
		ids = append(ids, g.Session.ID)
		res.changes = append(res.changes, Change{Store: "state.db", Target: "sessions/" + g.Session.ID, Op: "delete", Before: toSessionRow(g.Session)})
		gf, err := statedb.TranscriptFiles(r.o.home.SessionsDir(), g.Session.ID)
		if err != nil {
			return res, withCode(ExitData, err)
		}
		for _, f := range gf {
			res.changes = append(res.changes, Change{Store: "sessions dir", Target: filepath.Base(f), Op: "remove file"})
		}
		files = append(files, gf...)
	}
	if !r.apply || len(ids) == 0 {
		return res, nil
	}
	if err := r.checkWritable(); err != nil {
		return res, err
	}
	return r.applyDB(ctx, res, func(db *statedb.DB) ([]statedb.RowChange, error) {
		out, err := db.PruneGhosts(ctx, ids, r.o.clock.Unix, minAge)
		return append(out.Changes, out.Latch), err
	}, files)
}

// applyDB runs a state.db repair and journals it: the files to remove after the commit are
// read first, the row images come from the transaction; transcript files go after the commit.
func (r *repairRun) applyDB(ctx context.Context, res result, run func(*statedb.DB) ([]statedb.RowChange, error), files []string) (result, error) {
	j := &journal{Storage: r.v.storage, Generation: string(r.v.gen)}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return res, withCode(ExitData, fmt.Errorf("read %s before removing it: %w", f, err))
		}
		j.Files = append(j.Files, fileImage{Path: f, Before: &data})
	}
	db, err := statedb.OpenWrite(ctx, r.o.home.StateDB())
	if err != nil {
		return res, withCode(ExitData, fmt.Errorf("open state.db for writing: %w", err))
	}
	defer db.Close()
	changes, err := run(db)
	if err != nil {
		return res, withCode(ExitWrite, fmt.Errorf("%s: %w (rolled back; nothing changed)", r.o.command, err))
	}
	j.Rows = changes
	path, err := writeJournal(r.o, j)
	if err != nil {
		return res, withCode(ExitWrite, fmt.Errorf("%w (the database change was committed; its images are lost)", err))
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			r.o.warn("remove %s: %v", f, err)
		}
	}
	res.applied, res.journal = true, path
	return res, nil
}
