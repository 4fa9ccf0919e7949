package upgrade

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// upgradeNow is B's clock in every upgrade pair (testdata/upgrade/README.md).
const upgradeNow = "2026-07-16T15:45:30.750000Z"

// pairsDir holds the upgrade pairs (a copy of the shared fixtures).
var pairsDir = filepath.Join("..", "..", "..", "testdata", "upgrade")

// expectedSummary is the part of expected/summary.json Start predicts.
type expectedSummary struct {
	To      struct{ Generation string } `json:"to"`
	Routing struct {
		EntriesBefore int `json:"entries_before"`
		Kept          int `json:"kept"`
		Dropped       []struct {
			Key, Reason string
			EndReason   string `json:"end_reason"`
		} `json:"dropped"`
		Changed []struct {
			Key       string
			SessionID struct{ After string } `json:"session_id"`
		} `json:"changed"`
		Imported     int `json:"imported"`
		LoadedByFrom int `json:"loaded_by_from"`
	} `json:"routing"`
	StartMaintenance StartMaintenance `json:"start_maintenance"`
	Loss             struct {
		DroppedLoadedByFrom int `json:"entries_dropped_loaded_by_from"`
		SessionsDeleted     int `json:"sessions_deleted"`
	} `json:"loss"`
}

// TestStartMatchesPairs predicts B's first start on each pair's home (copied, relocated) and
// compares it with what the real runtime of B did (expected/summary.json).
func TestStartMatchesPairs(t *testing.T) {
	t.Setenv("TZ", "UTC")
	pairs, err := filepath.Glob(filepath.Join(pairsDir, "*--*"))
	if err != nil || len(pairs) != 8 {
		t.Fatalf("pairs: %v (%v)", pairs, err)
	}
	for _, dir := range pairs {
		pair := filepath.Base(dir)
		t.Run(pair, func(t *testing.T) {
			var want expectedSummary
			readJSON(t, filepath.Join(dir, "expected", "summary.json"), &want)
			h := openPair(t, dir)
			to, err := ResolveTarget(want.To.Generation)
			if err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, h.Opts.Home.Dir)
			got, maint, err := Start(context.Background(), h, to)
			if err != nil {
				t.Fatal(err)
			}
			if after := snapshot(t, h.Opts.Home.Dir); !maps.Equal(before, after) {
				t.Errorf("the home changed:\n before %v\n after  %v", before, after)
			}
			compareRouting(t, got, want)
			compareMaintenance(t, maint, want.StartMaintenance)
			compareLoss(t, got, maint, want)
		})
	}
}

func compareRouting(t *testing.T, got Routing, want expectedSummary) {
	t.Helper()
	w := want.Routing
	if got.EntriesBefore != w.EntriesBefore || got.Kept != w.Kept || got.Imported != w.Imported || got.LoadedByFrom != w.LoadedByFrom {
		t.Errorf("routing: before %d kept %d imported %d loaded_by_from %d, want %d %d %d %d",
			got.EntriesBefore, got.Kept, got.Imported, got.LoadedByFrom, w.EntriesBefore, w.Kept, w.Imported, w.LoadedByFrom)
	}
	var gotDropped, wantDropped []string
	for _, d := range got.Dropped {
		gotDropped = append(gotDropped, d.Key+" "+d.Reason+" "+d.EndReason)
	}
	for _, d := range w.Dropped {
		wantDropped = append(wantDropped, d.Key+" "+d.Reason+" "+d.EndReason)
	}
	sameList(t, "dropped", gotDropped, wantDropped)
	var gotChanged, wantChanged []string
	for _, c := range got.Changed {
		gotChanged = append(gotChanged, c.Key+" -> "+c.After)
	}
	for _, c := range w.Changed {
		wantChanged = append(wantChanged, c.Key+" -> "+c.SessionID.After)
	}
	sameList(t, "changed", gotChanged, wantChanged)
}

func compareMaintenance(t *testing.T, got, want StartMaintenance) {
	t.Helper()
	if got.GhostPrune.Latched != want.GhostPrune.Latched || got.GhostPrune.WouldChange != want.GhostPrune.WouldChange {
		t.Errorf("ghost prune %+v, want %+v", got.GhostPrune, want.GhostPrune)
	}
	if got.OrphanFinalize.Latched != want.OrphanFinalize.Latched || got.OrphanFinalize.WouldChange != want.OrphanFinalize.WouldChange {
		t.Errorf("orphan finalize %+v, want %+v", got.OrphanFinalize, want.OrphanFinalize)
	}
	g, w := got.AutoPrune, want.AutoPrune
	if g.Enabled != w.Enabled || g.RetentionDays != w.RetentionDays || g.MinIntervalHours != w.MinIntervalHours ||
		g.Throttled != w.Throttled || g.WouldDelete != w.WouldDelete || g.Vacuum != w.Vacuum {
		t.Errorf("auto-prune %+v, want %+v", g, w)
	}
	if got.EntriesPrune.MaxAgeDays != want.EntriesPrune.MaxAgeDays || got.EntriesPrune.WouldDrop != want.EntriesPrune.WouldDrop {
		t.Errorf("entries prune %+v, want %+v", got.EntriesPrune, want.EntriesPrune)
	}
	sameList(t, "entries prune keys", got.EntriesPrune.Keys, want.EntriesPrune.Keys)
}

// compareLoss checks the totals of the runtime's effects: dropped entries the home's own
// generation loads, sessions deleted by the ghost prune and the auto-prune.
func compareLoss(t *testing.T, r Routing, m StartMaintenance, want expectedSummary) {
	t.Helper()
	regressions := 0
	for _, d := range r.Dropped {
		if d.LoadedByFrom {
			regressions++
		}
	}
	if regressions != want.Loss.DroppedLoadedByFrom {
		t.Errorf("dropped entries the home's generation loads: %d, want %d", regressions, want.Loss.DroppedLoadedByFrom)
	}
	if n := m.GhostPrune.WouldChange + m.AutoPrune.WouldDelete; n != want.Loss.SessionsDeleted {
		t.Errorf("sessions deleted: %d, want %d", n, want.Loss.SessionsDeleted)
	}
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	got, want = slices.Clone(got), slices.Clone(want)
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// openPair copies a pair's home into a temporary directory, relocates its gateway_routing
// rows to the copy's scope, and opens it as check does, at B's clock.
func openPair(t *testing.T, dir string) *home.Home {
	t.Helper()
	dst := copyHome(t, filepath.Join(dir, "home"))
	relocate(t, dst)
	clock, err := sessionsjson.ParseNow(upgradeNow)
	if err != nil {
		t.Fatal(err)
	}
	hm := sessionsjson.Home{Root: dst, Dir: dst}
	h, err := home.Open(context.Background(), home.Options{Home: hm, Clock: clock, Command: "upgrade-check"}, home.Inspect)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// snapshot maps every file under dir to its contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		out[path] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
