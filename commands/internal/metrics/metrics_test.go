package metrics

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// fixtures are the runtime fixtures' homes, one per generation.
var fixtures = filepath.Join("..", "..", "..", "testdata", "fixtures")

// testClock is the clock of the fixtures' expected runs.
var testClock = mustClock("2026-07-16T09:30:00.25Z")

func mustClock(s string) sessionsjson.Clock {
	c, err := sessionsjson.ParseNow(s)
	if err != nil {
		panic(err)
	}
	return c
}

// fixtureOptions copies generation gen's fixture home into a temporary directory and returns
// the options of a run of command on it.
func fixtureOptions(t *testing.T, gen, command string) home.Options {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "home")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(fixtures, gen, "home"))); err != nil {
		t.Fatal(err)
	}
	return home.Options{Home: sessionsjson.Home{Dir: dst}, Clock: testClock, Command: command}
}

// series is one parsed sample: its labels (home and command left out) and value.
type series map[string]float64

// parse reads a metrics file back with expfmt's text parser and checks what every series
// carries: the labels home and command, and nothing unlabelled. It returns each family's
// samples keyed by their other labels ("" when none), as "name=value,…".
func parse(t *testing.T, path, dir, command string) map[string]series {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	out := map[string]series{}
	for name, fam := range families {
		if !strings.HasPrefix(name, "sessionctl_") || fam.GetHelp() == "" || fam.GetType().String() != "GAUGE" {
			t.Errorf("%s: want a documented sessionctl_ gauge, got %s %q", name, fam.GetType(), fam.GetHelp())
		}
		out[name] = series{}
		for _, m := range fam.GetMetric() {
			var rest []string
			seen := map[string]string{}
			for _, l := range m.GetLabel() {
				seen[l.GetName()] = l.GetValue()
				if l.GetName() != "home" && l.GetName() != "command" {
					rest = append(rest, l.GetName()+"="+l.GetValue())
				}
			}
			if seen["home"] != dir || seen["command"] != command {
				t.Errorf("%s: labels %v, want home=%s command=%s", name, seen, dir, command)
			}
			out[name][strings.Join(rest, ",")] = m.GetGauge().GetValue()
		}
	}
	return out
}

// value is the value of an unlabelled gauge; ok is false when the file lacks it.
func (s series) value() (float64, bool) {
	v, ok := s[""]
	return v, ok
}

