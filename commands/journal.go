package commands

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// journal is the before/after record of one applied change, written (mode 0600) before the
// first byte of the change so that `undo` can restore it.
type journal struct {
	Version    int                 `json:"version"`
	Command    string              `json:"command"`
	CreatedAt  string              `json:"created_at"`
	Home       string              `json:"home"`
	Storage    string              `json:"storage"`
	Generation string              `json:"generation"`
	Scope      string              `json:"scope,omitempty"`
	Routing    []entryImage        `json:"routing,omitempty"`
	Files      []fileImage         `json:"files,omitempty"`
	Rows       []statedb.RowChange `json:"rows,omitempty"`
}

// entryImage is one routing entry before and after, in the store it lives in
// ("sessions.json" or "gateway_routing").
type entryImage struct {
	Store  string          `json:"store"`
	Key    string          `json:"key"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// fileImage is a whole file before and after. A side is absent when its content is nil and
// it has no stash. A stash is a file the content was moved to (or comes from) instead of
// being copied into the journal: prune-ghosts moves transcript files into
// <journal>.files/, and undo moves them back.
type fileImage struct {
	Path        string  `json:"path"`
	Before      *[]byte `json:"before"`
	After       *[]byte `json:"after"`
	BeforeStash string  `json:"before_stash,omitempty"` // Path's content before is now this file
	AfterStash  string  `json:"after_stash,omitempty"`  // Path's content after comes from this file
}

// stashSuffix ends the name of a journal's stash directory.
const stashSuffix = ".files"

// stashDir is where a journal keeps the files moved out of the home: <journal>.files.
func stashDir(journalPath string) string {
	return strings.TrimSuffix(journalPath, ".json") + stashSuffix
}

// moveFile moves from to to (creating to's directory, mode 0700): a rename, or, when the two
// are on different filesystems, a copy that is synced (file and directory) before from is
// removed. An existing to is never replaced. After renames the caller syncs both
// directories once (syncDirs): a rename cannot lose the file, only be rolled back.
func moveFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("move %s: %s already exists", from, to)
	}
	err := os.Rename(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyFileSynced(from, to); err != nil {
		return err
	}
	if err := sessionsjson.SyncDir(filepath.Dir(to)); err != nil {
		return err
	}
	return os.Remove(from)
}

// copyFileSynced copies from to a new file to (never an existing one) with from's mode and
// owner, and syncs it; a copy it created and could not finish is removed.
func copyFileSynced(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = dst.Chmod(st.Mode().Perm())
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && err == nil {
		if err = dst.Chown(int(sys.Uid), int(sys.Gid)); errors.Is(err, syscall.EPERM) {
			err = nil // not root: the copy is ours, as the file was
		}
	}
	if err == nil {
		_, err = io.Copy(dst, src)
	}
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(to)
	}
	return err
}

// syncDirs fsyncs each directory, reporting the first failure.
func syncDirs(dirs ...string) error {
	for _, d := range dirs {
		if err := sessionsjson.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// journalPath names a new journal for the running command:
// <home>/sessionctl/journal/<UTC time>-<command>.json.
func journalPath(o *options) string {
	name := time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + strings.ReplaceAll(o.command, " ", "-") + ".json"
	return filepath.Join(o.home.JournalDir(), name)
}

// writeJournal stores j at a new journal path and returns the path.
func writeJournal(o *options, j *journal) (string, error) {
	path := journalPath(o)
	return path, writeJournalAt(o, path, j)
}

// writeJournalAt writes j to path (mode 0600, synced). Writing the same journal again
// replaces it, so it may be called from a transaction that is retried.
func writeJournalAt(o *options, path string, j *journal) error {
	dirs, err := makeJournalDir(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("create journal dir: %w", err)
	}
	j.Version = 1
	j.Command = o.command
	j.Home = o.home.Dir
	j.CreatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create journal: %w", err)
	}
	w := bufio.NewWriterSize(f, 256<<10)
	err = encodeJournal(w, j)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDirs(dirs...)
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("write journal: %w", err)
	}
	return nil
}

// makeJournalDir creates dir (mode 0700) and returns the directories whose entries must be
// synced for a file created in it to survive a crash: dir, and the parents it created.
func makeJournalDir(dir string) ([]string, error) {
	dirs := []string{dir}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		dirs = append(dirs, filepath.Dir(d))
	}
	return dirs, os.MkdirAll(dir, 0o700)
}

// encodeJournal writes j as JSON to w: the header fields indented by encoding/json, then the
// files and the rows one per line (a state.db repair's journal holds thousands of row images
// and file records: encoding them by reflection and then indenting took most of the time the
// write lock was held). Rows are written by statedb's direct encoder, each item streamed
// through one reused buffer.
func encodeJournal(w io.Writer, j *journal) error {
	head := *j
	head.Rows, head.Files = nil, nil
	data, err := json.MarshalIndent(&head, "", "  ")
	if err != nil {
		return err
	}
	if _, err := w.Write(bytes.TrimSuffix(data, []byte("\n}"))); err != nil {
		return err
	}
	if err := writeJournalArray(w, "files", j.Files, func(dst []byte, f fileImage) ([]byte, error) {
		b, err := json.Marshal(f)
		return append(dst, b...), err
	}); err != nil {
		return err
	}
	if err := writeJournalArray(w, "rows", j.Rows, func(dst []byte, c statedb.RowChange) ([]byte, error) {
		return c.AppendJSON(dst)
	}); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n}\n")
	return err
}

// writeJournalArray writes `,\n  "name": [` and the items one per line, nothing when there
// are none (the field is omitempty).
func writeJournalArray[T any](w io.Writer, name string, items []T, appendItem func([]byte, T) ([]byte, error)) error {
	if len(items) == 0 {
		return nil
	}
	if _, err := io.WriteString(w, ",\n  \""+name+"\": [\n"); err != nil {
		return err
	}
	var buf []byte
	for i, item := range items {
		buf = buf[:0]
		if i > 0 {
			buf = append(buf, ",\n"...)
		}
		var err error
		if buf, err = appendItem(buf, item); err != nil {
			return err
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n  ]")
	return err
}

// readJournal loads a journal file.
func readJournal(path string) (*journal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, withCode(ExitData, fmt.Errorf("journal %s is not a sessionctl journal: %w", path, err))
	}
	if j.Version != 1 {
		return nil, withCode(ExitData, fmt.Errorf("journal %s: unsupported version %d", path, j.Version))
	}
	return &j, nil
}
