//go:build unix

package statedb

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// The runtime's repair lock is an flock(2) lock: unix only.

// TestProbeRepairLock: an absent repair lock is free and is not created; a present, free one
// passes and is left exactly as it was (and free); one held by another open file description
// (as another process holds it) refuses with ErrRepairInProgress.
func TestProbeRepairLock(t *testing.T) {
	db := copyDB(t, guardGen)
	lock := RepairLockPath(db)
	if err := ProbeRepairLock(db); err != nil {
		t.Fatalf("absent lock: %v", err)
	}
	if _, err := os.Lstat(lock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the probe created %s (%v)", lock, err)
	}

	if err := os.WriteFile(lock, []byte("pid=4242\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1784000000, 0)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if err := ProbeRepairLock(db); err != nil {
		t.Fatalf("free lock: %v", err)
	}
	st, err := os.Stat(lock)
	if err != nil || st.Mode().Perm() != 0o444 || !st.ModTime().Equal(old) || st.Size() != 9 {
		t.Fatalf("the probe changed the lock file: %v %v", st, err)
	}
	assertFlockFree(t, lock)

	holder, err := os.Open(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	err = ProbeRepairLock(db)
	if !errors.Is(err, ErrRepairInProgress) {
		t.Fatalf("held lock: %v, want ErrRepairInProgress", err)
	}
	if err := CheckWriteSafety(db); !errors.Is(err, ErrRepairInProgress) {
		t.Fatalf("CheckWriteSafety under a held lock: %v", err)
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := ProbeRepairLock(db); err != nil {
		t.Fatalf("released lock: %v", err)
	}
}

// assertFlockFree fails unless path can be flocked exclusively right now.
func assertFlockFree(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("%s is still locked after the probe: %v", path, err)
	}
}
