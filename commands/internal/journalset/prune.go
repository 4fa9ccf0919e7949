package journalset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	// RowStores are the row stores that go with the journals: each one's own, and the one an
	// undo journal among them names (its prune's), unless a kept journal names it.
	RowStores []string `json:"row_stores"`
	// RowStoresKept are the row stores of journals that go which a kept journal names (the
	// undo of a prune names its prune's store, and its own undo reads the rows there): they
	// stay, and their bytes are not counted.
	RowStoresKept []string `json:"row_stores_kept"`
	// StashesKept are the stashes of journals that go which a kept journal mentions (an undo's
	// file images point into the stash of the journal it reverts): they stay, and their bytes
	// are not counted.
	StashesKept []string `json:"stashes_kept"`
	// Orphans are the stash directories no journal names and the temporary files an undo's
	// journal rewrite left, older than the cutoff (journal.OrphanStashes): they go too.
	Orphans []string `json:"orphans"`
	Bytes   int64    `json:"bytes"` // of the journals, their stashes and RowStores
	Kept    int      `json:"kept"`  // journals left
	Note    string   `json:"note"`
}

// Prune plans, and with apply performs under sessionctl's lock, the removal of the journals
// of home written before now − olderThan, each with its stash and row store, never one of the
// keep newest, never one that cannot be read, never a row store a kept journal names.
// Removing a journal is not itself journaled: it is the record undo would need. A removal
// that fails part-way is an Incomplete listing what went.
func Prune(ctx context.Context, o home.Options, now time.Time, olderThan float64, keep int, apply bool) (repair.Outcome, *Pruned, error) {
	h := o.Home
	p, err := plan(h, now, olderThan, keep)
	if err != nil || !apply || len(p.Journals)+len(p.RowStores)+len(p.Orphans) == 0 {
		return repair.Outcome{Changes: pruneChanges(p)}, p, err
	}
	release, err := repair.LockHome(ctx, o)
	if err != nil {
		return repair.Outcome{Changes: pruneChanges(p)}, p, err
	}
	defer release()
	if p, err = plan(h, now, olderThan, keep); err != nil { // again, under the lock
		return repair.Outcome{}, p, err
	}
	return removeAll(h, p)
}

// plan selects the journals to remove, and the row stores that go with them.
func plan(h sessionsjson.Home, now time.Time, olderThan float64, keep int) (*Pruned, error) {
	cutoff := now.Add(-time.Duration(olderThan * float64(time.Second)))
	p := &Pruned{OlderThanSeconds: olderThan, Cutoff: cutoff.UTC().Format(time.RFC3339Nano), Keep: keep, Journals: []*Item{},
		RowStores: []string{}, RowStoresKept: []string{}, StashesKept: []string{}, Orphans: []string{}, Note: PruneNote}
	items, err := List(h)
	if err != nil {
		return p, err
	}
	kept := map[string]bool{} // file names
	for i, it := range items {
		if it.j != nil && it.created.Before(cutoff) && i < len(items)-keep {
			p.Journals = append(p.Journals, it)
		} else {
			kept[filepath.Base(it.Path)] = true
		}
	}
	p.Kept = len(kept)
	named, err := journal.NamedRowStores(h.JournalDir(), kept)
	if err != nil {
		return p, failure.Mark(failure.Data, fmt.Errorf("journal prune: %w", err))
	}
	p.sortRowStores(h.JournalDir(), named)
	if err := p.keepMentionedStashes(h, kept); err != nil {
		return p, failure.Mark(failure.Data, fmt.Errorf("journal prune: %w", err))
	}
	if err := p.addOrphanRowStores(h, cutoff); err != nil {
		return p, failure.Mark(failure.Data, fmt.Errorf("journal prune: %w", err))
	}
	if err := p.addOrphanStashes(h, cutoff); err != nil {
		return p, failure.Mark(failure.Data, fmt.Errorf("journal prune: %w", err))
	}
	p.Bytes = p.bytes()
	if len(p.RowStoresKept) > 0 {
		p.Note += "; kept, as a kept journal still names them (its undo reads the rows there): " + strings.Join(p.RowStoresKept, ", ")
	}
	if len(p.StashesKept) > 0 {
		p.Note += "; kept, as a kept journal's files point into them (its undo moves them there): " + strings.Join(p.StashesKept, ", ")
	}
	return p, nil
}

// sortRowStores sorts the row stores of the journals p removes, each one's own and the one
// it names, into RowStores and, where a kept journal names them (named: file names in the
// journal directory dir), RowStoresKept.
func (p *Pruned) sortRowStores(dir string, named map[string]bool) {
	seen := map[string]bool{}
	for _, it := range p.Journals {
		for _, store := range []string{journal.RowStorePath(it.Path), journal.RowStoreIn(dir, it.j)} {
			if store == "" || seen[store] || fileSize(store) < 0 {
				continue
			}
			seen[store] = true
			if named[filepath.Base(store)] {
				p.RowStoresKept = append(p.RowStoresKept, store)
			} else {
				p.RowStores = append(p.RowStores, store)
			}
		}
	}
}

