// Package holders finds the processes that hold a home's state.db, its -wal and -shm, or
// sessions.json open, from the symbolic links of /proc/<pid>/fd (Linux only), including
// those that hold a deleted generation of one of them: a file replaced or removed while the
// process kept it open, whose writes go nowhere. The runtime has the same scan
// (count_db_holders, 64c342c1c); this one also says who and which file.
package holders

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// ErrUnsupported: the platform has no /proc/<pid>/fd to scan.
var ErrUnsupported = errors.New("holders: only Linux lists the files a process holds open (/proc/<pid>/fd)")

// ErrHeld refuses a write that needs the database to itself while another process holds it.
var ErrHeld = errors.New("another process holds the database open")

// Holder is one process holding one of the files open.
type Holder struct {
	PID     int    `json:"pid"`
	Command string `json:"command"` // /proc/<pid>/comm
	File    string `json:"file"`    // state.db, state.db-wal, state.db-shm or sessions.json
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"` // it holds a generation of the file that no longer exists there
	FDs     int    `json:"fds"`     // how many of its descriptors name it
}

// Scan is one pass over /proc.
type Scan struct {
	Holders []Holder `json:"holders"`
	// Unreadable counts the processes whose descriptors could not be read (another user's,
	// without the privilege): the list is complete only when it is 0.
	Unreadable int `json:"unreadable_processes"`
}

// target is one file of the home the scan looks for.
type target struct {
	name  string
	paths []string // the path as given and with its directory's symbolic links resolved
	dev   uint64   // of the file there now (0 when absent)
	ino   uint64
}

// Targets are the files of home the scan looks for.
func targets(h sessionsjson.Home) []target {
	files := []struct{ name, path string }{
		{"state.db", h.StateDB()}, {"state.db-wal", h.StateDB() + "-wal"}, {"state.db-shm", h.StateDB() + "-shm"},
		{"sessions.json", h.SessionsJSON()},
	}
	out := make([]target, 0, len(files))
	for _, f := range files {
		t := target{name: f.name, paths: []string{f.path}}
		if dir, err := filepath.EvalSymlinks(filepath.Dir(f.path)); err == nil && filepath.Join(dir, filepath.Base(f.path)) != f.path {
			t.paths = append(t.paths, filepath.Join(dir, filepath.Base(f.path)))
		}
		if fi, err := os.Stat(f.path); err == nil {
			t.dev, t.ino, _ = sessionsjson.FileID(fi)
		}
		out = append(out, t)
	}
	return out
}

// Find lists the processes other than this one that hold a file of the home open, ordered by
// pid and file. It opens no file of the home: it reads /proc's links and stats their targets.
func Find(h sessionsjson.Home) (Scan, error) {
	return find(h, "/proc", os.Getpid())
}

func find(h sessionsjson.Home, proc string, self int) (Scan, error) {
	if runtime.GOOS != "linux" {
		return Scan{}, ErrUnsupported
	}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return Scan{}, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	ts := targets(h)
	var s Scan
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		held, ok := scanProcess(filepath.Join(proc, e.Name()), pid, ts)
		if !ok {
			s.Unreadable++
			continue
		}
		s.Holders = append(s.Holders, held...)
	}
	sort.Slice(s.Holders, func(i, j int) bool {
		a, b := s.Holders[i], s.Holders[j]
		if a.PID != b.PID {
			return a.PID < b.PID
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return !a.Deleted && b.Deleted
	})
	return s, nil
}

