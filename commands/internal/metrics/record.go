package metrics

import (
	"context"
	"errors"
	"slices"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
)

// Record writes the file (nothing on a nil *File) for a run on h that ends with code: the
// home's gauges from h and the findings the run made there, and the run's own (m: maintain's
// counts, nil for the other commands).
func (f *File) Record(ctx context.Context, h *home.Home, findings []check.Finding, code int, m *Maintain) error {
	if f == nil {
		return nil
	}
	snap, err := Gather(ctx, h, findings)
	if err != nil {
		return err
	}
	return f.write(h.Opts, snap, code, m)
}

// RecordMaintain writes the file (nothing on a nil *File) for a maintain run that reported
// rep and ends with code: the home after the run (rep.Home) with its remaining findings, the
// ignored ones included (--ignore decides the exit code, not what the home holds).
func (f *File) RecordMaintain(ctx context.Context, rep *repair.MaintainReport, code int) error {
	d := rep.Data
	m := &Maintain{Found: d.Found, Planned: d.Planned, Changed: d.Changed, Journals: len(d.Journals)}
	return f.Record(ctx, rep.Home, slices.Concat(rep.Findings, d.Ignored), code, m)
}

// RecordInspected writes the file (nothing on a nil *File) for a run that succeeded without
// running the checks itself (status): the home is opened again as check opens it and every
// check runs, so that the file holds the same gauges whichever command wrote it.
func (f *File) RecordInspected(ctx context.Context, o home.Options) error {
	if f == nil {
		return nil
	}
	snap, err := Inspect(ctx, o)
	if err != nil {
		return err
	}
	return f.write(o, snap, 0, nil)
}

// RecordStopped writes the file (nothing on a nil *File, or when the run wrote it already) for
// a run that ended in err with exit code before it wrote the file: the run's gauges, the
// home's as far as it can still be read, and for maintain what it applied before it stopped.
func (f *File) RecordStopped(ctx context.Context, o home.Options, code int, err error) error {
	if f == nil || f.written {
		return nil
	}
	snap, _ := Inspect(ctx, o) // nil when the home cannot be read: the run's gauges only
	var m *Maintain
	if o.Command == "maintain" {
		m = &Maintain{}
		var inc *repair.Incomplete
		if errors.As(err, &inc) {
			m.Changed, m.Journals = len(inc.Outcome.Changes), len(inc.Outcome.Journals)
		}
	}
	return f.write(o, snap, code, m)
}

// write writes the file once the run's values are known.
func (f *File) write(o home.Options, snap *Home, code int, m *Maintain) error {
	f.written = true
	return f.replace(o.Home.Dir, Run{Command: o.Command, Clock: o.Clock, ExitCode: code, Maintain: m}, snap)
}
