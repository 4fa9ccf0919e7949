package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// Reverts names the journal j undid: its Undoes, or for the undo of a restore (a swap back
// from a restore journal's stash) that restore's journal; "" for a journal of anything else.
func (j *Journal) Reverts() string {
	if j.Undoes != "" {
		return j.Undoes
	}
	if j.Swap != nil && strings.HasSuffix(j.Swap.Backup, stashSuffix) && j.Command == "undo" {
		return strings.TrimSuffix(j.Swap.Backup, stashSuffix) + ".json"
	}
	return ""
}

// Finish records that the undo journaled at path (j, written Pending) has landed whole: the
// journal is replaced by one without the flag, atomically (a crash leaves the pending one or
// the finished one). An error leaves it pending: undo --last then takes the journal it
// reverts again and finds nothing left to change, which finishes it.
func Finish(path string, j *Journal) error {
	if !j.Pending {
		return nil
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("finish journal %s: not the regular file written: %w", path, sessionsjson.ErrUnsafeToolPath)
	}
	done := *j
	done.Pending = false
	err := sessionsjson.WriteFileAtomicFrom(path, ".journal_*.tmp", func(w io.Writer) error { return encode(w, &done) })
	if err != nil && !errors.Is(err, sessionsjson.ErrNotDurable) {
		return fmt.Errorf("finish journal: %w", err)
	}
	j.Pending = false
	return nil
}

// PendingUndoers lists the pending undo journals in dir that revert the journal named
// reverted (matched by file name, as journal list matches them).
func PendingUndoers(dir, reverted string) []string {
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range names {
		if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), "-undo.json") { // NewPath's name for an undo
			continue
		}
		path := filepath.Join(dir, d.Name())
		if j, err := Read(path); err == nil && j.Pending && filepath.Base(j.Reverts()) == filepath.Base(reverted) {
			out = append(out, path)
		}
	}
	return out
}

// FinishPending finishes each pending undo journal of paths (from PendingUndoers, read again
// here under the caller's lock), warning of each it finished or could not.
func FinishPending(paths []string, warn func(string, ...any)) {
	for _, p := range paths {
		j, err := Read(p)
		if err == nil {
			err = Finish(p, j)
		}
		if err != nil {
			warn("%v", err)
			continue
		}
		warn("the undo journaled in %s had landed whole: marked finished", p)
	}
}
