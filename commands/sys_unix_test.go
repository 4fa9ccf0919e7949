//go:build unix

package commands

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// limitFileSize sets this process's RLIMIT_FSIZE to n bytes (a write past it fails with
// EFBIG instead of killing the process with SIGXFSZ).
func limitFileSize(n uint64) error {
	signal.Ignore(syscall.SIGXFSZ)
	return syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n})
}

// flockExclusive takes an exclusive flock(2) on f, waiting for it unless nonBlocking.
func flockExclusive(f *os.File, nonBlocking bool) error {
	how := syscall.LOCK_EX
	if nonBlocking {
		how |= syscall.LOCK_NB
	}
	return syscall.Flock(int(f.Fd()), how)
}

// mkfifo makes a named pipe at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
