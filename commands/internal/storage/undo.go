package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
)

// UndoRestore plans, and with apply performs, the undo of a restore's journal j (read from
// path): each file the restore put in place that still holds what it put there is swapped
// back from the saved backup (the journal's stash), each it removed is put back, each it never
// reached (a restore stopped part-way) is left alone; a file that holds anything else refuses
// the undo (exit 3) and nothing changes. The swap back is itself a restore, journaled and
// undoable, under the same refusals.
func UndoRestore(ctx context.Context, h *home.Home, path string, j *journal.Journal, apply bool) (repair.Outcome, *RestoreData, error) {
	if err := j.ForHome(h.Opts.Home); err != nil {
		return repair.Outcome{}, nil, failure.Mark(failure.Refused, err)
	}
	saved, err := checkSwapJournal(h, path, j)
	if err != nil {
		return repair.Outcome{}, nil, err
	}
	vd, findings, err := Verify(ctx, saved)
	if err != nil {
		return repair.Outcome{}, nil, err
	}
	if len(findings) > 0 {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, fmt.Errorf("undo: the saved backup %s fails verification (%s: %s); nothing was changed: the files the restore replaced cannot be put back from it (another backup of the home can be restored: `sessionctl restore`)", saved, findings[0].Subject, findings[0].Message))
	}
	h.Close() // pendingSwaps reads state.db's bytes: no connection of this process may have it open (statedb: connections)
	actions, err := pendingSwaps(h, j, vd.Manifest)
	if err != nil {
		return repair.Outcome{}, nil, err
	}
	d := &RestoreData{Backup: saved, Manifest: vd.Manifest}
	out := repair.Outcome{Changes: swapChanges(h.Opts.Home, actions, d)}
	if apply {
		removeStaged(h, j)
	}
	if !apply {
		return out, d, nil
	}
	if len(actions) == 0 {
		return out, d, finishUndoers(ctx, h, path)
	}
	res, err := swap(ctx, h, saved, vd.Manifest, actions, out.Changes)
	d.Saved = res.saved
	return res.Outcome, d, err
}

// removeStaged removes the copies a restore stopped part-way left staged beside their
// targets (its own temporary files; a re-run of the restore replaces them too).
func removeStaged(h *home.Home, j *journal.Journal) {
	for _, f := range j.Swap.Files {
		if f.Restored != nil {
			target := filepath.Join(h.Opts.Home.Dir, filepath.FromSlash(f.Path))
			_ = os.Remove(filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+stagedSuffix))
		}
	}
}

// checkSwapJournal refuses a restore journal whose stash is not its own, or that names a file
// a backup never holds, and returns the stash.
func checkSwapJournal(h *home.Home, path string, j *journal.Journal) (string, error) {
	abs, err := absPath(path)
	if err != nil {
		return "", err
	}
	if filepath.Dir(abs) != h.Opts.Home.JournalDir() || j.Swap.Saved != journal.StashDir(abs) {
		return "", failure.Mark(failure.Data, fmt.Errorf("journal %s: its saved backup %q is not its own stash in the home's journal directory", path, j.Swap.Saved))
	}
	for _, f := range j.Swap.Files {
		if !validRel(f.Path) {
			return "", failure.Mark(failure.Data, fmt.Errorf("journal %s names a file a backup never holds: %q", path, f.Path))
		}
	}
	return j.Swap.Saved, nil
}

// pendingSwaps returns what undoing the restore does now: for each file still holding what
// the restore put there (or still absent where it removed one), put the saved one back, or
// remove it where there was none. A file at its original state, or holding the saved copy (an
// earlier undo put it back), is left alone; any other state is a conflict.
func pendingSwaps(h *home.Home, j *journal.Journal, saved *Manifest) ([]fileAction, error) {
	var out []fileAction
	for _, f := range j.Swap.Files {
		p := filepath.Join(h.Opts.Home.Dir, filepath.FromSlash(f.Path))
		cur := fingerprint(p)
		switch {
		case sameFingerprint(cur, f.Original):
		case f.Original != nil && holdsRestored(p, cur, savedDigest(saved, f.Path)):
		case holdsRestored(p, cur, f.Restored):
			out = append(out, fileAction{rel: f.Path, remove: f.Original == nil})
		default:
			return nil, failure.Mark(failure.Refused, fmt.Errorf("%w: %s holds neither what the restore put there nor what it replaced", repair.ErrUndoConflict, f.Path))
		}
	}
	return out, nil
}

// savedDigest is the digest the saved backup's manifest gives rel, nil when it lacks it.
func savedDigest(m *Manifest, rel string) *journal.Digest {
	for _, f := range m.Files {
		if f.Path == rel {
			return &journal.Digest{Size: f.Size, SHA256: f.SHA256}
		}
	}
	return nil
}

// sameFingerprint reports whether a file is (or is absent) as the journal recorded it.
func sameFingerprint(cur, orig *journal.Fingerprint) bool {
	if cur == nil || orig == nil {
		return cur == nil && orig == nil
	}
	return *cur == *orig
}

// holdsRestored reports whether the file at p holds what the restore put there (absent where
// it removed the file).
func holdsRestored(p string, cur *journal.Fingerprint, want *journal.Digest) bool {
	if want == nil || cur == nil {
		return want == nil && cur == nil
	}
	if cur.Size != want.Size {
		return false
	}
	d, err := digestFile(p)
	return err == nil && d.SHA256 == want.SHA256
}

// finishUndoers settles, under the lock, the undos of the restore journaled at path that
// stopped part-way, once an undo of it found nothing left to swap back: they landed whole.
func finishUndoers(ctx context.Context, h *home.Home, path string) error {
	pending := journal.PendingUndoers(h.Opts.Home.JournalDir(), path)
	if len(pending) == 0 {
		return nil
	}
	release, err := repair.LockHome(ctx, h.Opts)
	if err != nil {
		return err
	}
	defer release()
	journal.FinishPending(pending, h.Opts.Warnf)
	return nil
}
