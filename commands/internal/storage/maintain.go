package storage

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// BackupStep is maintain's --backup DIR (nil when dir is ""): a backup into a new <UTC
// time> directory in dir, as `backup --to DIR` takes it, before any write of the run. As a
// plan it names the directory and writes nothing. A dir that exists and is no directory is
// refused here, before the run (exit 4); a backup that cannot be taken stops the run before
// anything in the home was written (its error's exit code).
func BackupStep(dir string) (*repair.HygieneStep, error) {
	if dir == "" {
		return nil, nil
	}
	to, err := absPath(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(to); err == nil && !st.IsDir() {
		return nil, failure.Mark(failure.Data, fmt.Errorf("--backup %s: not a directory", dir))
	}
	return &repair.HygieneStep{Name: "backup", Run: func(ctx context.Context, r *repair.Run) (repair.Outcome, any, error) {
		if r.Apply {
			return withData(Backup(ctx, r.H, BackupOptions{To: to}))
		}
		return repair.Outcome{Changes: []repair.Change{{Store: "backup", Target: to, Op: "write backup"}}}, nil, nil
	}}, nil
}

// withData passes an engine result on with its data as any (nil stays nil).
func withData[T any](out repair.Outcome, d *T, err error) (repair.Outcome, any, error) {
	if d == nil {
		return out, nil, err
	}
	return out, d, err
}

// CompactStep is maintain's --compact (nil when on is false): the runtime's vacuum() as
// `compact` runs it, under maintain's lock. Where compact --apply would refuse — a gateway
// running, another process holding state.db, the runtime's repair lock or ledger, too little
// free space — or the generation has no vacuum(), the step is skipped with
// maintain.compact-skipped and the rest of the run stands.
func CompactStep(on bool) *repair.HygieneStep {
	if !on {
		return nil
	}
	return &repair.HygieneStep{Name: "compact", Run: compactStep}
}

// compactStep plans compact and, when applying and nothing refuses it, runs it.
func compactStep(ctx context.Context, r *repair.Run) (repair.Outcome, any, error) {
	h := r.H
	if h.DB == nil { // nothing to compact: the step does not exist here
		return repair.Outcome{}, nil, &repair.StepSkipped{}
	}
	if err := noVacuum(h); err != nil {
		return repair.Outcome{}, nil, compactSkipped(check.Info, err)
	}
	out, d, err := Compact(ctx, h, false, "")
	if err != nil || !r.Apply {
		return withData(out, d, err)
	}
	if err := refuseCompact(h, d); err != nil {
		if h.Gateway.Method == sessionsjson.MethodUnsupported { // the advice to use --force is compact's
			err = fmt.Errorf("%w; maintain has no --force: give `sessionctl compact --apply` --force once it is stopped", err)
		}
		sev := check.Warn
		if class, _ := failure.ClassOf(err); class == failure.Refused { // a process holds it: the usual state
			sev = check.Info
		}
		return repair.Outcome{}, nil, compactSkipped(sev, err)
	}
	out, err = compactLocked(ctx, h, d)
	return out, d, err
}

// compactSkipped is the skip of the compact step, saying why.
func compactSkipped(sev check.Severity, why error) error {
	return &repair.StepSkipped{Finding: check.Finding{Check: check.MaintainCompactSkipped, Severity: sev, Subject: "compact",
		Message: "skipped: " + strings.Join(strings.Fields(why.Error()), " ")}}
}
