package holders

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestFind: a descriptor on state.db is found by device and inode (also through a symbolic
// link to the home), one on a removed -wal is a deleted holder, one on another file is not a
// holder; this process is left out unless asked for.
func TestFind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(filepath.Join(real, "sessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	h := sessionsjson.Home{Dir: link}
	for _, name := range []string{"state.db", "state.db-wal", "other"} {
		if err := os.WriteFile(filepath.Join(real, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var files []*os.File
	for _, name := range []string{"state.db", "state.db-wal", "other"} {
		f, err := os.Open(filepath.Join(real, name))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if err := os.Remove(filepath.Join(real, "state.db-wal")); err != nil {
		t.Fatal(err)
	}
	s, err := find(h, "/proc", -1)
	if err != nil {
		t.Fatal(err)
	}
	var mine []Holder
	for _, hd := range s.Holders {
		if hd.PID == os.Getpid() {
			mine = append(mine, hd)
		}
	}
	if len(mine) != 2 || mine[0].File != "state.db" || mine[0].Deleted || mine[1].File != "state.db-wal" || !mine[1].Deleted {
		t.Fatalf("holders of this process: %+v", mine)
	}
	if got := len(Scan{Holders: mine}.Deleted()); got != 1 {
		t.Errorf("Deleted: %d", got)
	}
	if d := Describe(mine); d == "" {
		t.Error("empty description")
	}
	s, err = Find(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, hd := range s.Holders {
		if hd.PID == os.Getpid() {
			t.Errorf("Find lists this process: %+v", hd)
		}
	}
	if err := RefuseHeld(h, "compact"); err != nil {
		t.Errorf("refused with only this process holding: %v", err)
	}
}