// addOrphanRowStores adds to RowStores the row stores older than cutoff that no journal names:
// what an earlier journal prune left when it removed a journal and then could not remove its
// store (removeAll removes the journal first), or what a prune stopped between its row store
// and its journal left (journal.OrphanRowStores). A rerun finishes the removal.
func (p *Pruned) addOrphanRowStores(h sessionsjson.Home, cutoff time.Time) error {
	orphans, err := journal.OrphanRowStores(h)
	if err != nil {
		return err
	}
	for _, store := range orphans {
		fi, err := os.Lstat(store)
		if err == nil && fi.ModTime().Before(cutoff) && !slices.Contains(p.RowStores, store) {
			p.RowStores = append(p.RowStores, store)
		}
	}
	return nil
}

// keepMentionedStashes sets StashesKept: the stashes of the journals p removes that a kept
// journal (kept: file names) mentions.
func (p *Pruned) keepMentionedStashes(h sessionsjson.Home, kept map[string]bool) error {
	var names []string
	for _, it := range p.Journals {
		if fi, err := os.Lstat(journal.StashDir(it.Path)); err == nil && fi.IsDir() {
			names = append(names, filepath.Base(journal.StashDir(it.Path)))
		}
	}
	if len(names) == 0 {
		return nil
	}
	dir, entries, err := journal.JournalEntries(h)
	if err != nil {
		return err
	}
	mentioned, err := journal.Mentioned(dir, entries, names, func(name string) bool { return kept[name] })
	if err != nil {
		return err
	}
	for _, n := range names {
		if mentioned[n] {
			p.StashesKept = append(p.StashesKept, filepath.Join(dir, n))
		}
	}
	return nil
}

// addOrphanStashes adds to Orphans the stash directories and temporary files no journal names
// (journal.OrphanStashes) last modified before cutoff. The stashes of the journals p removes
// are not among them: their journals still name them.
func (p *Pruned) addOrphanStashes(h sessionsjson.Home, cutoff time.Time) error {
	going := map[string]bool{}
	for _, it := range p.Journals {
		going[filepath.Base(it.Path)] = true
	}
	orphans, err := journal.OrphanStashes(h, going)
	if err != nil {
		return err
	}
	for _, o := range orphans {
		if fi, err := os.Lstat(o); err == nil && fi.ModTime().Before(cutoff) {
			p.Orphans = append(p.Orphans, o)
		}
	}
	return nil
}

// bytes counts what p removes: each journal with its stash, RowStores and Orphans.
func (p *Pruned) bytes() int64 {
	var n int64
	for _, it := range p.Journals {
		n += it.Bytes - max(fileSize(journal.RowStorePath(it.Path)), 0) // Item.Bytes counts its own store
		if slices.Contains(p.StashesKept, journal.StashDir(it.Path)) {
			n -= Bytes(journal.StashDir(it.Path))
		}
	}
	for _, store := range p.RowStores {
		n += fileSize(store)
	}
	for _, o := range p.Orphans {
		n += Bytes(o)
	}
	return n
}

// fileSize is the size of the regular file at path, -1 when there is none.
func fileSize(path string) int64 {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

// removeAll removes each planned journal, the journal first (a companion left behind is
// space, never a journal undo would trust), then its stash; then the row stores that go.
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
		if slices.Contains(p.StashesKept, journal.StashDir(it.Path)) {
			continue
		}
		if err := os.RemoveAll(journal.StashDir(it.Path)); err != nil {
			return done, p, &repair.Incomplete{Outcome: done, Err: fmt.Errorf("journal prune: %w", err)}
		}
	}
	for _, store := range p.RowStores {
		if err := journal.RemoveRowStore(store); err != nil {
			return done, p, &repair.Incomplete{Outcome: done, Err: fmt.Errorf("journal prune: %w", err)}
		}
	}
	for _, o := range p.Orphans {
		if err := os.RemoveAll(o); err != nil {
			return done, p, &repair.Incomplete{Outcome: done, Err: fmt.Errorf("journal prune: %w", err)}
		}
	}
	if err := journal.SyncDirs(h.JournalDir()); err != nil {
		return done, p, &repair.Incomplete{Outcome: done, Err: err}
	}
	return done, p, nil
}

// pruneChanges lists one change per journal p removes, then one per leftover (Orphans).
func pruneChanges(p *Pruned) []repair.Change {
	if p == nil {
		return nil
	}
	out := make([]repair.Change, 0, len(p.Journals)+len(p.Orphans))
	for _, it := range p.Journals {
		out = append(out, repair.Change{Store: "journal", Target: it.Path, Op: "remove",
			Before: map[string]any{"command": it.Command, "time": it.Time, "bytes": it.Bytes, "undone": it.Undone}, After: nil})
	}
	for _, o := range p.Orphans {
		out = append(out, repair.Change{Store: "journal", Target: o, Op: "remove leftover", Before: map[string]any{"bytes": Bytes(o)}, After: nil})
	}
	return out
}
