package statedb

import (
	"errors"
	"os"
)

// access approximates access(2) on Windows, which has none: the path must exist, and for a
// write (mode's W_OK bit) it must not carry the read-only attribute. ACLs are not consulted;
// a write they deny fails later and is rolled back.
func access(path string, mode uint32) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if mode&2 != 0 && !fi.IsDir() && fi.Mode().Perm()&0o200 == 0 {
		return errors.New("read-only")
	}
	return nil
}
