// Package journal is sessionctl's record of every change it writes: the format (before and
// after images of routing entries, files and state.db rows), where journals live, how they
// are written durably and read back safely, and the stash that keeps moved files for undo.
package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Journal is the before/after record of one applied change, written (mode 0600) before the
// first byte of the change so that `undo` can restore it.
type Journal struct {
	Version    int                 `json:"version"`
	Command    string              `json:"command"`
	CreatedAt  string              `json:"created_at"`
	Home       string              `json:"home"`
	Storage    string              `json:"storage"`
	Generation string              `json:"generation"`
	Scope      string              `json:"scope,omitempty"`
	Routing    []EntryImage        `json:"routing,omitempty"`
	Files      []FileImage         `json:"files,omitempty"`
	Rows       []statedb.RowChange `json:"rows,omitempty"`
	// RowStore is the row store holding the rows the change deleted or put back (a SQLite
	// file next to the journal, RowStorePath; docs/decisions.md "Row stores"), and RowStoreOp
	// what the change did with them: RowStoreDeleted or RowStoreRestored.
	RowStore   string `json:"row_store,omitempty"`
	RowStoreOp string `json:"row_store_op,omitempty"`
	// Operation records a change that keeps no images: one of derived data only (fts
	// rebuild), which undo has nothing to restore of (docs/decisions.md).
	Operation *Operation `json:"operation,omitempty"`
	// Swap is a restore's record (a journal of version 3): undo puts back what it replaced.
	Swap *Swap `json:"swap,omitempty"`
	// Note says what an operation that changes no row and no file did (compact), for the
	// reader of the journal: undo has nothing to restore.
	Note string `json:"note,omitempty"`
	// Undoes names the journal an undo reverted (its path): `journal list` tells from it that
	// the journal was undone. Older sessionctl versions ignore the field.
	Undoes string `json:"undoes,omitempty"`
	// Pending marks the journal of an undo (Undoes, or a restore's swap back) that has not
	// finished: it is written with the flag before the undo's first byte and rewritten
	// without it once every change landed (Finish). The journal it reverts does not count as
	// undone while it is set, so undo --last takes that journal again and finishes the undo.
	// Older sessionctl versions ignore the field.
	Pending bool `json:"pending,omitempty"`
	// Temps are the patterns (relative to the home, slash-separated) of the temporary files
	// the change may create (Temps), recorded before any is: they prove such a file
	// sessionctl's, for undo and the next write to remove (Settle). Older sessionctl
	// versions ignore the field.
	Temps []string `json:"temps,omitempty"`
	// Torn marks a journal that was cut short (ReadOrTorn): it names a change that never
	// started. Never written.
	Torn bool `json:"-"`
}

// Swap records a restore: the files a backup put in place of the home's, and the backup of
// what they replaced (Saved, the journal's stash directory <journal>.files, a backup of its
// own with a manifest), which undo puts back.
type Swap struct {
	Backup string     `json:"backup"` // the backup restored
	Saved  string     `json:"saved"`  // the backup of the files replaced: StashDir(journal)
	Files  []SwapFile `json:"files"`
	// Stale lists the leftover state.db-wal / state.db-shm of the replaced database, moved
	// into Saved/stale/ (never put back: Saved's state.db already holds their content).
	Stale []string `json:"stale,omitempty"`
}

// SwapFile is one file of a restore, by its path relative to the home (slash-separated).
type SwapFile struct {
	Path string `json:"path"`
	// Original identifies the file the restore replaced (nil: there was none).
	Original *Fingerprint `json:"original"`
	// Restored is what the restore put there (nil: it removed the file, which the backup
	// records as absent).
	Restored *Digest `json:"restored"`
}

// Fingerprint identifies a file without reading it: size, modification time and inode.
type Fingerprint struct {
	Size    int64  `json:"size"`
	MtimeNS int64  `json:"mtime_ns"`
	Inode   uint64 `json:"inode"`
}

// Digest is a file's content by size and SHA-256 (hex).
type Digest struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Operation is the record of a change to derived data: what ran, on what, and why it keeps
// no before-image.
type Operation struct {
	Kind    string   `json:"kind"`
	Targets []string `json:"targets"`
	Note    string   `json:"note"`
}

// What a change did with the rows of its row store.
const (
	RowStoreDeleted  = "deleted"
	RowStoreRestored = "restored"
)

