package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

const fixtures = "../../../testdata/fixtures"

// fixtureNow is the fixtures' --now.
var fixtureNow = sessionsjson.Clock{UnixMicros: 1784194200250000, Unix: 1784194200.25}

// physicalCase is one generation's compact case of the hygiene fixtures (testdata/compact.json).
type physicalCase struct {
	InGeneration bool           `json:"in_generation"`
	Before       physicalFacts  `json:"before"`
	After        *physicalFacts `json:"after"`
	Returned     *int           `json:"returned"`
}

type physicalFacts struct {
	FreelistCount int64            `json:"freelist_count"`
	FTSSegments   map[string]int64 `json:"fts_segments"`
	WALBytes      int64            `json:"wal_bytes"`
}

func loadCases(t *testing.T) map[string]physicalCase {
	data, err := os.ReadFile("testdata/compact.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Generations map[string]physicalCase `json:"generations"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Generations
}

// copyHome copies a fixture generation's home into a new temporary directory.
func copyHome(t *testing.T, gen string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "home")
	src := filepath.Join(fixtures, gen, "home")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// open opens a home for the storage commands, as the face does.
func open(t *testing.T, dir, command string) *home.Home {
	t.Helper()
	h, err := home.Open(context.Background(), home.Options{Home: sessionsjson.Home{Dir: dir}, Clock: fixtureNow, Command: command,
		Warn: func(string, ...any) {}}, home.Database)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func physical(t *testing.T, dir string) statedb.Physical {
	t.Helper()
	p, err := physicalOf(context.Background(), filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func facts(p statedb.Physical) physicalFacts {
	return physicalFacts{FreelistCount: p.FreelistCount, FTSSegments: p.FTSSegments, WALBytes: p.WALBytes}
}

func sameFacts(a, b physicalFacts) bool {
	if a.FreelistCount != b.FreelistCount || a.WALBytes != b.WALBytes || len(a.FTSSegments) != len(b.FTSSegments) {
		return false
	}
	for k, v := range a.FTSSegments {
		if b.FTSSegments[k] != v {
			return false
		}
	}
	return true
}

// TestCompactFixtures replays the compact case of every generation: the fixture home's
// physical facts before are the fixture's, the plan changes nothing, the applied compact gives
// the fixture's facts after (FTS segments merged where the generation optimizes, no free
// page, no WAL) and the FTS indexes the runtime's vacuum() returns; r0418 has no vacuum()
// (exit 4, nothing written).
func TestCompactFixtures(t *testing.T) {
	for gen, c := range loadCases(t) {
		t.Run(gen, func(t *testing.T) {
			dir := copyHome(t, gen)
			if got := facts(physical(t, dir)); !sameFacts(got, c.Before) {
				t.Fatalf("before: %+v, the fixture says %+v", got, c.Before)
			}
			h := open(t, dir, "compact")
			out, d, err := Compact(context.Background(), h, false, "")
			if !c.InGeneration {
				if class, _ := failure.ClassOf(err); class != failure.Data || !strings.Contains(err.Error(), "has no vacuum()") {
					t.Fatalf("compact on %s: %v", gen, err)
				}
				return
			}
			if err != nil || out.Applied || d.After != nil {
				t.Fatalf("plan: applied %v, %v", out.Applied, err)
			}
			if got := facts(physical(t, dir)); !sameFacts(got, c.Before) {
				t.Fatalf("the plan changed the file: %+v", got)
			}
			out, d, err = Compact(context.Background(), open(t, dir, "compact"), true, "")
			if err != nil || !out.Applied || len(out.Journals) != 1 {
				t.Fatalf("apply: %+v, %v", out, err)
			}
			if got := facts(*d.After); !sameFacts(got, *c.After) {
				t.Errorf("after: %+v, the fixture says %+v", got, *c.After)
			}
			if got := facts(physical(t, dir)); !sameFacts(got, *c.After) {
				t.Errorf("after, read again: %+v, the fixture says %+v", got, *c.After)
			}
			if c.Returned != nil && len(d.Optimized) != *c.Returned {
				t.Errorf("optimized %v, the runtime returned %d", d.Optimized, *c.Returned)
			}
			if p := physical(t, dir); p.JournalMode != d.Before.JournalMode {
				t.Errorf("journal mode %s -> %s", d.Before.JournalMode, p.JournalMode)
			}
			assertIntegrity(t, filepath.Join(dir, "state.db"))
			j, err := journal.Read(out.Journals[0])
			if err != nil || j.Note == "" || len(j.Rows)+len(j.Files)+len(j.Routing) != 0 || j.Swap != nil {
				t.Errorf("journal: %+v, %v", j, err)
			}
		})
	}
}

func assertIntegrity(t *testing.T, path string) {
	t.Helper()
	if got := integrity(context.Background(), path); got != "ok" {
		t.Errorf("integrity of %s: %s", path, got)
	}
}

// TestCompactInto: a compacted copy, the home untouched, an existing file refused.
func TestCompactInto(t *testing.T) {
	dir := copyHome(t, "r0715-c2a3b9ce5")
	before, err := os.ReadFile(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	into := filepath.Join(t.TempDir(), "copy.db")
	out, d, err := Compact(context.Background(), open(t, dir, "compact"), false, into)
	if err != nil || !out.Applied || d.After == nil || d.After.FreelistCount != 0 {
		t.Fatalf("into: %+v %v", out, err)
	}
	assertIntegrity(t, into)
	after, _ := os.ReadFile(filepath.Join(dir, "state.db"))
	if string(after) != string(before) {
		t.Error("the home's state.db changed")
	}
	if _, _, err := Compact(context.Background(), open(t, dir, "compact"), false, into); err == nil {
		t.Error("an existing FILE was not refused")
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(into), ".*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestStructureSegments reads nSegment from FTS5 structure records.
func TestStructureSegments(t *testing.T) {
	for _, tt := range []struct {
		block []byte
		want  int64
		ok    bool
	}{
		{[]byte{0, 0, 0, 1, 0xFF, 0, 0, 1, 1, 13}, 13, true},
		{[]byte{0, 0, 0, 1, 1, 3}, 3, true},
		{[]byte{0, 0, 0, 1, 0xFF, 0, 0, 1, 2, 0x81, 0x00}, 128, true},
		{[]byte{0, 0, 0}, 0, false},
		{[]byte{0, 0, 0, 1, 0x81}, 0, false},
	} {
		got, ok := statedb.StructureSegments(tt.block)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%x: %d %v, want %d %v", tt.block, got, ok, tt.want, tt.ok)
		}
	}
}

// TestBackupVerifyRestoreUndo: a backup of each database generation verifies, a restore over
// a changed home gives back the backup's files, its undo gives back the changed home, and a
// second undo finds nothing to do.
func TestBackupVerifyRestoreUndo(t *testing.T) {
	ctx := context.Background()
	for _, gen := range []string{"r0418-cb4addaca", "r0715-c2a3b9ce5", "r0817-481156139"} {
		t.Run(gen, func(t *testing.T) {
			dir := copyHome(t, gen)
			_, bd, err := Backup(ctx, open(t, dir, "backup"), BackupOptions{Transcripts: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, findings, err := Verify(ctx, bd.Backup); err != nil || len(findings) > 0 {
				t.Fatalf("verify: %v %v", findings, err)
			}
			orig := snapshotFiles(t, dir)
			// change the home: sessions.json rewritten, a row deleted, the counts file added
			writeFile(t, filepath.Join(dir, "sessions", "sessions.json"), "{}")
			writeFile(t, filepath.Join(dir, ".restart_failure_counts"), `{"k": 9}`)
			execSQL(t, filepath.Join(dir, "state.db"), "DELETE FROM messages WHERE id = (SELECT min(id) FROM messages)")
			changed := snapshotFiles(t, dir)
			if sameCore(changed, orig) {
				t.Fatal("the home did not change")
			}

			out, rd, err := Restore(ctx, open(t, dir, "restore"), bd.Backup, true)
			if err != nil || !out.Applied {
				t.Fatalf("restore: %v", err)
			}
			if got := snapshotFiles(t, dir); !sameCore(got, orig) {
				t.Errorf("restored home differs from the backup's:\n%v\n%v", got, orig)
			}
			assertIntegrity(t, filepath.Join(dir, "state.db"))
			if _, findings, err := Verify(ctx, rd.Saved); err != nil || len(findings) > 0 {
				t.Errorf("the saved backup: %v %v", findings, err)
			}
			j, err := journal.Read(out.Journal())
			if err != nil || j.Swap == nil {
				t.Fatalf("journal: %v", err)
			}
			uo, _, err := UndoRestore(ctx, open(t, dir, "undo"), out.Journal(), j, true)
			if err != nil || !uo.Applied {
				t.Fatalf("undo: %v", err)
			}
			if got := snapshotFiles(t, dir); !sameCore(got, changed) {
				t.Errorf("undone home differs from the changed one")
			}
			j, _ = journal.Read(out.Journal())
			again, _, err := UndoRestore(ctx, open(t, dir, "undo"), out.Journal(), j, true)
			if err != nil || again.Applied || len(again.Changes) != 0 {
				t.Errorf("second undo: %+v %v", again, err)
			}
		})
	}
}

// execSQL runs one statement on a database.
func execSQL(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshotFiles maps the core files of a home to their digests (state.db's logical content:
// the dump of its rows is what the fixtures compare; here its integrity and row count).
func snapshotFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rel := range []string{relSessionsJSON, relCounts} {
		d, err := digestFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			out[rel] = "absent"
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = d.SHA256
	}
	out[relStateDB] = rowCounts(t, filepath.Join(dir, "state.db"))
	return out
}

// rowCounts is a cheap summary of a database's content: sessions and messages counts.
func rowCounts(t *testing.T, path string) string {
	t.Helper()
	db, err := statedb.OpenReadOnly(context.Background(), path)
	if err != nil {
		if errors.Is(err, statedb.ErrNotFound) {
			return "absent"
		}
		t.Fatal(err)
	}
	defer db.Close()
	tot, err := db.Totals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tot)
	return string(b)
}

func sameCore(a, b map[string]string) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return len(a) == len(b)
}

// TestVerifyDetectsDamage: a changed byte, a missing file, a foreign manifest and a corrupt
// database copy are each an error finding.
func TestVerifyDetectsDamage(t *testing.T) {
	ctx := context.Background()
	dir := copyHome(t, "r0715-c2a3b9ce5")
	backup := func() string {
		_, bd, err := Backup(ctx, open(t, dir, "backup"), BackupOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return bd.Backup
	}
	for _, tt := range []struct {
		name   string
		damage func(b string)
		want   check.ID
	}{
		{"byte", func(b string) { flipByte(t, filepath.Join(b, relCounts)) }, check.BackupFile},
		{"missing", func(b string) { os.Remove(filepath.Join(b, "sessions", "sessions.json")) }, check.BackupFile},
		{"manifest", func(b string) { writeFile(t, filepath.Join(b, ManifestName), `{"format":"other"}`) }, check.BackupManifest},
		{"integrity", func(b string) { corruptPage(t, b) }, check.BackupIntegrity},
		{"both", func(b string) { absentToo(t, b, relCounts) }, check.BackupManifest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := backup()
			tt.damage(b)
			_, findings, err := Verify(ctx, b)
			if err != nil || len(findings) == 0 || findings[0].Check != tt.want {
				t.Fatalf("findings %v, %v; want %s", findings, err, tt.want)
			}
			if _, _, err := Restore(ctx, open(t, dir, "restore"), b, true); err == nil {
				t.Error("restore of a damaged backup was not refused")
			}
		})
	}
}

func flipByte(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 0xff
	writeFile(t, path, string(data))
}

// absentToo lists rel, a file of the backup b, as absent as well in its manifest.
func absentToo(t *testing.T, b, rel string) {
	m, err := ReadManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	m.Absent = append(m.Absent, rel)
	if err := writeManifest(b, m); err != nil {
		t.Fatal(err)
	}
}

// corruptPage damages the backup's state.db in its last page and rewrites the manifest to
// match, so that only integrity_check can tell.
func corruptPage(t *testing.T, b string) {
	path := filepath.Join(b, relStateDB)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) - 4096; i < len(data)-4096+64; i++ {
		data[i] = 0x5a
	}
	writeFile(t, path, string(data))
	m, err := ReadManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := digestFile(path)
	for i := range m.Files {
		if m.Files[i].Path == relStateDB {
			m.Files[i].SHA256 = d.SHA256
		}
	}
	if err := writeManifest(b, m); err != nil {
		t.Fatal(err)
	}
}

// TestRotate: --keep N removes the oldest backups sessionctl wrote beyond N, keeps a
// directory it did not write, and keeps unlisted files of a rotated backup.
func TestRotate(t *testing.T) {
	ctx := context.Background()
	dir := copyHome(t, "r0715-c2a3b9ce5")
	to := t.TempDir()
	foreign := filepath.Join(to, "mine")
	if err := os.Mkdir(foreign, 0o700); err != nil {
		t.Fatal(err)
	}
	var made []string
	for i := range 3 {
		h := open(t, dir, "backup")
		h.Opts.Clock = sessionsjson.Clock{UnixMicros: fixtureNow.UnixMicros + int64(i)*1e6}
		_, bd, err := Backup(ctx, h, BackupOptions{To: to})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, bd.Backup)
	}
	writeFile(t, filepath.Join(made[0], "note.txt"), "mine")
	h := open(t, dir, "backup")
	h.Opts.Clock = sessionsjson.Clock{UnixMicros: fixtureNow.UnixMicros + 9e6}
	out, bd, err := Backup(ctx, h, BackupOptions{To: to, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(bd.Removed) != 2 || bd.Removed[0] != made[0] || bd.Removed[1] != made[1] {
		t.Errorf("removed %v", bd.Removed)
	}
	if len(out.Findings) != 1 || out.Findings[0].Check != check.BackupKept {
		t.Errorf("findings %v", out.Findings)
	}
	for _, p := range []string{foreign, filepath.Join(made[0], "note.txt"), made[2], bd.Backup} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(made[1]); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s kept", made[1])
	}
}

// TestRestoreRefusesGateway: while a gateway runs, restore and compact are refused (exit 3)
// and nothing is created (a holder other than the gateway: hygiene_backup.txtar).
func TestRestoreRefusesGateway(t *testing.T) {
	ctx := context.Background()
	dir := copyHome(t, "r0715-c2a3b9ce5")
	_, bd, err := Backup(ctx, open(t, dir, "backup"), BackupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := open(t, dir, "restore")
	h.Gateway.Running, h.Gateway.Detail = true, "test"
	_, _, err = Restore(ctx, h, bd.Backup, true)
	if class, _ := failure.ClassOf(err); class != failure.Refused || !errors.Is(err, ErrGatewayRunning) {
		t.Fatalf("restore while a gateway runs: %v", err)
	}
	h = open(t, dir, "compact")
	h.Gateway.Running = true
	if _, _, err := Compact(ctx, h, true, ""); !errors.Is(err, ErrGatewayRunning) {
		t.Fatalf("compact while a gateway runs: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sessionctl", "journal")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a refused run created the journal directory")
	}
}

// TestRestoreOverCorrupt: a home whose state.db SQLite cannot read (here zeroed) is restored
// from a backup; what it replaced is saved byte for byte (verify skips its integrity), and
// undo puts those bytes back.
func TestRestoreOverCorrupt(t *testing.T) {
	ctx := context.Background()
	dir := copyHome(t, "r0715-c2a3b9ce5")
	_, bd, err := Backup(ctx, open(t, dir, "backup"), BackupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "state.db")
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		data[i] = 0
	}
	writeFile(t, db, string(data))
	if _, err := home.Open(ctx, home.Options{Home: sessionsjson.Home{Dir: dir}, Clock: fixtureNow, Command: "restore"}, home.Database); !errors.Is(err, statedb.ErrCorrupt) {
		t.Fatalf("the zeroed home opens: %v", err)
	}
	h, err := OpenHome(ctx, home.Options{Home: sessionsjson.Home{Dir: dir}, Clock: fixtureNow, Command: "restore", Warn: func(string, ...any) {}}, true)
	if err != nil {
		t.Fatal(err)
	}
	out, rd, err := Restore(ctx, h, bd.Backup, true)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	assertIntegrity(t, db)
	m, err := ReadManifest(rd.Saved)
	if err != nil || !m.RawStateDB {
		t.Fatalf("saved manifest: %+v %v", m, err)
	}
	j, err := journal.Read(out.Journal())
	if err != nil {
		t.Fatal(err)
	}
	h, err = OpenHome(ctx, home.Options{Home: sessionsjson.Home{Dir: dir}, Clock: fixtureNow, Command: "undo", Warn: func(string, ...any) {}}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, _, err := UndoRestore(ctx, h, out.Journal(), j, true); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if got, _ := os.ReadFile(db); string(got) != string(data) {
		t.Error("undo did not put the zeroed bytes back")
	}
}
