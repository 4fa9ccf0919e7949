//go:build unix

package statedb

import (
	"os"
	"path/filepath"
	"syscall"
)

// reservedByte is the byte of the database file whose write lock SQLite's unix VFS takes for
// a write transaction (RESERVED: PENDING_BYTE 0x40000000 + 1).
const reservedByte = 0x40000001

// writeLocked reports whether another process holds the write lock of the database at path
// (SQLite's RESERVED lock): a transaction is under way there. The probe opens the file, so it
// runs only while this process has no open connection to it but the ours counted and already
// closed (a close would drop an open connection's locks): with one, the answer is yes, and
// nothing is touched.
func writeLocked(path string, ours int) bool {
	abs, err := filepath.Abs(path)
	if err != nil || connections.count(abs) > ours {
		return true
	}
	f, err := os.Open(abs)
	if err != nil {
		return true
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: reservedByte, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return true
	}
	return lk.Type != syscall.F_UNLCK
}
