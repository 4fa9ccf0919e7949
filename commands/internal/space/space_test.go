package space

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestOwnerOf resolves transcript names to their rows as the runtime's patterns do.
func TestOwnerOf(t *testing.T) {
	ids := map[string]bool{"20260628_032229_435b03": true, "session_x": true, "a": true}
	cases := []struct{ name, kind, owner string }{
		{"20260628_032229_435b03.jsonl", KindJSONL, "20260628_032229_435b03"},
		{"20260628_032229_435b03.json", KindJSON, "20260628_032229_435b03"},
		{"request_dump_20260628_032229_435b03_1.json", KindRequestDump, "20260628_032229_435b03"},
		{"request_dump_20260628_032229_435b03_20260628_040000.json", KindRequestDump, "20260628_032229_435b03"},
		{"session_20260628_032229_435b03.json", KindSnapshot, "20260628_032229_435b03"},
		{"session_x.json", KindJSON, "session_x"}, // a row "session_x" owns it as its <id>.json
		{"session_a.json", KindSnapshot, "a"},
		{"gone.jsonl", KindJSONL, ""},
		{"request_dump_gone_1.json", KindRequestDump, ""},
		{"notes.txt", KindOther, ""},
	}
	for _, c := range cases {
		if kind, owner := ownerOf(c.name, ids); kind != c.kind || owner != c.owner {
			t.Errorf("ownerOf(%q) = %s, %q; want %s, %q", c.name, kind, owner, c.kind, c.owner)
		}
	}
}

// TestMeasureFixtures: on every generation's fixture home, dbstat covers every page in use
// (all but the free pages), the groups sum to the objects, the sessions by source and by age count every row,
// and no transcript is stray.
func TestMeasureFixtures(t *testing.T) {
	t.Setenv("TZ", "UTC")
	clock, err := sessionsjson.ParseNow("2026-07-16T09:30:00.250000Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, gen := range []string{"r0418-cb4addaca", "r0506-3b750715a", "r0525-3914089d5", "r0703-52d0d671e",
		"r0715-c2a3b9ce5", "r0817-481156139"} {
		t.Run(gen, func(t *testing.T) {
			dir := copyHome(t, filepath.Join("..", "..", "..", "testdata", "fixtures", gen, "home"))
			h, err := home.Open(context.Background(), home.Options{Home: sessionsjson.Home{Root: dir, Dir: dir}, Clock: clock, Command: "space"}, home.Read)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			r, err := Measure(context.Background(), h, Options{PruneDays: 90, EntriesDays: 90})
			if err != nil {
				t.Fatal(err)
			}
			var pages, grouped, sessions, aged int64
			for _, o := range r.Objects {
				pages += o.Pages
			}
			for _, g := range append(r.Tables, r.FTS...) {
				grouped += g.Pages
			}
			for _, s := range r.Sessions.BySource {
				sessions += s.Sessions
			}
			for _, b := range r.Sessions.ByAge {
				aged += b.Sessions
			}
			if r.Method != MethodDBStat || pages != r.File.PageCount-r.File.FreelistCount || grouped != pages {
				t.Errorf("method %s: %d pages in objects, %d grouped, file %d (free %d)", r.Method, pages, grouped, r.File.PageCount, r.File.FreelistCount)
			}
			if sessions == 0 || aged != sessions {
				t.Errorf("sessions by source %d, by age %d", sessions, aged)
			}
			if r.Transcripts.Files != 24 || r.Transcripts.Stray == nil || r.Transcripts.Stray.Files != 0 {
				t.Errorf("transcripts: %+v", r.Transcripts)
			}
			if r.Reclaim.Prune == nil || r.Reclaim.Prune.Sessions != 0 {
				t.Errorf("prune at 90 days on a fixture of July 2026: %+v", r.Reclaim.Prune)
			}
		})
	}
}

// copyHome copies a fixture home (regular files, one level of directories).
func copyHome(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestPruneEstimateFiles: the prune estimate counts the candidates' transcript files only
// where the generation's prune removes them (Maintenance.PruneFiles): r0418's removes none,
// though its candidates have files; r0506's candidates' files are counted.
func TestPruneEstimateFiles(t *testing.T) {
	t.Setenv("TZ", "UTC")
	clock, err := sessionsjson.ParseNow("2026-07-16T09:30:00.250000Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		gen   string
		files bool
	}{{"r0418-cb4addaca", false}, {"r0506-3b750715a", true}} {
		t.Run(c.gen, func(t *testing.T) {
			dir := copyHome(t, filepath.Join("..", "..", "..", "testdata", "fixtures", c.gen, "home"))
			h, err := home.Open(context.Background(), home.Options{Home: sessionsjson.Home{Root: dir, Dir: dir}, Clock: clock, Command: "space"}, home.Read)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			r, err := Measure(context.Background(), h, Options{PruneDays: 0, EntriesDays: 90})
			if err != nil {
				t.Fatal(err)
			}
			var onDisk int
			err = ScanTranscripts(h.Opts.Home.SessionsDir(), map[string]bool{}, func(TranscriptFile) { onDisk++ })
			p := r.Reclaim.Prune
			switch {
			case err != nil:
				t.Fatal(err)
			case p == nil || p.Sessions == 0 || onDisk == 0:
				t.Fatalf("prune at 0 days selects nothing here, or no transcripts: %+v, %d files", p, onDisk)
			case c.files && p.Transcripts.Files == 0:
				t.Errorf("%s removes transcript files; the estimate counts none: %+v", c.gen, p)
			case !c.files && (p.Transcripts.Files != 0 || p.Transcripts.Bytes != 0):
				t.Errorf("%s's prune removes no transcript file; the estimate counts %+v", c.gen, p.Transcripts)
			}
		})
	}
}
