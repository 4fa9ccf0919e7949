//go:build unix

package sessionsjson

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// OwnLikeParent gives path (not followed) the owner and group of the directory it is in,
// when this process runs as root and they differ: what sessionctl creates inside a home when
// run with sudo (its directory, lock, journals, stashes, backups) stays the home owner's, so
// that the owner's own later runs can take the lock and undo the journals — as SQLite gives
// its journal files the database's owner when run as root. For any other user it does
// nothing (a file it creates is its own, as the directory allowed).
func OwnLikeParent(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	parent, err := os.Lstat(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("owner of %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("owner of %s: %w", path, err)
	}
	want, got := parent.Sys().(*syscall.Stat_t), fi.Sys().(*syscall.Stat_t)
	if want == nil || got == nil || (want.Uid == got.Uid && want.Gid == got.Gid) {
		return nil
	}
	if err := os.Lchown(path, int(want.Uid), int(want.Gid)); err != nil {
		return fmt.Errorf("owner of %s: %w", path, err)
	}
	return nil
}

// OwnTreeLikeParent is OwnLikeParent for dir and everything below it, top down (each entry
// takes its directory's owner, which was given just before).
func OwnTreeLikeParent(dir string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return OwnLikeParent(path)
	})
}
