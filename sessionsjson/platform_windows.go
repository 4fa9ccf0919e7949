package sessionsjson

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffsetHigh places the one byte TryLock locks far past any content: Windows byte-range
// locks are mandatory, and the lock file's pid must stay readable.
const lockOffsetHigh = 0x7fffffff

// TryLock takes an exclusive lock on f without waiting (LockFileEx with
// LOCKFILE_FAIL_IMMEDIATELY); held reports that another open file has it.
func TryLock(f *os.File) (held bool, err error) {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return true, nil
	}
	return false, err
}

// Unlock releases a lock TryLock took.
func Unlock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// openNoFollow opens path with flag, refusing a symbolic link. Windows has no O_NOFOLLOW:
// the link is looked for before the open (a link swapped in between is not caught).
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link: %w", path, ErrUnsafeToolPath)
	}
	return os.OpenFile(path, flag, perm)
}

// FileID is the device and inode of fi: Windows' FileInfo has none (ok is false).
func FileID(fs.FileInfo) (dev, ino uint64, ok bool) {
	return 0, 0, false
}

// KeepOwner does nothing on Windows: a new file there gets its directory's inherited ACL.
func KeepOwner(*os.File, fs.FileInfo) error {
	return nil
}

// syncFileFlag is how SyncFile opens a file: for writing, as FlushFileBuffers requires.
const syncFileFlag = os.O_RDWR

// syncDir does nothing on Windows (SyncDir).
func syncDir(string) error { return nil }

// CrossDevice reports whether err is a rename's refusal to move a file to another volume
// (MoveFileEx: ERROR_NOT_SAME_DEVICE; Go maps no Windows error to syscall.EXDEV).
func CrossDevice(err error) bool {
	return errors.Is(err, windows.ERROR_NOT_SAME_DEVICE)
}
