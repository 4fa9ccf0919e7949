package holders

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
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
	if err := RefuseHeld(h, "compact", false, t.Logf); err != nil {
		t.Errorf("refused with only this process holding: %v", err)
	}
}

// TestRefuseHeldBlind: where the platform cannot be scanned, a write is refused (exit 4,
// naming --force) unless the operator says the processes are stopped, which is warned of; a
// holder that is seen refuses it whatever the operator says.
func TestRefuseHeldBlind(t *testing.T) {
	var warned []string
	warn := func(format string, a ...any) { warned = append(warned, fmt.Sprintf(format, a...)) }
	err := refuseHeld(Scan{}, ErrUnsupported, "compact", false, warn)
	if class, _ := failure.ClassOf(err); class != failure.Data || !strings.Contains(err.Error(), "--force") || len(warned) > 0 {
		t.Errorf("blind, no --force: %v (class %v), warned %q", err, class, warned)
	}
	if err := refuseHeld(Scan{}, fmt.Errorf("%w: no /proc", ErrUnsupported), "compact", true, warn); err != nil || len(warned) != 1 {
		t.Errorf("blind, --force: %v, warned %q", err, warned)
	}
	if err := refuseHeld(Scan{}, errors.New("reading /proc/1/fd: input/output error"), "compact", true, warn); err == nil || len(warned) != 1 {
		t.Errorf("a scan that failed otherwise, --force: %v (warned %q), want a refusal", err, warned)
	}
	held := Scan{Holders: []Holder{{PID: 42, Command: "python3", File: "state.db"}}}
	if err := refuseHeld(held, nil, "compact", true, warn); !errors.Is(err, ErrHeld) {
		t.Errorf("a holder seen, --force: %v, want ErrHeld", err)
	}
	if err := refuseHeld(Scan{Holders: []Holder{{PID: 42, File: "sessions.json"}}}, nil, "compact", false, warn); err != nil {
		t.Errorf("only sessions.json held: %v", err)
	}
}
