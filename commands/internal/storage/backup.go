package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// The manifest of a backup directory.
const (
	ManifestName   = "manifest.json"
	manifestFormat = "sessionctl-backup"
	manifestMax    = 64 << 20
	// KindBackup is a backup an operator took; KindPreRestore the one restore takes of what
	// it replaces (kept in the restore's journal stash, never rotated).
	KindBackup     = "backup"
	KindPreRestore = "pre-restore"
)

// The files of a home a backup holds, by their path relative to the home.
const (
	relStateDB      = "state.db"
	relSessionsJSON = "sessions/sessions.json"
	relCounts       = ".restart_failure_counts"
)

// Manifest is a backup's manifest.json: what it holds, each file by size and SHA-256, and the
// home it was taken of.
type Manifest struct {
	Format        string         `json:"format"`
	Version       int            `json:"version"`
	Kind          string         `json:"kind"`
	CreatedAt     string         `json:"created_at"`
	Home          string         `json:"home"`
	Generation    string         `json:"generation"`
	SchemaVersion int            `json:"schema_version"`
	JournalMode   string         `json:"journal_mode"`
	Storage       string         `json:"storage"`
	Transcripts   bool           `json:"transcripts"`
	Files         []ManifestFile `json:"files"`
	// Absent lists the files of the core set (state.db, sessions.json, the counts file) the
	// home did not have: restore removes them.
	Absent []string `json:"absent"`
	// RawStateDB: state.db could not be read as a database (a restore saving a corrupt one)
	// and was copied byte for byte; verify does not check its integrity.
	RawStateDB bool `json:"raw_state_db,omitempty"`
}

// ManifestFile is one file of a backup.
type ManifestFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// BackupOptions are backup's flags.
type BackupOptions struct {
	To          string // the directory the backup goes into (a new <time> directory there)
	Keep        int    // when > 0, backups beyond the newest Keep in To are removed
	Transcripts bool   // also the transcript files of the sessions directory
}

// BackupData is data of `backup --json`.
type BackupData struct {
	Backup   string      `json:"backup"`
	Manifest *Manifest   `json:"manifest"`
	Removed  []string    `json:"removed"`
	Space    []SpaceNeed `json:"space"`
}

// DefaultBackupDir is where backups go without --to: <home>/sessionctl/backups.
func DefaultBackupDir(h sessionsjson.Home) string { return filepath.Join(h.ToolDir(), "backups") }

// Backup writes a backup of the home into a new directory below opts.To (default
// DefaultBackupDir): a consistent snapshot of state.db (SQLite's backup API, while the
// gateway runs too), sessions.json and the counts file, with opts.Transcripts the sessions
// directory's other files, and the manifest. It is written in a temporary directory, synced
// and renamed into place. With opts.Keep, the oldest backups sessionctl wrote there beyond
// the newest Keep are removed, under sessionctl's lock, taken before the backup is written (so
// a refused run writes none). h is opened for home.Database.
func Backup(ctx context.Context, h *home.Home, opts BackupOptions) (repair.Outcome, *BackupData, error) {
	parent := opts.To
	if parent == "" {
		parent = DefaultBackupDir(h.Opts.Home)
	}
	parent, err := absPath(parent)
	if err != nil {
		return repair.Outcome{}, nil, err
	}
	set, err := backupSet(h.Opts.Home, opts.Transcripts)
	if err != nil {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, err)
	}
	if opts.Keep > 0 { // the rotation's lock, taken first: a refused run writes no backup
		release, err := repair.LockHome(ctx, h.Opts)
		if err != nil {
			return repair.Outcome{}, nil, err
		}
		defer func() { _ = release() }()
	}
	if err := makeParent(h.Opts.Home, parent); err != nil {
		return repair.Outcome{}, nil, err
	}
	d := &BackupData{Removed: []string{}}
	if d.Space, err = needSpace([]spaceDemand{{parent, "the backup", backupBytes(h.Opts.Home, set)}}); err != nil {
		return repair.Outcome{}, nil, failure.Mark(failure.Data, err)
	}
	if err := refuseShort("backup", d.Space); err != nil {
		return repair.Outcome{}, nil, err
	}
	d.Backup, d.Manifest, err = writeBackup(ctx, h, h.DB, parent, "", KindBackup, set)
	if err != nil {
		return repair.Outcome{}, nil, err
	}
	var bytes int64
	for _, f := range d.Manifest.Files {
		bytes += f.Size
	}
	out := repair.Outcome{Applied: true, Changes: []repair.Change{{Store: "backup", Target: d.Backup, Op: "write backup",
		After: map[string]int64{"files": int64(len(d.Manifest.Files)), "bytes": bytes}}}}
	if opts.Keep > 0 {
		removed, findings, err := rotate(parent, opts.Keep)
		d.Removed = append(d.Removed, removed...)
		out.Findings = append(out.Findings, findings...)
		for _, r := range removed {
			out.Changes = append(out.Changes, repair.Change{Store: "backup", Target: r, Op: "remove backup"})
		}
		if err != nil { // the backup is written, and maybe some old ones removed: not "nothing changed"
			return out, d, &repair.Incomplete{Outcome: out, Err: fmt.Errorf("backup --keep: %s written, then rotating failed: %w", d.Backup, err)}
		}
	}
	return out, d, nil
}