// scanProcess returns what one process holds; ok is false when its descriptors cannot be
// listed while it still exists.
func scanProcess(dir string, pid int, ts []target) ([]Holder, bool) {
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	if err != nil {
		_, gone := os.Stat(dir)
		return nil, errors.Is(gone, fs.ErrNotExist)
	}
	byKey := map[string]*Holder{}
	var order []string
	for _, fd := range fds {
		link := filepath.Join(dir, "fd", fd.Name())
		dest, err := os.Readlink(link)
		if err != nil {
			continue
		}
		t, deleted, ok := match(link, dest, ts)
		if !ok {
			continue
		}
		key := t.name + "|" + strconv.FormatBool(deleted)
		if hd := byKey[key]; hd != nil {
			hd.FDs++
			continue
		}
		byKey[key] = &Holder{PID: pid, Command: command(dir), File: t.name, Path: t.paths[0], Deleted: deleted, FDs: 1}
		order = append(order, key)
	}
	out := make([]Holder, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out, true
}

// deletedSuffix ends the link of a descriptor whose file was unlinked.
const deletedSuffix = " (deleted)"

// match says which target a descriptor names: the file there now (same device and inode, or
// the same path), or a deleted generation of it (the link is the path with " (deleted)").
func match(link, dest string, ts []target) (target, bool, bool) {
	trimmed, deleted := strings.CutSuffix(dest, deletedSuffix)
	var dev, ino uint64
	fi, err := os.Stat(link)
	statted := err == nil
	if statted {
		dev, ino, _ = sessionsjson.FileID(fi)
	}
	for _, t := range ts {
		if statted && t.ino != 0 && dev == t.dev && ino == t.ino {
			return t, false, true
		}
		for _, p := range t.paths {
			if trimmed == p {
				return t, deleted || !statted || t.ino == 0 || dev != t.dev || ino != t.ino, true
			}
		}
	}
	return target{}, false, false
}

// command is the process's name (/proc/<pid>/comm), "?" when it cannot be read.
func command(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(data))
}

// Deleted returns the holders of a deleted generation of a file.
func (s Scan) Deleted() []Holder {
	var out []Holder
	for _, h := range s.Holders {
		if h.Deleted {
			out = append(out, h)
		}
	}
	return out
}

// Describe words holders in one line: "pid 123 (hermes): state.db, state.db-wal; …".
func Describe(hs []Holder) string {
	var parts []string
	byPID := map[int][]string{}
	var pids []int
	names := map[int]string{}
	for _, h := range hs {
		if _, ok := byPID[h.PID]; !ok {
			pids = append(pids, h.PID)
		}
		f := h.File
		if h.Deleted {
			f += " (deleted)"
		}
		byPID[h.PID] = append(byPID[h.PID], f)
		names[h.PID] = h.Command
	}
	for _, pid := range pids {
		parts = append(parts, fmt.Sprintf("pid %d (%s): %s", pid, names[pid], strings.Join(byPID[pid], ", ")))
	}
	return strings.Join(parts, "; ")
}

// RefuseHeld refuses (exit 3) a write that needs the database alone while another process
// holds state.db, its -wal or -shm, or a deleted generation of one of them. Where the
// platform cannot be scanned it refuses too (a data error, exit 4): the write would be blind;
// unless assumeStopped (--force: the operator has stopped every such process), which the
// warning blind reports.
func RefuseHeld(h sessionsjson.Home, what string, assumeStopped bool, blind func(string, ...any)) error {
	s, err := Find(h)
	return refuseHeld(s, err, what, assumeStopped, blind)
}

// refuseHeld is RefuseHeld on the result of a scan.
func refuseHeld(s Scan, err error, what string, assumeStopped bool, blind func(string, ...any)) error {
	switch {
	case errors.Is(err, ErrUnsupported) && assumeStopped:
		blind("%s: cannot tell which processes hold the database (%v); going ahead on --force", what, err)
		return nil
	case errors.Is(err, ErrUnsupported):
		return failure.Mark(failure.Data, fmt.Errorf("%s: cannot tell which processes hold the database: %w; stop the gateway and every process that opens state.db, then give `sessionctl %s` --force", what, err, what))
	case err != nil:
		return failure.Mark(failure.Data, fmt.Errorf("%s: cannot tell which processes hold the database: %w", what, err))
	}
	var held []Holder
	for _, hd := range s.Holders {
		if hd.File != "sessions.json" {
			held = append(held, hd)
		}
	}
	if len(held) == 0 {
		return nil
	}
	return failure.Mark(failure.Refused, fmt.Errorf("%s: %w (%s); stop it first (sessionctl holders lists them)", what, ErrHeld, Describe(held)))
}
