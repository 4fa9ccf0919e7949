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
	return writeFileAtomic(path, tmpPattern, func(w io.Writer) error {
		buf := bufio.NewWriterSize(w, 1<<20)
		if err := write(buf); err != nil {
			return err
		}
		return buf.Flush()
	}, ok)
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

func writeFileAtomic(path, tmpPattern string, write func(io.Writer) error, ok ...func() error) error {
	target, err := realPath(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), tmpPattern)
	if err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	if err := fillTemp(tmp, target, write); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", target, err)
	}
	FaultPoint(FaultAfterTempSync)
	for _, check := range ok {
		if check == nil {
			continue
		}
		if err := check(); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("write %s: %w", target, err)
		}
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", target, err)
	}
	FaultPoint(FaultAfterRename)
	err = SyncDir(filepath.Dir(target))
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
