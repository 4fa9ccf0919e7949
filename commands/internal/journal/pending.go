package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	err := sessionsjson.WriteFileAtomicFrom(path, finishTemp, func(w io.Writer) error { return encode(w, &done) })
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

// finishTemp is the pattern of Finish's temporary file in the journal directory.
const finishTemp = ".journal_*.tmp"

// SavedTemp starts the name of the temporary directory a restore fills, in the journal
// directory and under sessionctl's lock, with the files it replaces, before it is renamed to
// the journal's stash (<journal>.files): one a crash leaves is sessionctl's, never needed.
const SavedTemp = ".tmp-backup-"

// journalName matches the name NewPath gives a journal, without its .json: only a stash of
// such a name is sessionctl's to remove.
var journalName = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[a-z-]+$`)

// OrphanStashes lists what in the home's journal directory no journal names: stash
// directories (<name>.files, of a journal's name) whose journal is gone and that no other
// journal mentions — what a restore stopped between saving the current files and writing its
// journal leaves, or a journal prune that removed a journal and then could not remove its
// stash — and the temporary files (Write's, Finish's) and directories (SavedTemp) a crash
// left. Nothing in the home depends on them.
// Nothing is followed. The journals named in going (file names: a journal prune's, removed
// with the same run) do not keep a stash.
func OrphanStashes(home sessionsjson.Home, going map[string]bool) ([]string, error) {
	dir, entries, err := journalEntries(home)
	if err != nil {
		return nil, err
	}
	var out, stashes []string
	for _, e := range entries {
		name := e.Name()
		if temp, _ := filepath.Match(finishTemp, name); (temp && e.Type().IsRegular()) || (strings.HasPrefix(name, SavedTemp) && e.IsDir()) {
			out = append(out, filepath.Join(dir, name))
		}
		if stem, ok := strings.CutSuffix(name, stashSuffix); ok && e.IsDir() && journalName.MatchString(stem) && !isRegular(filepath.Join(dir, stem+".json")) {
			stashes = append(stashes, name)
		}
	}
	if len(stashes) == 0 {
		return out, nil
	}
	mentioned, err := Mentioned(dir, entries, stashes, func(name string) bool { return !going[name] })
	if err != nil {
		return nil, err
	}
	for _, s := range slices.DeleteFunc(stashes, func(s string) bool { return mentioned[s] }) {
		out = append(out, filepath.Join(dir, s))
	}
	slices.Sort(out)
	return out, nil
}

// isRegular reports whether path is a regular file (not followed).
func isRegular(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// Mentioned reports which of names (stash directory names) a journal among entries (the
// journal directory dir's) that by accepts mentions: an undo's file images point into the
// stash of the journal it reverts, so that stash stays while such a journal does.
func Mentioned(dir string, entries []os.DirEntry, names []string, by func(journal string) bool) (map[string]bool, error) {
	out := map[string]bool{}
	for _, e := range entries {
		if len(out) == len(names) || len(names) == 0 {
			break
		}
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") || !by(e.Name()) {
			continue
		}
		data, err := sessionsjson.ReadRegularFile(filepath.Join(dir, e.Name()), MaxBytes)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if bytes.Contains(data, []byte(n)) {
				out[n] = true
			}
		}
	}
	return out, nil
}

// JournalEntries lists the home's journal directory (nil when it, or the tool directory, is
// missing or not a real directory: nothing is followed).
func JournalEntries(home sessionsjson.Home) (string, []os.DirEntry, error) {
	return journalEntries(home)
}
