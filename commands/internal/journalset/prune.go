package journalset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// PruneNote is what a prune of journals means, said with every plan and every run.
const PruneNote = "a pruned journal is gone with its stash and row store: the changes it records can no longer be undone"

// Pruned is what journal prune selects (a plan) or removed (applied).
type Pruned struct {
	OlderThanSeconds float64 `json:"older_than_seconds"`
	Cutoff           string  `json:"cutoff"` // now − D, RFC 3339 UTC: journals written before it go
	Keep             int     `json:"keep"`   // the newest journals never removed
	Journals         []*Item `json:"journals"`
	Bytes            int64   `json:"bytes"`
	Kept             int     `json:"kept"` // journals left
	Note             string  `json:"note"`
}

// Prune plans, and with apply performs under sessionctl's lock, the removal of the journals
// of home written before now − olderThan, each with its stash and row store, never one of the
// keep newest, never one that cannot be read. Removing a journal is not itself journaled: it
// is the record undo would need. A removal that fails part-way is an Incomplete listing what
// went.
func Prune(ctx context.Context, o home.Options, now time.Time, olderThan float64, keep int, apply bool) (repair.Outcome, *Pruned, error) {
	h := o.Home
	p, err := plan(h, now, olderThan, keep)
	if err != nil || !apply || len(p.Journals) == 0 {
		return repair.Outcome{Changes: pruneChanges(p)}, p, err
	}
	release, err := home.Lock(ctx, o)
	if err != nil {
		return repair.Outcome{Changes: pruneChanges(p)}, p, err
	}
	defer release()
	if p, err = plan(h, now, olderThan, keep); err != nil { // again, under the lock
		return repair.Outcome{}, p, err
	}
	return removeAll(h, p)
}

// plan selects the journals to remove.
func plan(h sessionsjson.Home, now time.Time, olderThan float64, keep int) (*Pruned, error) {
	cutoff := now.Add(-time.Duration(olderThan * float64(time.Second)))
	p := &Pruned{OlderThanSeconds: olderThan, Cutoff: cutoff.UTC().Format(time.RFC3339Nano), Keep: keep, Journals: []*Item{}, Note: PruneNote}
	items, err := List(h)
	if err != nil {
		return p, err
	}
	for i, it := range items {
		if it.j != nil && it.created.Before(cutoff) && i < len(items)-keep {
			p.Journals = append(p.Journals, it)
			p.Bytes += it.Bytes
		}
	}
	p.Kept = len(items) - len(p.Journals)
	return p, nil
}

// removeAll removes each planned journal: the journal first (a companion left behind is
// space, never a journal undo would trust), then its stash and row store.
func removeAll(h sessionsjson.Home, p *Pruned) (repair.Outcome, *Pruned, error) {
	planned := pruneChanges(p)
	done := repair.Outcome{Applied: true}
	for i, it := range p.Journals {
		if err := os.Remove(it.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if i == 0 {
				return repair.Outcome{Changes: planned}, p, failure.Mark(failure.Write, fmt.Errorf("journal prune: %w (nothing removed)", err))
			}
			return done, p, &repair.Incomplete{Outcome: done, Err: fmt.Errorf("journal prune: %w", err)}
		}
		done.Changes = append(done.Changes, planned[i])
		for _, c := range Companions(it.Path) {
			if err := os.RemoveAll(c); err != nil {
				return done, p, &repair.Incomplete{Outcome: done, Err: fmt.Errorf("journal prune: %w", err)}
			}
		}
	}
	if err := journal.SyncDirs(h.JournalDir()); err != nil {
		return done, p, &repair.Incomplete{Outcome: done, Err: err}
	}
	return done, p, nil
}

// pruneChanges lists one change per journal p removes.
func pruneChanges(p *Pruned) []repair.Change {
	if p == nil {
		return nil
	}
	out := make([]repair.Change, 0, len(p.Journals))
	for _, it := range p.Journals {
		out = append(out, repair.Change{Store: "journal", Target: it.Path, Op: "remove",
			Before: map[string]any{"command": it.Command, "time": it.Time, "bytes": it.Bytes, "undone": it.Undone}, After: nil})
	}
	return out
}
