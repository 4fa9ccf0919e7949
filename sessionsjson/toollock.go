package sessionsjson

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrUnsafeToolPath reports a symbolic link, or a file of the wrong type, where sessionctl
// keeps its own files under <home>/sessionctl/ (following it would write outside the home),
// or a path there it may not create or open (permission denied, a read-only file system):
// one class, which every write refuses (exit 3; docs/json.md).
var ErrUnsafeToolPath = errors.New("a symbolic link, a file of the wrong type, or a path sessionctl may not write where it keeps its files (<home>/sessionctl/)")

// toolPathError marks err, from creating or opening a path under <home>/sessionctl/, as
// ErrUnsafeToolPath when it says the path cannot be used there: permission denied, a
// read-only file system, a directory where a file belongs, or a file where a directory
// belongs.
func toolPathError(err error) error {
	if err == nil || errors.Is(err, ErrUnsafeToolPath) {
		return err
	}
	for _, errno := range []error{fs.ErrPermission, syscall.EROFS, syscall.EISDIR, syscall.ENOTDIR} {
		if errors.Is(err, errno) {
			return fmt.Errorf("%w: %w", err, ErrUnsafeToolPath)
		}
	}
	return err
}

// checkToolPaths refuses, before anything is created, what AcquireToolLock would refuse
// after: a tool directory that is not a real directory, a lock that is not a regular file,
// a journal directory that is not a real directory or holds a symbolic link. Nothing
// missing is an error: a refused run creates nothing.
func checkToolPaths(h Home) error {
	for _, p := range []struct {
		path string
		ok   func(fs.FileMode) bool
		want string
	}{{h.ToolDir(), fs.FileMode.IsDir, "a directory"}, {h.ToolLockFile(), fs.FileMode.IsRegular, "a regular file"}} {
		fi, err := os.Lstat(p.path)
		if errors.Is(err, fs.ErrNotExist) && p.path == h.ToolDir() {
			return nil // nothing below it either
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return toolPathError(err)
		}
		if !p.ok(fi.Mode()) {
			return fmt.Errorf("%s is %s, not %s: %w", p.path, FileKind(fi.Mode()), p.want, ErrUnsafeToolPath)
		}
	}
	return toolPathError(checkJournalDir(h))
}

// AcquireToolLock takes the advisory lock <home>/sessionctl/lock (creating the directory
// 0700 and the file 0600) and records this process's pid in it. When another process holds
// it, the error wraps ErrLocked and names the holder's pid. release unlocks and closes; the
// file is kept.
//
// Nothing under <home>/sessionctl/ is followed: the directory must be a real directory, the
// lock a regular file (opened with O_NOFOLLOW), and, checked once the lock is held, the
// journal directory a real directory with no symbolic link among its entries; anything else
// is an ErrUnsafeToolPath error and nothing is written. The home itself may be reached
// through a symbolic link.
func AcquireToolLock(h Home) (release func() error, err error) {
	if err := checkToolPaths(h); err != nil {
		return nil, fmt.Errorf("tool lock: %w", err)
	}
	if _, err := MakeToolDir(h, h.ToolDir()); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("tool lock: home %s does not exist: %w", h.Dir, ErrNotFound)
		}
		return nil, fmt.Errorf("tool lock: %w", err)
	}
	f, err := OpenToolFile(h.ToolLockFile(), os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("tool lock: %w", err)
	}
	if held, err := TryLock(f); held || err != nil {
		f.Close()
		if held {
			return nil, fmt.Errorf("tool lock %s is held by %s: %w", h.ToolLockFile(), holder(h.ToolLockFile()), ErrLocked)
		}
		return nil, fmt.Errorf("tool lock %s: %w", h.ToolLockFile(), err)
	}
	release = func() error {
		uerr := Unlock(f)
		if err := f.Close(); uerr == nil {
			uerr = err
		}
		return uerr
	}
	if err := checkJournalDir(h); err != nil {
		_ = release()
		return nil, fmt.Errorf("tool lock: %w", err)
	}
	if err := writePID(f); err != nil {
		_ = release()
		return nil, fmt.Errorf("tool lock %s: %w", h.ToolLockFile(), err)
	}
	return release, nil
}

// RelBelow returns path relative to root, and whether path is root or below it (on every
// platform: filepath.Rel gives `..\x` on Windows).
func RelBelow(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel, false
	}
	return rel, true
}

// MakeToolDir creates dir (mode 0700), which must be <home>/sessionctl or below it, one
// component at a time without following a symbolic link: every component from
// <home>/sessionctl down must be a real directory (ErrUnsafeToolPath otherwise). It returns
// the directories whose entries must be synced for a file created in dir to survive a crash:
// dir, and the parent of each directory it created.
func MakeToolDir(h Home, dir string) ([]string, error) {
	top := h.ToolDir()
	rel, below := RelBelow(top, dir)
	if !below || !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%s is not below %s: %w", dir, top, ErrUnsafeToolPath)
	}
	path, sync := top, []string{dir}
	parts := []string{}
	if rel != "." {
		parts = strings.Split(rel, string(filepath.Separator))
	}
	for i := -1; i < len(parts); i++ {
		if i >= 0 {
			path = filepath.Join(path, parts[i])
		}
		created, err := toolDir(path)
		if err != nil {
			return nil, toolPathError(err)
		}
		if created {
			sync = append(sync, filepath.Dir(path))
		}
	}
	return sync, nil
}

// toolDir makes sure path is a real directory, creating it (0700) when absent.
func toolDir(path string) (created bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, err
		} else if err == nil {
			created = true
			if err := OwnLikeParent(path); err != nil {
				return false, err
			}
		}
		fi, err = os.Lstat(path) // the directory just made, or what won a race for the name
	}
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s is %s, not a directory: %w", path, FileKind(fi.Mode()), ErrUnsafeToolPath)
	}
	return created, nil
}

// OpenToolFile opens a file sessionctl keeps under <home>/sessionctl/ with flag (os.O_RDWR,
// os.O_CREATE, …; new files get mode 0600), never through a symbolic link (O_NOFOLLOW) and
// never blocking; anything but a regular file is refused. Its directory is not checked here
// (MakeToolDir does that).
func OpenToolFile(path string, flag int) (*os.File, error) {
	f, err := openNoFollow(path, flag, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link: %w", path, ErrUnsafeToolPath)
	}
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("%s is a socket: %w", path, ErrUnsafeToolPath)
	}
	if err != nil {
		return nil, toolPathError(err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is %s, not a regular file: %w", path, FileKind(fi.Mode()), ErrUnsafeToolPath)
	}
	if err == nil && flag&os.O_CREATE != 0 { // created now or by an earlier run as root: the home owner's
		err = OwnLikeParent(path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkJournalDir refuses a journal directory that is not a real directory or that holds a
// symbolic link (a journal or a <journal>.files stash a later write or undo would follow).
// A missing journal directory is fine.
func checkJournalDir(h Home) error {
	dir := h.JournalDir()
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a directory: %w", dir, FileKind(fi.Mode()), ErrUnsafeToolPath)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: %w", filepath.Join(dir, e.Name()), ErrUnsafeToolPath)
		}
	}
	return nil
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

func holder(path string) string {
	f, err := OpenToolFile(path, os.O_RDONLY)
	if err != nil {
		return "another sessionctl process"
	}
	defer f.Close()
	buf := make([]byte, 32)
	n, _ := f.Read(buf)
	pid := strings.TrimSpace(string(buf[:n]))
	if pid == "" {
		return "another sessionctl process"
	}
	return "pid " + pid
}
