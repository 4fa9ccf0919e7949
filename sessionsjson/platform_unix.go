//go:build unix

package sessionsjson

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// TryLock takes an exclusive advisory lock on f without waiting (flock LOCK_EX|LOCK_NB, the
// lock the runtime's gateway.lock and repair lock use); held reports that another open file
// has it.
func TryLock(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

// Unlock releases a lock TryLock took.
func Unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// openNoFollow opens path with flag, never through a symbolic link (O_NOFOLLOW) and never
// blocking on a named pipe or a terminal.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
}

// FileID is the device and inode of fi (ok is false where the platform has none).
func FileID(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true // the fields' types differ between platforms
}

// KeepOwner gives f the owner of the file fi describes; EPERM (not root) is ignored: the
// file is then ours, as the original was.
func KeepOwner(f *os.File, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	err := f.Chown(int(st.Uid), int(st.Gid))
	if errors.Is(err, syscall.EPERM) {
		return nil
	}
	return err
}

// syncFileFlag is how SyncFile opens a file: read-only, which fsync accepts.
const syncFileFlag = os.O_RDONLY

// syncDir fsyncs a directory opened read-only.
func syncDir(dir string) error {
	return syncPath(dir, os.O_RDONLY, "dir")
}

// CrossDevice reports whether err is a rename's refusal to move a file to another filesystem.
func CrossDevice(err error) bool {
	return errors.Is(err, syscall.EXDEV)
}
