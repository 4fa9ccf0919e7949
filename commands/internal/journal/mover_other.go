//go:build !linux

package journal

import "errors"

var errNoDirFds = errors.New("moves by directory descriptor are used on Linux only")

// openDir fails here: dirMover then moves by path.
func openDir(string) (int, error) { return -1, errNoDirFds }

func closeDir(int) {}

func renameAt(int, string, int, string) error { return errNoDirFds }
