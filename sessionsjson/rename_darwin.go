package sessionsjson

import (
	"os"

	"golang.org/x/sys/unix"
)

// RenameNoReplace renames from to to, refusing (fs.ErrExist) when to exists, in one step
// (renamex_np RENAME_EXCL): for a filesystem that has no hard links.
func RenameNoReplace(from, to string) error {
	if err := unix.RenamexNp(from, to, unix.RENAME_EXCL); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