// backupSet is what a backup holds: the core files by their path relative to the home, and
// with transcripts every other regular file directly in the sessions directory (not hidden,
// not sessions.json).
func backupSet(h sessionsjson.Home, transcripts bool) ([]string, error) {
	set := []string{relStateDB, relSessionsJSON, relCounts}
	for _, rel := range set[1:] { // state.db is checked when it is opened
		if fi, err := os.Stat(filepath.Join(h.Dir, filepath.FromSlash(rel))); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is %s: nothing backed up: %w", rel, sessionsjson.FileKind(fi.Mode()), sessionsjson.ErrNotRegular)
		}
	}
	if !transcripts {
		return set, nil
	}
	entries, err := os.ReadDir(h.SessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return set, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the sessions directory: %w", err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "sessions.json" {
			set = append(set, "sessions/"+e.Name())
		}
	}
	return set, nil
}

// backupBytes bounds a backup's size: the files of set as they are now, state.db with its
// WAL (the snapshot holds at most both).
func backupBytes(h sessionsjson.Home, set []string) int64 {
	var n int64
	for _, rel := range set {
		if rel == relStateDB {
			n += fileSize(h.StateDB() + "-wal")
		}
		n += fileSize(filepath.Join(h.Dir, filepath.FromSlash(rel)))
	}
	return n
}

// fileSize is the size of path (a symbolic link's own), 0 when it does not exist.
func fileSize(path string) int64 {
	st, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// makeParent creates the directory backups go into: below the home's sessionctl directory
// without following a symbolic link, elsewhere as an operator's directory (mode 0700).
func makeParent(h sessionsjson.Home, parent string) error {
	if _, below := sessionsjson.RelBelow(h.ToolDir(), parent); below {
		if _, err := sessionsjson.MakeToolDir(h, parent); err != nil {
			return failure.Mark(failure.Refused, fmt.Errorf("backup directory: %w", err))
		}
		return nil
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return failure.Mark(failure.Data, fmt.Errorf("backup directory: %w", err))
	}
	return nil
}

// writeBackup writes the files of set that the home has into a new backup directory below
// parent, named name ("": the clock's time), and returns its path and manifest; db, when not
// nil, is the connection state.db is snapshotted through. Nothing is left behind when it
// fails.
func writeBackup(ctx context.Context, h *home.Home, db *statedb.DB, parent, name, kind string, set []string) (string, *Manifest, error) {
	tmp, err := os.MkdirTemp(parent, journal.SavedTemp) // in the journal directory, a restore's: Settle removes a leftover
	if err != nil {
		return "", nil, failure.Mark(failure.Write, fmt.Errorf("backup: %w", err))
	}
	m, err := fillBackup(ctx, h, db, tmp, kind, set)
	if err == nil {
		sessionsjson.FaultPoint(FaultBackupFilled)
		err = writeManifest(tmp, m)
	}
	if err == nil { // run as root: the backup is its directory's owner's, as the home's files are
		err = sessionsjson.OwnTreeLikeParent(tmp)
	}
	var dir string
	if err == nil {
		dir, err = publish(tmp, parent, name, h.Opts.Clock)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return "", nil, failure.Mark(failure.Write, fmt.Errorf("backup: %w (nothing kept)", err))
	}
	return dir, m, nil
}

// fillBackup copies the files of set into dir and returns their manifest.
func fillBackup(ctx context.Context, h *home.Home, db *statedb.DB, dir, kind string, set []string) (*Manifest, error) {
	m := &Manifest{Format: manifestFormat, Version: 1, Kind: kind, CreatedAt: stamp(h.Opts.Clock).Format(time.RFC3339Nano),
		Home: h.Opts.Home.Dir, Generation: string(h.Gen), Storage: h.Storage.String(), Files: []ManifestFile{}, Absent: []string{}}
	if db != nil {
		m.SchemaVersion, m.JournalMode = db.Schema().Version, db.Schema().JournalMode
	}
	for i, rel := range set {
		h.Opts.Report("backup", int64(i), int64(len(set)))
		m.Transcripts = m.Transcripts || !isCore(rel)
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return nil, err
		}
		f, present, err := copyOne(ctx, h.Opts.Home, db, rel, dst)
		if err != nil {
			return nil, err
		}
		m.RawStateDB = m.RawStateDB || (rel == relStateDB && present && db == nil)
		if present {
			m.Files = append(m.Files, f)
		} else if isCore(rel) {
			m.Absent = append(m.Absent, rel)
		}
	}
	return m, syncTree(dir)
}

