package metrics

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// Run is the run's own gauges.
type Run struct {
	Command  string
	Clock    sessionsjson.Clock // the run's clock (--now): the timestamp gauge
	ExitCode int
	Maintain *Maintain // maintain's counts; nil for the other commands
}

// Maintain is what a maintain run did.
type Maintain struct {
	Found, Planned, Changed, Journals int
}

// File is a --metrics-file checked before the run: its directory takes a new file. A nil
// *File records nothing (the run has no --metrics-file).
type File struct {
	path    string
	started time.Time // the duration gauge counts from here
	written bool
}

// Prepare checks that path can be written (its directory exists and takes a new file, and
// path is not a directory) before the run does anything, and starts the run's clock. A path
// that cannot be written is a data error (exit 4); nothing is left behind.
func Prepare(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("metrics file %s: %w", path, err))
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return nil, failure.Mark(failure.Data, fmt.Errorf("metrics file %s is a directory", path))
	}
	probe, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".probe-*")
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		err = pe.Err // the probe's name says nothing to the operator
	}
	if err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("metrics file %s cannot be written in %s: %w", path, filepath.Dir(abs), err))
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return nil, failure.Mark(failure.Data, fmt.Errorf("metrics file %s: %w", path, err))
	}
	return &File{path: abs, started: time.Now()}, nil
}

// replace replaces the file with the gauges of the run on the home at dir, and of what it
// found there (h; nil when the run stopped before it knew). It writes a temporary file beside it
// with prometheus.WriteToTextfile (mode 0644, for node_exporter), syncs it, renames it over
// the file and syncs the directory: the collector reads the old file or the new one, never a
// part. A file inside the home takes its directory's owner when run as root
// (sessionsjson.OwnLikeParent), as everything sessionctl creates there does. A failure is a
// data error (exit 4) and leaves the old file.
func (f *File) replace(dir string, run Run, h *Home) error {
	reg, err := registry(dir, run, time.Since(f.started), h)
	if err != nil {
		return fmt.Errorf("metrics file %s: %w", f.path, err)
	}
	tmp := filepath.Join(filepath.Dir(f.path), fmt.Sprintf(".%s.%d.tmp", filepath.Base(f.path), os.Getpid()))
	err = prometheus.WriteToTextfile(tmp, reg)
	if err == nil {
		err = sessionsjson.SyncFile(tmp)
	}
	if err == nil && inside(dir, f.path) { // run as root: a file inside the home is its directory's owner's
		err = sessionsjson.OwnLikeParent(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return failure.Mark(failure.Data, fmt.Errorf("metrics file %s: %w", f.path, err))
	}
	if err := sessionsjson.SyncDir(filepath.Dir(f.path)); err != nil {
		return failure.Mark(failure.Data, fmt.Errorf("metrics file %s: %w", f.path, err))
	}
	return nil
}

// inside reports whether path lies below the directory dir (both absolute or both relative
// to the same directory; "" is no directory).
func inside(dir, path string) bool {
	if dir == "" {
		return false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(abs, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
