package sessionsjson

import (
	"os"

	"golang.org/x/sys/unix"
)

// RenameNoReplace renames from to to, refusing (fs.ErrExist) when to exists, in one step
// (renameat2 RENAME_NOREPLACE): for a filesystem that has no hard links, where a link to the
// new name cannot stand in for it.
func RenameNoReplace(from, to string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