// copyOne copies one file of the home into the backup: state.db through the backup API
// (statedb.Snapshot), any other file byte for byte. present is false when the home does not
// have it.
func copyOne(ctx context.Context, h sessionsjson.Home, db *statedb.DB, rel, dst string) (ManifestFile, bool, error) {
	src := filepath.Join(h.Dir, filepath.FromSlash(rel))
	if rel == relStateDB {
		if db == nil { // none, or none SQLite can read: as it is (no process holds it)
			d, err := copyFile(src, dst)
			if errors.Is(err, fs.ErrNotExist) {
				return ManifestFile{}, false, nil
			}
			return ManifestFile{Path: rel, Size: d.Size, SHA256: d.SHA256}, err == nil, err
		}
		sum := sha256.New()
		n, err := db.Snapshot(ctx, dst, sum)
		if err != nil {
			return ManifestFile{}, false, err
		}
		return ManifestFile{Path: rel, Size: n, SHA256: hex.EncodeToString(sum.Sum(nil))}, true, nil
	}
	d, err := copyFile(src, dst)
	if errors.Is(err, fs.ErrNotExist) {
		return ManifestFile{}, false, nil
	}
	return ManifestFile{Path: rel, Size: d.Size, SHA256: d.SHA256}, err == nil, err
}

// isCore reports whether rel is one of the core files of a backup.
func isCore(rel string) bool {
	return rel == relStateDB || rel == relSessionsJSON || rel == relCounts
}

// digest is a file's size and SHA-256.
type digest struct {
	Size   int64
	SHA256 string
}

// copyFile copies the regular file src to the new file dst (mode 0600, synced) and returns
// the digest of what it copied.
func copyFile(src, dst string) (digest, error) {
	in, err := sessionsjson.OpenRegularFile(src)
	if err != nil {
		return digest{}, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return digest{}, err
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, sum), in)
	if err == nil {
		err = sessionsjson.Fsync(out)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return digest{Size: n, SHA256: hex.EncodeToString(sum.Sum(nil))}, err
}

// digestFile reads a regular file's size and SHA-256.
func digestFile(path string) (digest, error) {
	f, err := sessionsjson.OpenRegularFile(path)
	if err != nil {
		return digest{}, err
	}
	defer f.Close()
	sum := sha256.New()
	n, err := io.Copy(sum, f)
	return digest{Size: n, SHA256: hex.EncodeToString(sum.Sum(nil))}, err
}

// writeManifest writes dir's manifest.json (mode 0600, synced), then syncs dir: syncTree ran
// before the manifest existed, and a published backup must not lose its manifest's name.
func writeManifest(dir string, m *Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, ManifestName)
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return err
	}
	if err := sessionsjson.SyncFile(path); err != nil {
		return err
	}
	return sessionsjson.SyncDir(dir)
}

// syncTree syncs dir and its subdirectories.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return sessionsjson.SyncDir(path)
	})
}

// stamp is the clock's instant in UTC.
func stamp(c sessionsjson.Clock) time.Time { return time.UnixMicro(c.UnixMicros).UTC() }

// publish renames the finished temporary directory to its name below parent — name, or the
// clock's UTC time with -2, -3, … when that exists — and syncs parent.
func publish(tmp, parent, name string, c sessionsjson.Clock) (string, error) {
	if err := os.Chmod(tmp, 0o700); err != nil {
		return "", err
	}
	if name != "" {
		dst := filepath.Join(parent, name)
		if _, err := os.Lstat(dst); err == nil {
			return "", fmt.Errorf("%s exists", dst)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return "", err
		}
		return dst, sessionsjson.SyncDir(parent)
	}
	base := stamp(c).Format("20060102T150405Z")
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name += "-" + strconv.Itoa(i)
		}
		dst := filepath.Join(parent, name)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.Rename(tmp, dst); err != nil {
			return "", err
		}
		return dst, sessionsjson.SyncDir(parent)
	}
}