// TestRecordFixtures: on every generation's fixture home, check's metrics file parses back
// with expfmt and holds what the home and the run hold: the routing counts, the findings by
// check and severity (stuck loops, orphans and ghosts among them), state.db's bytes where
// the home has one, the clock and the exit code. Nothing is left beside the file.
func TestRecordFixtures(t *testing.T) {
	gens, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gens {
		if !g.IsDir() {
			continue
		}
		t.Run(g.Name(), func(t *testing.T) {
			ctx := context.Background()
			o := fixtureOptions(t, g.Name(), "check")
			h, err := home.Open(ctx, o, home.Inspect)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			findings, err := check.Run(ctx, h, false)
			if err != nil {
				t.Fatal(err)
			}
			counts, err := check.Counts(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "sessionctl.prom")
			f, err := Prepare(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Record(ctx, h, findings, 1, nil); err != nil {
				t.Fatal(err)
			}
			got := parse(t, out, o.Home.Dir, "check")
			want := map[string]float64{
				"sessionctl_routing_entries":            float64(counts.Entries),
				"sessionctl_routing_entries_skipped":    float64(counts.Skipped),
				"sessionctl_resume_pending":             float64(counts.ResumePending),
				"sessionctl_suspended":                  float64(counts.Suspended),
				"sessionctl_stale_resume_markers":       float64(counts.Stale),
				"sessionctl_stuck_loops":                float64(countOf(findings, check.CountsStuck)),
				"sessionctl_last_run_exit_code":         1,
				"sessionctl_last_run_timestamp_seconds": testClock.Unix,
				"sessionctl_gateway_running":            0,
				"sessionctl_sessions":                   float64(counts.Sessions),
				"sessionctl_sessions_open":              float64(counts.OpenSessions),
				"sessionctl_messages":                   float64(counts.Messages),
				"sessionctl_orphaned_continuations":     float64(countOf(findings, check.DBOrphanedContinuation)),
				"sessionctl_ghost_sessions":             float64(countOf(findings, check.DBTUIGhost)),
				"sessionctl_schema_version":             float64(h.Schema.Version),
				"sessionctl_database_bytes":             float64(fileSize(t, o.Home.StateDB())),
				"sessionctl_wal_bytes":                  float64(fileSize(t, o.Home.StateDB()+"-wal")),
				"sessionctl_free_bytes":                 float64(h.Schema.FreelistCount * pageSize(t, h)),
				"sessionctl_maintain_changes_applied":   -1, // maintain's only
				"sessionctl_last_run_duration_seconds":  -2, // any value
			}
			if h.DB == nil {
				t.Fatalf("%s: the fixture has no state.db", g.Name())
			}
			for name, w := range want {
				v, ok := got[name].value()
				switch {
				case w == -1 && ok:
					t.Errorf("%s present: %v", name, v)
				case w == -2 && (!ok || v < 0):
					t.Errorf("%s = %v (present %v)", name, v, ok)
				case w >= 0 && (!ok || v != w):
					t.Errorf("%s = %v (present %v), want %v", name, v, ok, w)
				}
			}
			wantFindings := series{}
			for _, f := range findings {
				wantFindings["check="+string(f.Check)+",severity="+string(f.Severity)]++
			}
			if !equalSeries(got["sessionctl_findings"], wantFindings) {
				t.Errorf("findings %v, want %v", got["sessionctl_findings"], wantFindings)
			}
			assertOnlyFile(t, out, 0o644)
		})
	}
}

func countOf(findings []check.Finding, id check.ID) int {
	n := 0
	for _, f := range findings {
		if f.Check == id {
			n++
		}
	}
	return n
}

func fileSize(t *testing.T, path string) int64 {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func pageSize(t *testing.T, h *home.Home) int64 {
	p, err := h.DB.Physical(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p.PageSize
}

func equalSeries(a, b series) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

// assertOnlyFile: path has mode perm and its directory holds nothing else (no temporary
// file, no probe).
func assertOnlyFile(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != perm {
		t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), perm)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want only %s", names, filepath.Base(path))
	}
}

// TestRecordMaintainAndStopped: maintain's file carries its counts; a run that stopped before
// it wrote the file still writes it — with the home's gauges when the home can be read, the
// run's only when it cannot — and a maintain stopped part-way counts what it applied.
func TestRecordMaintainAndStopped(t *testing.T) {
	ctx := context.Background()
	o := fixtureOptions(t, "r0817-481156139", "maintain")
	out := filepath.Join(t.TempDir(), "m.prom")

	h, err := home.Open(ctx, o, home.Survey)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	f, err := Prepare(out)
	if err != nil {
		t.Fatal(err)
	}
	rep := &repair.MaintainReport{Home: h, Data: repair.MaintainData{Found: 7, Changed: 5, Journals: []string{"a", "b"}},
		Findings: []check.Finding{{Check: check.CountsStuck, Severity: check.Warn}}}
	rep.Data.Ignored = []check.Finding{{Check: check.DBTUIGhost, Severity: check.Info}} // still describes the home
	if err := f.RecordMaintain(ctx, rep, 0); err != nil {
		t.Fatal(err)
	}
	got := parse(t, out, o.Home.Dir, "maintain")
	for name, want := range map[string]float64{"sessionctl_maintain_problems_found": 7, "sessionctl_maintain_changes_applied": 5,
		"sessionctl_maintain_changes_planned": 0, "sessionctl_maintain_journals": 2, "sessionctl_stuck_loops": 1, "sessionctl_ghost_sessions": 1,
		"sessionctl_last_run_exit_code": 0} {
		if v, ok := got[name].value(); !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	if err := f.RecordStopped(ctx, o, 6, errors.New("late")); err != nil || f == nil {
		t.Fatal(err) // written already: nothing to do
	}
	if v, _ := parse(t, out, o.Home.Dir, "maintain")["sessionctl_last_run_exit_code"].value(); v != 0 {
		t.Errorf("a run that wrote its file had it rewritten (exit code %v)", v)
	}

	for name, tt := range map[string]struct {
		o       home.Options
		err     error
		applied float64
		homeOK  bool
	}{
		"part-way": {o, &repair.Incomplete{Outcome: repair.Outcome{Changes: make([]repair.Change, 3), Journals: []string{"j"}}, Err: errors.New("boom")}, 3, true},
		"no home":  {home.Options{Home: sessionsjson.Home{Dir: filepath.Join(t.TempDir(), "none")}, Clock: testClock, Command: "maintain"}, errors.New("missing"), 0, false},
	} {
		t.Run(name, func(t *testing.T) {
			f, err := Prepare(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.RecordStopped(ctx, tt.o, 6, tt.err); err != nil {
				t.Fatal(err)
			}
			got := parse(t, out, tt.o.Home.Dir, "maintain")
			if v, _ := got["sessionctl_last_run_exit_code"].value(); v != 6 {
				t.Errorf("exit code %v, want 6", v)
			}
			if v, ok := got["sessionctl_maintain_changes_applied"].value(); !ok || v != tt.applied {
				t.Errorf("changes applied %v (present %v), want %v", v, ok, tt.applied)
			}
			if _, ok := got["sessionctl_routing_entries"].value(); ok != tt.homeOK {
				t.Errorf("home gauges present: %v, want %v", ok, tt.homeOK)
			}
		})
	}
}

// TestPrepareRefuses: a metrics file in a directory that does not exist, or a path that is a
// directory, is a data error before the run, and nothing is created.
func TestPrepareRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, path := range map[string]string{
		"no directory": filepath.Join(dir, "missing", "x.prom"),
		"a directory":  dir,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Prepare(path)
			if class, ok := failure.ClassOf(err); !ok || class != failure.Data {
				t.Fatalf("Prepare(%s): %v, want a data error", path, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left %v", entries)
			}
		})
	}
}

// TestDocsListEveryMetric: docs/metrics.md has one table row per metric a run can write, and
// none it cannot.
func TestDocsListEveryMetric(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(sessionctl_[a-z_]+)`").FindAllStringSubmatch(string(data), -1) {
		documented = append(documented, m[1])
	}
	sort.Strings(documented)
	h := &Home{Findings: []check.Finding{{Check: check.DBTUIGhost, Severity: check.Info}}, DB: new(statedb.Physical)}
	reg, err := registry("/h", Run{Command: "maintain", Maintain: &Maintain{}}, 0, h)
	if err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var emitted []string
	for _, f := range fams {
		emitted = append(emitted, f.GetName())
	}
	sort.Strings(emitted)
	if !slices.Equal(documented, emitted) {
		t.Errorf("docs/metrics.md documents\n%v\nruns write\n%v", documented, emitted)
	}
}

// TestReplaceFailureKeepsOldFile: a file that cannot be replaced at the end (here: the
// temporary name is taken by a directory) is a data error, and the old file stays whole.
func TestReplaceFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "m.prom")
	if err := os.WriteFile(out, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Prepare(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".m.prom."+strconv.Itoa(os.Getpid())+".tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	err = f.RecordStopped(context.Background(), home.Options{Home: sessionsjson.Home{Dir: filepath.Join(dir, "none")}, Clock: testClock, Command: "check"}, 4, errors.New("x"))
	if class, ok := failure.ClassOf(err); !ok || class != failure.Data {
		t.Fatalf("RecordStopped: %v, want a data error", err)
	}
	if data, err := os.ReadFile(out); err != nil || string(data) != "old\n" {
		t.Errorf("old file: %q, %v", data, err)
	}
}
