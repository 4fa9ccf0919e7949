package commands

import (
	"errors"
	"os"
	"testing"
)

// errNotOnWindows: the call has no Windows equivalent the tests need.
var errNotOnWindows = errors.New("not available on Windows")

// limitFileSize fails: Windows has no RLIMIT_FSIZE.
func limitFileSize(uint64) error { return errNotOnWindows }

// flockExclusive fails: Windows has no flock(2).
func flockExclusive(*os.File, bool) error { return errNotOnWindows }

// mkfifo skips the test: Windows has no named pipe in the file system.
func mkfifo(t *testing.T, _ string) {
	t.Skip("no named pipes in the file system on Windows")
}
