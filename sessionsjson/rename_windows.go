package sessionsjson

import (
	"os"

	"golang.org/x/sys/windows"
)

// RenameNoReplace renames from to to, refusing (fs.ErrExist) when to exists, in one step
// (MoveFileEx without MOVEFILE_REPLACE_EXISTING, written through): for a filesystem that has
// no hard links (FAT, exFAT).
func RenameNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err == nil {
		var t *uint16
		if t, err = windows.UTF16PtrFromString(to); err == nil {
			err = windows.MoveFileEx(f, t, windows.MOVEFILE_WRITE_THROUGH)
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
