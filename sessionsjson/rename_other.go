//go:build unix && !linux && !darwin

package sessionsjson

import (
	"errors"
	"os"
)

// RenameNoReplace is not available on this system: it has no rename that refuses an
// existing name in one step.
func RenameNoReplace(from, to string) error {
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: errors.ErrUnsupported}
}
