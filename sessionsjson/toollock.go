package sessionsjson

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// AcquireToolLock takes the advisory lock <home>/sessionctl/lock (creating the directory
// 0700 and the file 0600) and records this process's pid in it. When another process holds
// it, the error wraps ErrLocked and names the holder's pid. release unlocks and closes; the
// file is kept.
func AcquireToolLock(h Home) (release func() error, err error) {
	if err := os.Mkdir(h.ToolDir(), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("tool lock: home %s does not exist: %w", h.Dir, ErrNotFound)
		}
		return nil, fmt.Errorf("tool lock: %w", err)
	}
	f, err := os.OpenFile(h.ToolLockFile(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("tool lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("tool lock %s is held by %s: %w", h.ToolLockFile(), holder(h.ToolLockFile()), ErrLocked)
		}
		return nil, fmt.Errorf("tool lock %s: %w", h.ToolLockFile(), err)
	}
	if err := writePID(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("tool lock %s: %w", h.ToolLockFile(), err)
	}
	return func() error {
		uerr := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if err := f.Close(); uerr == nil {
			uerr = err
		}
		return uerr
	}, nil
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

func holder(path string) string {
	data, err := ReadRegularFile(path, MaxSmallFileBytes)
	pid := strings.TrimSpace(string(data))
	if err != nil || pid == "" {
		return "another sessionctl process"
	}
	return "pid " + pid
}
