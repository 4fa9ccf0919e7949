// Package journalset manages a home's journals as a whole: the list (what each changed, its
// size with its stash and row store, whether an undo reverted it), one journal described,
// the newest one still to undo, and the prune of old ones. It never prints.
package journalset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// Item is one journal of a home.
type Item struct {
	Path    string `json:"path"`
	Time    string `json:"time"` // when it was written (created_at), "" when it cannot be read
	Command string `json:"command"`
	Home    string `json:"home"`
	Changes int    `json:"changes"`
	// Bytes counts the journal, its stash (<journal>.files: moved transcripts, a restore's
	// saved files) and its row store (<journal>.rows.db).
	Bytes int64 `json:"bytes"`
	// Undone: a finished undo journal names this one (Undoes) and was not undone itself.
	Undone   bool   `json:"undone"`
	UndoneBy string `json:"undone_by"`
	Undoes   string `json:"undoes"` // an undo journal: the journal it reverted
	// Pending: an undo journal whose undo has not finished (stopped part-way): the journal it
	// reverts is not undone yet, and undo of that journal finishes it.
	Pending bool `json:"pending"`
	// Torn: the journal is cut short (journal.ErrTorn, Error says so): it names a change that
	// never started; undo of it (or undo --last, while it is the newest) moves it aside.
	Torn  bool   `json:"torn"`
	Error string `json:"error,omitempty"`

	j       *journal.Journal
	created time.Time
}

// Journal returns the journal read, nil when it could not be.
func (it *Item) Journal() *journal.Journal { return it.j }

// List reads the journals of home, oldest first (their names start with the UTC time they
// were written). A journal that cannot be read is listed with Error. Nothing is followed:
// a symbolic link as the tool or journal directory, or as a journal, is refused.
func List(home sessionsjson.Home) ([]*Item, error) {
	if err := home.Validate(); err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("home %s: %w", home.Dir, err))
	}
	dir := home.JournalDir()
	for _, d := range []string{home.ToolDir(), dir} {
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, failure.Mark(failure.Refused, fmt.Errorf("%s is a symbolic link: %w", d, sessionsjson.ErrUnsafeToolPath))
		}
	}
	names, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("read journal directory: %w", err))
	}
	var out []*Item
	for _, d := range names {
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".json") {
			out = append(out, read(filepath.Join(dir, d.Name())))
		}
	}
	markUndone(out)
	return out, nil
}

// read describes the journal at path.
func read(path string) *Item {
	it := &Item{Path: path, Bytes: Bytes(path)}
	j, err := journal.Read(path)
	if err != nil {
		it.Error, it.Torn = err.Error(), errors.Is(err, journal.ErrTorn)
		return it
	}
	it.j, it.Time, it.Command, it.Home, it.Undoes, it.Pending = j, j.CreatedAt, j.Command, j.Home, j.Reverts(), j.Pending
	it.created, _ = time.Parse(time.RFC3339Nano, j.CreatedAt)
	it.Changes = len(repair.JournalChanges(j))
	return it
}

// markUndone sets Undone on each journal a finished undo journal names that is not undone
// itself (the undo of an undo puts the change back). Journals are matched by name: a home moved
// keeps its journal names.
func markUndone(items []*Item) {
	undoers := map[string][]*Item{}
	for _, it := range items {
		if it.Undoes != "" && !it.Pending {
			undoers[filepath.Base(it.Undoes)] = append(undoers[filepath.Base(it.Undoes)], it)
		}
	}
	memo := map[*Item]bool{}
	var undone func(it *Item) bool
	undone = func(it *Item) bool {
		if v, ok := memo[it]; ok {
			return v
		}
		memo[it] = false // a cycle (edited journals) ends here
		for _, u := range undoers[filepath.Base(it.Path)] {
			if !undone(u) {
				memo[it], it.UndoneBy = true, u.Path
			}
		}
		return memo[it]
	}
	for _, it := range items {
		it.Undone = undone(it)
	}
}

// Bytes is the size of a journal with its stash and its row store.
func Bytes(path string) int64 {
	var n int64
	for _, p := range append([]string{path}, Companions(path)...) {
		_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	return n
}

// Companions are the files a journal keeps beside it: its stash directory and its row store.
func Companions(path string) []string {
	return []string{journal.StashDir(path), journal.RowStorePath(path)}
}

// ErrNoJournal says no journal of the home is left to undo.
var ErrNoJournal = errors.New("no journal to undo")

// Last returns the newest journal of the home that undo --last reverts: not an undo journal
// itself (so that undo --last again goes one further back), not undone, and holding
// something undo restores (not a compact's or an fts rebuild's record). A newer journal that
// cannot be read refuses it: which change is the last is then not known; except a torn one
// (Torn), which names a change that never started: it is the one returned, for undo to
// settle (journal.ReadOrTorn), and undo --last then goes on to the one before.
func Last(home sessionsjson.Home) (*Item, error) {
	items, err := List(home)
	if err != nil {
		return nil, err
	}
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		switch {
		case it.Torn:
			return it, nil
		case it.j == nil:
			return nil, failure.Mark(failure.Data, fmt.Errorf("journal %s cannot be read (%s): name the journal to undo (sessionctl journal list)", it.Path, it.Error))
		case it.Undone || it.Undoes != "" || it.Command == "undo" || !restorable(it.j):
			continue
		}
		return it, nil
	}
	return nil, failure.Mark(failure.Data, fmt.Errorf("%w in %s (sessionctl journal list)", ErrNoJournal, home.JournalDir()))
}

// restorable reports whether undo has anything to restore from j.
func restorable(j *journal.Journal) bool {
	return len(j.Routing) > 0 || len(j.Files) > 0 || len(j.Rows) > 0 || j.RowStore != "" || j.Swap != nil
}

// Find returns the journal named name: a path, or the name of a journal in the home's
// journal directory.
func Find(home sessionsjson.Home, name string) string {
	if _, err := os.Lstat(name); err == nil || strings.ContainsRune(name, filepath.Separator) {
		return name
	}
	return filepath.Join(home.JournalDir(), name)
}
