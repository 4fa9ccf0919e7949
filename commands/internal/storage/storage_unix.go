//go:build unix

package storage

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// fileSystem identifies the filesystem of dir (its device) and the bytes free there for this
// user (statfs).
func fileSystem(dir string) (id string, avail int64, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return "", 0, fmt.Errorf("stat %s: %w", dir, err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return "", 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return strconv.FormatUint(uint64(st.Dev), 10), int64(fs.Bavail) * int64(fs.Bsize), nil
}

// sqliteTempDir is where SQLite's unix VFS puts temporary files (VACUUM's copy): the first
// of $SQLITE_TMPDIR, $TMPDIR, /var/tmp, /usr/tmp and /tmp that is a directory this process
// can write and search, else the working directory.
func sqliteTempDir() string {
	for _, d := range []string{os.Getenv("SQLITE_TMPDIR"), os.Getenv("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp"} {
		if d == "" {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() && syscall.Access(d, 0o3) == nil {
			return d
		}
	}
	return "."
}
