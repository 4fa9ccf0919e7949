package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// fileSystem identifies the filesystem of dir (its volume) and the bytes free there for this
// user (GetDiskFreeSpaceEx).
func fileSystem(dir string) (id string, avail int64, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", 0, err
	}
	p, err := windows.UTF16PtrFromString(abs)
	if err != nil {
		return "", 0, err
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return "", 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return strings.ToUpper(filepath.VolumeName(abs)), int64(free), nil
}

// sqliteTempDir is where SQLite's Windows VFS puts temporary files (VACUUM's copy): the
// system's temporary directory.
func sqliteTempDir() string {
	return os.TempDir()
}
