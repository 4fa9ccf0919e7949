package sessionsjson

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data the way the runtime's atomic_replace does: a
// symlink is written through to its target, the data goes to a temp file (tmpPattern, e.g.
// ".sessions_*.tmp") in the target's directory, is fsynced, gets the existing file's mode
// (0600 for a new file) and owner, and is renamed over the target; the directory is fsynced.
// On any error the temp file is removed and the target is left as it was, except for
// ErrNotDurable: the target was replaced but the directory could not be synced. The fault
// points FaultAfterTempWrite, FaultAfterTempSync and FaultAfterRename stop the process
// between these steps when selected (see FaultPointEnv).
func WriteFileAtomic(path string, data []byte, tmpPattern string) error {
	return writeFileAtomic(path, tmpPattern, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileAtomicFrom is WriteFileAtomic with the content written by write (through a
// buffer), so that a large file can be streamed to the temp file instead of being built in
// memory first.
func WriteFileAtomicFrom(path, tmpPattern string, write func(io.Writer) error) error {
	return WriteFileAtomicIf(path, tmpPattern, write, nil)
}

// WriteFileAtomicIf is WriteFileAtomicFrom with a last check: ok, when not nil, runs once the
// temp file is written and synced, just before the rename; its error leaves the target as it
// is (the temp file removed) and is returned. A writer that replaces the target without a
// lock can be told from this one no later than that.
func WriteFileAtomicIf(path, tmpPattern string, write func(io.Writer) error, ok func() error) error {
	p, err := PrepareAtomic(path, tmpPattern, write)
	if err != nil {
		return err
	}
	return p.Commit(ok)
}

func writeFileAtomic(path, tmpPattern string, write func(io.Writer) error) error {
	p, err := prepareAtomic(path, tmpPattern, write)
	if err != nil {
		return err
	}
	return p.Commit()
}

// PendingWrite is an atomic replacement prepared and not yet made: its temp file written,
// synced and closed (PrepareAtomic). Commit renames it over the target; Discard removes it.
// A write that must happen inside a lock held by others (state.db's write lock) prepares the
// file before taking it, so that the lock is held for the rename and the directory's sync only.
type PendingWrite struct {
	target, tmp string
}

// PrepareAtomic writes and syncs the temp file of WriteFileAtomicIf's replacement of path
// (content written by write, through a buffer) without renaming it.
func PrepareAtomic(path, tmpPattern string, write func(io.Writer) error) (*PendingWrite, error) {
	return prepareAtomic(path, tmpPattern, func(w io.Writer) error {
		buf := bufio.NewWriterSize(w, 1<<20)
		if err := write(buf); err != nil {
			return err
		}
		return buf.Flush()
	})
}

// WriteDir is the directory WriteFileAtomic writes path's temporary file in: that of path
// with its symbolic links resolved (a link is written through to its target).
func WriteDir(path string) (string, error) {
	target, err := realPath(path)
	if err != nil {
		return "", err
	}
	return filepath.Dir(target), nil
}

func prepareAtomic(path, tmpPattern string, write func(io.Writer) error) (*PendingWrite, error) {
	target, err := realPath(path)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), tmpPattern)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", target, err)
	}
	if err := fillTemp(tmp, target, write); err != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("write %s: %w", target, err)
	}
	FaultPoint(FaultAfterTempSync)
	return &PendingWrite{target: target, tmp: tmp.Name()}, nil
}

// Discard removes the prepared temp file (nothing is changed).
func (p *PendingWrite) Discard() { os.Remove(p.tmp) }

// Commit runs the checks ok (the first error removes the temp file, leaves the target as it
// is and is returned), renames the temp file over the target and syncs its directory: as
// WriteFileAtomic's end, ErrNotDurable when only that sync failed. A PendingWrite commits once.
func (p *PendingWrite) Commit(ok ...func() error) error {
	for _, check := range ok {
		if check == nil {
			continue
		}
		if err := check(); err != nil {
			p.Discard()
			return fmt.Errorf("write %s: %w", p.target, err)
		}
	}
	if err := os.Rename(p.tmp, p.target); err != nil {
		p.Discard()
		return fmt.Errorf("write %s: %w", p.target, err)
	}
	FaultPoint(FaultAfterRename)
	err := SyncDir(filepath.Dir(p.target))
	if err == nil {
		err = FaultError(FaultAfterRename)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotDurable, err)
	}
	return nil
}

// fillTemp writes, syncs and closes tmp with the target's mode and owner.
func fillTemp(tmp *os.File, target string, write func(io.Writer) error) error {
	err := writeSynced(tmp, target, write)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeSynced(tmp *os.File, target string, write func(io.Writer) error) error {
	mode := fs.FileMode(0o600)
	fi, err := os.Stat(target)
	switch {
	case err == nil:
		mode = fi.Mode().Perm()
		if err := KeepOwner(tmp, fi); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		return err
	}
	FaultPoint(FaultAfterTempWrite)
	return Fsync(tmp)
}

// Fsync fsyncs an open file, making what was written to it durable: every durable write of
// sessionctl syncs its files through it, SyncFile or SyncDir (FaultSyncTrace records each).
func Fsync(f *os.File) error {
	if err := f.Sync(); err != nil {
		return err
	}
	traceSync("file", f.Name())
	return nil
}

// SyncDir fsyncs a directory, making the creation, renaming or removal of its entries
// durable. On Windows it does nothing: FlushFileBuffers refuses a directory handle ("Access
// is denied"), and NTFS journals its directory entries itself.
func SyncDir(dir string) error {
	return syncDir(dir)
}

// SyncFile fsyncs a file written and closed before, making its contents durable. It opens
// the file with syncFileFlag: read-only where the system allows it, for writing on Windows,
// whose FlushFileBuffers needs a handle with write access.
func SyncFile(path string) error {
	return syncPath(path, syncFileFlag, "file")
}

// syncPath opens path with flag and fsyncs it; kind ("file" or "dir") is what FaultSyncTrace
// records.
func syncPath(path string, flag int, kind string) error {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	traceSync(kind, path)
	return nil
}