// EntryImage is one routing entry before and after, in the store it lives in
// ("sessions.json" or "gateway_routing"). A side is nil where the entry is absent: an entry
// removed (entries prune, entries rm) has no after-image, one an undo puts back no
// before-image. Prev places a removed entry of sessions.json back: the key of the member before
// it in the file ("" when it was the first).
type EntryImage struct {
	Store  string          `json:"store"`
	Key    string          `json:"key"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
	Prev   string          `json:"prev,omitempty"`
	// BeforeTime and AfterTime are a gateway_routing row's updated_at column on each side
	// (nil: not recorded, in older journals too; a write then stamps the time of the run), so
	// that an undo puts the column back as it was.
	BeforeTime *float64 `json:"before_updated_at,omitempty"`
	AfterTime  *float64 `json:"after_updated_at,omitempty"`
	// BeforeExact and AfterExact keep a side byte for byte (in its text field): a
	// gateway_routing row the runtime skips goes back exactly as it was stored.
	BeforeExact bool `json:"-"`
	AfterExact  bool `json:"-"`
}

// entryImageJSON is an EntryImage as a journal holds it. An image that is not standard JSON
// (it holds NaN, Infinity or -Infinity, which the runtime's json reads and writes) is kept as
// its text in before_text or after_text, the image itself null; a journal with such an image
// is version 2, so that a sessionctl that knows only version 1 refuses it instead of taking
// the null for an absent entry.
type entryImageJSON struct {
	Store      string          `json:"store"`
	Key        string          `json:"key"`
	Before     json.RawMessage `json:"before"`
	After      json.RawMessage `json:"after"`
	BeforeText *string         `json:"before_text,omitempty"`
	AfterText  *string         `json:"after_text,omitempty"`
	Prev       string          `json:"prev,omitempty"`
	BeforeTime *float64        `json:"before_updated_at,omitempty"`
	AfterTime  *float64        `json:"after_updated_at,omitempty"`
	// Absent names the side ("before" or "after") where the entry does not exist (a journal
	// of version 5): null there is not the entry's value.
	Absent string `json:"absent,omitempty"`
}

// Sides of an entry image, as Absent names them.
const (
	sideBefore = "before"
	sideAfter  = "after"
)

// Journal versions: 5 when an entry image has an absent side (entries rm), 4 for a restore's
// (Swap), 3 when the journal has a row store, 2 when an entry image needs its text form
// (entryImageJSON), else 1. A sessionctl that knows fewer refuses the journal instead of
// finding nothing in it to undo.
const (
	version         = 1
	versionText     = 2
	versionRowStore = 3
	versionSwap     = 4
	versionAbsent   = 5
)

// MarshalJSON writes the image, putting a side that is not standard JSON in its text field.
func (e EntryImage) MarshalJSON() ([]byte, error) {
	out := entryImageJSON{Store: e.Store, Key: e.Key, Before: e.Before, After: e.After, Prev: e.Prev, BeforeTime: e.BeforeTime, AfterTime: e.AfterTime}
	out.Before, out.BeforeText = imageSide(e.Before, e.BeforeExact)
	out.After, out.AfterText = imageSide(e.After, e.AfterExact)
	switch {
	case e.Before == nil:
		out.Absent = sideBefore
	case e.After == nil:
		out.Absent = sideAfter
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads an image, from its text field where it has one.
func (e *EntryImage) UnmarshalJSON(data []byte) error {
	var in entryImageJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*e = EntryImage{Store: in.Store, Key: in.Key, Before: in.Before, After: in.After, Prev: in.Prev, BeforeTime: in.BeforeTime, AfterTime: in.AfterTime}
	for _, side := range []struct {
		text  *string
		img   *json.RawMessage
		exact *bool
	}{{in.BeforeText, &e.Before, &e.BeforeExact}, {in.AfterText, &e.After, &e.AfterExact}} {
		if side.text == nil {
			continue
		}
		if len(*side.img) > 0 && string(*side.img) != "null" { // the text stands for a null image
			return fmt.Errorf("entry %q has an image and its text", in.Key)
		}
		*side.img, *side.exact = json.RawMessage(*side.text), true
	}
	switch in.Absent {
	case "":
	case sideBefore:
		e.Before = nil
	case sideAfter:
		e.After = nil
	default:
		return fmt.Errorf("entry %q: unknown absent side %q", in.Key, in.Absent)
	}
	return nil
}

// hasAbsent reports whether any entry image of j has an absent side (version 5).
func (j *Journal) hasAbsent() bool {
	for _, e := range j.Routing {
		if e.Before == nil || e.After == nil {
			return true
		}
	}
	return false
}

// imageSide returns an image side as written: itself when it is standard JSON (or absent)
// and need not be kept exact, else null and its text.
func imageSide(img json.RawMessage, exact bool) (json.RawMessage, *string) {
	if img == nil || !exact && json.Valid(img) {
		return img, nil
	}
	text := string(img)
	return nil, &text
}

// needsText reports whether any entry image of j is kept as text (version 2).
func (j *Journal) needsText() bool {
	for _, e := range j.Routing {
		if _, text := imageSide(e.Before, e.BeforeExact); text != nil {
			return true
		}
		if _, text := imageSide(e.After, e.AfterExact); text != nil {
			return true
		}
	}
	return false
}

// FileImage is a whole file before and after. A side is absent when its content is nil and
// it has no stash. A stash is a file the content was moved to (or comes from) instead of
// being copied into the journal: prune-ghosts moves transcript files into
// <journal>.files/, and undo moves them back.
type FileImage struct {
	Path        string  `json:"path"`
	Before      *[]byte `json:"before"`
	After       *[]byte `json:"after"`
	BeforeStash string  `json:"before_stash,omitempty"` // Path's content before is now this file
	AfterStash  string  `json:"after_stash,omitempty"`  // Path's content after comes from this file
}

// stashSuffix ends the name of a journal's stash directory.
const stashSuffix = ".files"

// StashDir is where a journal keeps the files moved out of the home: <journal>.files.
func StashDir(journalPath string) string {
	return strings.TrimSuffix(journalPath, ".json") + stashSuffix
}

// NewPath names a new journal of command in dir: <dir>/<UTC time>-<command>.json.
func NewPath(dir, command string) string {
	name := time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + strings.ReplaceAll(command, " ", "-") + ".json"
	return filepath.Join(dir, name)
}

// Write writes j to path (mode 0600, synced, with the directories it created), stamping its
// version and creation time, atomically: the journal goes to a temporary file of its own
// (TempPath) that is synced and renamed over path, and the directory is synced, so that a
// crash leaves the whole journal or none (a temporary file the next write removes, Settle).
// Writing the same journal again replaces it, so it may be called from a transaction that is
// retried. The fault points FaultJournalTorn and FaultJournalBeforeRename stop the process
// inside the write when selected (sessionsjson.FaultPointEnv).
//
// path must be in j.Home's journal directory, and nothing there is followed: every directory
// from <home>/sessionctl down is created or checked without following a symbolic link, the
// files are created with O_NOFOLLOW, and neither the journal nor its stash may be a symbolic
// link (a refusal, sessionsjson.ErrUnsafeToolPath).
func Write(path string, j *Journal) error {
	dirs, err := sessionsjson.MakeToolDir(sessionsjson.Home{Dir: j.Home}, filepath.Dir(path))
	if err != nil {
		return refusal(fmt.Errorf("create journal dir: %w", err))
	}
	j.Version = version
	if j.needsText() {
		j.Version = versionText
	}
	if j.RowStore != "" {
		j.Version = versionRowStore
	}
	if j.Swap != nil {
		j.Version = versionSwap
	}
	if j.hasAbsent() {
		j.Version = versionAbsent
	}
	j.CreatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	if err := checkTarget(path); err != nil {
		return refusal(fmt.Errorf("create journal: %w", err))
	}
	tmp := TempPath(path)
	f, err := create(tmp)
	if err != nil {
		return refusal(fmt.Errorf("create journal: %w", err))
	}
	w := bufio.NewWriterSize(f, 256<<10)
	err = encode(w, j)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = sessionsjson.Fsync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		tornFault(tmp, path, dirs)
		sessionsjson.FaultPoint(FaultJournalBeforeRename)
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = SyncDirs(dirs...)
	}
	if err != nil {
		_ = os.Remove(tmp)
		_ = os.Remove(path)
		return fmt.Errorf("write journal: %w", err)
	}
	return nil
}

// TempPath is where Write writes the journal at path before renaming it into place:
// .journal_<name>.tmp beside it (Finish's temporary files follow the same pattern,
// finishTemp).
func TempPath(path string) string {
	return filepath.Join(filepath.Dir(path), ".journal_"+strings.TrimSuffix(filepath.Base(path), ".json")+".tmp")
}

// checkTarget refuses a journal path or stash that is a symbolic link, a journal path that is
// anything but a regular file (an earlier attempt of the same write, which the rename
// replaces), and a stash that is not a directory.
func checkTarget(path string) error {
	for _, p := range []string{StashDir(path), path} {
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: %w", p, sessionsjson.ErrUnsafeToolPath)
		case p == path && fi.Mode().IsRegular():
		case p == path || !fi.IsDir():
			return fmt.Errorf("%s is %s: %w", p, sessionsjson.FileKind(fi.Mode()), sessionsjson.ErrUnsafeToolPath)
		}
	}
	return nil
}

// create makes a new file at path (0600, O_EXCL, O_NOFOLLOW): a regular file there (a
// temporary file an earlier attempt left) is replaced; anything else is refused.
func create(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case fi.Mode().IsRegular():
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s is %s: %w", path, sessionsjson.FileKind(fi.Mode()), sessionsjson.ErrUnsafeToolPath)
	}
	return sessionsjson.OpenToolFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
}

// refusal marks an error about a symbolic link or a file of the wrong type under
// <home>/sessionctl/ as a refusal.
func refusal(err error) error {
	if errors.Is(err, sessionsjson.ErrUnsafeToolPath) {
		return failure.Mark(failure.Refused, err)
	}
	return err
}

// encode writes j as JSON to w: the header fields indented by encoding/json, then the entry
// images, the files and the rows one per line (a state.db repair's journal holds thousands of row images and
// file records: encoding them by reflection and then indenting took most of the time the
// write lock was held). Rows are written by statedb's direct encoder, each item streamed
// through one reused buffer.
func encode(w io.Writer, j *Journal) error {
	head := *j
	head.Routing, head.Rows, head.Files = nil, nil, nil
	data, err := json.MarshalIndent(&head, "", "  ")
	if err != nil {
		return err
	}
	if _, err := w.Write(bytes.TrimSuffix(data, []byte("\n}"))); err != nil {
		return err
	}
	// indented within the header, the entry images were a second and a third copy of a
	// routing journal in memory (4 MB for 700 entries; issue 30)
	if err := writeArray(w, "routing", j.Routing, func(dst []byte, e EntryImage) ([]byte, error) {
		b, err := json.Marshal(e)
		return append(dst, b...), err
	}); err != nil {
		return err
	}
	if err := writeArray(w, "files", j.Files, func(dst []byte, f FileImage) ([]byte, error) {
		b, err := json.Marshal(f)
		return append(dst, b...), err
	}); err != nil {
		return err
	}
	if err := writeArray(w, "rows", j.Rows, func(dst []byte, c statedb.RowChange) ([]byte, error) {
		return c.AppendJSON(dst)
	}); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n}\n")
	return err
}

// writeArray writes `,\n  "name": [` and the items one per line, nothing when there are none
// (the field is omitempty).
func writeArray[T any](w io.Writer, name string, items []T, appendItem func([]byte, T) ([]byte, error)) error {
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

// MaxBytes is the largest journal Read accepts: 1 GiB. A state.db repair's journal (one
// batch of at most 500 rows) is a few MB; a routing journal holds two images of each entry it
// changes, so it is bounded by about twice the routing index.
const MaxBytes = 1 << 30

// Read loads a journal file. A symbolic link is refused (nothing a journal names is
// followed); anything but a regular file (a named pipe, a device such as /dev/zero, a
// directory) and a file over MaxBytes are refused before a byte is read, as data errors.
func Read(path string) (*Journal, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, failure.Mark(failure.Refused, fmt.Errorf("journal %s is a symbolic link: %w", path, sessionsjson.ErrUnsafeToolPath))
	}
	data, err := sessionsjson.ReadRegularFile(path, MaxBytes)
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("read journal: %w", err))
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil && torn(data) {
		return nil, tornError(path)
	} else if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("journal %s is not a sessionctl journal: %w", path, err))
	}
	if j.Version != version && j.Version != versionText && j.Version != versionRowStore && j.Version != versionAbsent && (j.Version != versionSwap || j.Swap == nil) {
		return nil, failure.Mark(failure.Data, fmt.Errorf("journal %s: unsupported version %d", path, j.Version))
	}
	return &j, nil
}

// Inverse swaps before and after images: applying the inverse undoes the journal.
func (j *Journal) Inverse() *Journal {
	inv := &Journal{Storage: j.Storage, Generation: j.Generation, Scope: j.Scope, RowStore: j.RowStore}
	switch j.RowStoreOp {
	case RowStoreDeleted:
		inv.RowStoreOp = RowStoreRestored
	case RowStoreRestored:
		inv.RowStoreOp = RowStoreDeleted
	}
	for _, e := range j.Routing {
		inv.Routing = append(inv.Routing, EntryImage{Store: e.Store, Key: e.Key, Before: e.After, After: e.Before, Prev: e.Prev,
			BeforeTime: e.AfterTime, AfterTime: e.BeforeTime, BeforeExact: e.AfterExact, AfterExact: e.BeforeExact})
	}
	for _, f := range j.Files {
		inv.Files = append(inv.Files, FileImage{Path: f.Path, Before: f.After, After: f.Before,
			BeforeStash: f.AfterStash, AfterStash: f.BeforeStash})
	}
	for _, row := range j.Rows {
		inv.Rows = append(inv.Rows, statedb.RowChange{Table: row.Table, Key: row.Key, Before: row.After, After: row.Before})
	}
	return inv
}
