//go:build !linux

package statedb

// unmovable reports whether the file at path (not followed) exists and is not a regular
// file. The attributes that stop a rename are read on Linux only (pinned_linux.go): a move
// that fails here for one of them is reported after the run, on stderr.
func unmovable(path string) bool { return notRegular(path) }