// ReadManifest reads and checks a backup directory's manifest: sessionctl's format, and
// every path one a backup holds (clean, relative, one of the core files or a file directly in
// sessions/).
func ReadManifest(dir string) (*Manifest, error) {
	data, err := sessionsjson.ReadRegularFile(filepath.Join(dir, ManifestName), manifestMax)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s is not JSON: %w", ManifestName, err)
	}
	if m.Format != manifestFormat || m.Version != 1 {
		return nil, fmt.Errorf("%s is not a sessionctl backup manifest (format %q, version %d)", ManifestName, m.Format, m.Version)
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		if !validRel(f.Path) {
			return nil, fmt.Errorf("%s names a file a backup never holds: %q", ManifestName, f.Path)
		}
		seen[f.Path] = true
	}
	for _, rel := range m.Absent {
		if !isCore(rel) {
			return nil, fmt.Errorf("%s names a file a backup never holds: %q", ManifestName, rel)
		}
		if seen[rel] {
			return nil, fmt.Errorf("%s lists %q as both a file and absent", ManifestName, rel)
		}
	}
	return &m, nil
}

// validRel reports whether rel is a path a backup holds: a core file, or a plain name
// directly in sessions/.
func validRel(rel string) bool {
	if isCore(rel) {
		return true
	}
	name, ok := strings.CutPrefix(rel, "sessions/")
	return ok && name != "" && !strings.ContainsAny(name, "/\\") && name != "." && name != ".." && !strings.HasPrefix(name, ".")
}

// backupDir is one backup found in a directory, for rotation.
type backupDir struct {
	path    string
	created time.Time
	m       *Manifest
}

// rotate removes the oldest backups in parent beyond the newest keep, with sessionctl's lock
// held (Backup takes it before the backup): only directories whose manifest sessionctl wrote
// (kind backup). A backup directory holding anything its manifest does not list keeps that
// (and is reported).
func rotate(parent string, keep int) ([]string, []check.Finding, error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, nil, failure.Mark(failure.Data, err)
	}
	var found []backupDir
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		m, err := ReadManifest(dir)
		if err != nil || m.Kind != KindBackup {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, m.CreatedAt)
		if err != nil {
			continue
		}
		found = append(found, backupDir{dir, t, m})
	}
	sort.Slice(found, func(i, j int) bool { return olderBackup(found[i], found[j]) })
	var removed []string
	var findings []check.Finding
	for i := 0; i < len(found)-keep; i++ {
		left, err := removeBackup(found[i])
		if err != nil {
			return removed, findings, failure.Mark(failure.Write, fmt.Errorf("backup --keep: remove %s: %w", found[i].path, err))
		}
		removed = append(removed, found[i].path)
		if len(left) > 0 {
			findings = append(findings, check.Finding{Check: check.BackupKept, Severity: check.Warn, Subject: found[i].path,
				Message: "rotated out, but it holds files its manifest does not list, which were kept: " + strings.Join(left, ", ")})
		}
	}
	return removed, findings, sessionsjson.SyncDir(parent)
}

// olderBackup orders backups by creation time, then by name (shorter first: -2 before -10).
func olderBackup(a, b backupDir) bool {
	if !a.created.Equal(b.created) {
		return a.created.Before(b.created)
	}
	if len(a.path) != len(b.path) {
		return len(a.path) < len(b.path)
	}
	return a.path < b.path
}

// removeBackup removes a backup's listed files, its manifest and the directories they leave
// empty; it returns what else it found there (kept).
func removeBackup(b backupDir) ([]string, error) {
	for _, f := range b.m.Files {
		if err := os.Remove(filepath.Join(b.path, filepath.FromSlash(f.Path))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if err := os.Remove(filepath.Join(b.path, ManifestName)); err != nil {
		return nil, err
	}
	_ = os.Remove(filepath.Join(b.path, "sessions"))
	if err := os.Remove(b.path); err == nil {
		return nil, nil
	}
	var left []string
	err := filepath.WalkDir(b.path, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(b.path, path)
			left = append(left, rel)
		}
		return err
	})
	return left, err
}
