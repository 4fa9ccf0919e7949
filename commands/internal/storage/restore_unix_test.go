//go:build unix

package storage

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/journal"
)

// TestRestoreKeepsModeAndOwner: the files a restore puts in place, and those its undo puts
// back, keep the mode (and, where this process may give it, the owner) of the files they
// replace: a gateway running as the home's owner must still open them.
func TestRestoreKeepsModeAndOwner(t *testing.T) {
	ctx := context.Background()
	dir := copyHome(t, "r0715-c2a3b9ce5")
	_, bd, err := Backup(ctx, open(t, dir, "backup"), BackupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"state.db", filepath.Join("sessions", "sessions.json")}
	owner := -1
	if os.Geteuid() == 0 {
		owner = 65534 // nobody
	}
	for _, f := range files {
		if err := os.Chmod(filepath.Join(dir, f), 0o644); err != nil {
			t.Fatal(err)
		}
		if owner >= 0 {
			if err := os.Chown(filepath.Join(dir, f), owner, owner); err != nil {
				t.Fatal(err)
			}
		}
	}
	execSQL(t, filepath.Join(dir, "state.db"), "DELETE FROM messages WHERE id = (SELECT min(id) FROM messages)")
	check := func(what string) {
		t.Helper()
		for _, f := range files {
			fi, err := os.Stat(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: %s has mode %v, want 0644", what, f, fi.Mode().Perm())
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && owner >= 0 && int(st.Uid) != owner {
				t.Errorf("%s: %s is owned by %d, want %d", what, f, st.Uid, owner)
			}
		}
	}
	out, _, err := Restore(ctx, open(t, dir, "restore"), bd.Backup, true)
	if err != nil || !out.Applied {
		t.Fatalf("restore: %v", err)
	}
	check("after the restore")
	j, err := journal.Read(out.Journal())
	if err != nil {
		t.Fatal(err)
	}
	if uo, _, err := UndoRestore(ctx, open(t, dir, "undo"), out.Journal(), j, true); err != nil || !uo.Applied {
		t.Fatalf("undo: %v", err)
	}
	check("after its undo")
}
