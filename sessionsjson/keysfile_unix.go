//go:build unix

package sessionsjson

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapRegularFile maps the regular file at path read-only, after the checks ReadRegularFile
// makes. An empty file is not mapped.
func mapRegularFile(path string, limit int64) (*mapping, error) {
	f, size, err := openWithin(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size == 0 {
		return &mapping{data: []byte{}}, nil
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	page := os.Getpagesize()
	return &mapping{data: data,
		drop: func(n int) error {
			return unix.Madvise(data[:n/page*page], unix.MADV_DONTNEED)
		},
		close: func() error { return unix.Munmap(data) },
	}, nil
}
