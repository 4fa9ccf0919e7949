package commands

import (
	"context"
	"fmt"
	"github.com/sessionctl/sessionctl/sessionsjson"
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

// dbRepairAvailable refuses a state.db repair on a home without state.db or written by a
// generation that did not have the runtime method (r0418: both arrived in May 2026).
func dbRepairAvailable(v *homeView, command string) error {
	if v.db == nil {
		return withCode(ExitData, fmt.Errorf("no state.db at %s", v.opts.home.StateDB()))
	}
	if v.gen == sessionsjson.GenR0418 {
		return withCode(ExitData, fmt.Errorf("%s: generation %s (schema v%d) predates the runtime's own repair; its rules do not apply here", command, v.gen, v.schema.Version))
	}
	return nil
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
	r, err := startRepairWith(c, command, loadDBView)
	if err != nil {
		return nil, 0, err
	}
	if err := dbRepairAvailable(r.v, command); err != nil {
		r.finish()
		return nil, 0, err
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
	return r.applyDB(ctx, res, func(db *statedb.DB, hook statedb.CommitHook) error {
		_, err := db.FinalizeOrphans(ctx, ids, now, minAge, hook)
		return err
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
	var deletable []statedb.Ghost
	var res result
	for _, g := range ghosts {
		if len(g.ChildIDs) > 0 {
			res.findings = append(res.findings, Finding{"ghost.has-children", sevWarn, g.Session.ID,
				fmt.Sprintf("has %d child session(s): kept (the runtime's DELETE would fail on the foreign key)", len(g.ChildIDs))})
			continue
		}
		deletable = append(deletable, g)
		ids = append(ids, g.Session.ID)
	}
	transcripts, err := statedb.TranscriptFiles(r.o.home.SessionsDir(), ids)
	if err != nil {
		return res, withCode(ExitData, err)
	}
	for _, g := range deletable {
		res.changes = append(res.changes, Change{Store: "state.db", Target: "sessions/" + g.Session.ID, Op: "delete", Before: toSessionRow(g.Session)})
		for _, f := range transcripts[g.Session.ID] {
			res.changes = append(res.changes, Change{Store: "sessions dir", Target: filepath.Base(f), Op: "remove file"})
			files = append(files, f)
		}
	}
	if !r.apply || len(ids) == 0 {
		return res, nil
	}
	if err := r.checkWritable(); err != nil {
		return res, err
	}
	return r.applyDB(ctx, res, func(db *statedb.DB, hook statedb.CommitHook) error {
		_, err := db.PruneGhosts(ctx, ids, r.o.clock.Unix, minAge, hook)
		return err
	}, files)
}

// applyDB runs a state.db repair. The journal (row images from inside the transaction, plus
// the transcript files to remove) is written before the transaction commits; if the
// transaction fails it is removed again. Transcript files go after the commit.
func (r *repairRun) applyDB(ctx context.Context, res result, run func(*statedb.DB, statedb.CommitHook) error, files []string) (result, error) {
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
	path := journalPath(r.o)
	err = run(db, func(changes []statedb.RowChange) error {
		j.Rows = changes
		return writeJournalAt(r.o, path, j)
	})
	if err != nil {
		_ = os.Remove(path)
		return res, withCode(ExitWrite, fmt.Errorf("%s: %w (rolled back; nothing changed)", r.o.command, err))
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			r.o.warn("remove %s: %v", f, err)
		}
	}
	res.applied, res.journal = true, path
	return res, nil
}
