//go:build unix

package statedb

import "syscall"

// access asks access(2) whether this process may use path as mode (R_OK|W_OK|X_OK bits).
func access(path string, mode uint32) error {
	return syscall.Access(path, mode)
}
