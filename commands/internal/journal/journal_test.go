package journal

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// TestEncodeJournalRoundTrip: every shape of journal the commands write encodes to valid JSON
// that readJournal gives back unchanged.
func TestEncodeJournalRoundTrip(t *testing.T) {
	content := []byte("{\"agent:main:x\": 3}")
	img := &statedb.RowImage{Table: "sessions", Key: map[string]statedb.Value{"id": statedb.TextValue("s1")},
		Columns: []string{"id", "ended_at"}, Values: []statedb.Value{statedb.TextValue("s1"), statedb.NullValue()}}
	journals := map[string]*Journal{
		"empty": {Version: 1, Command: "x", Storage: "json-primary"},
		"routing and an inline file": {Version: 1, Command: "suspend", Storage: "json-primary",
			Routing: []EntryImage{{Store: "sessions.json", Key: "k", Before: json.RawMessage(`{"a": 1}`), After: json.RawMessage(`{"a": 2}`)}},
			Files:   []FileImage{{Path: "/h/.restart_failure_counts", Before: &content}}},
		"rows and stashed files": {Version: 1, Command: "prune-ghosts", Storage: "db-primary",
			Files: []FileImage{{Path: "/h/sessions/s1.jsonl", BeforeStash: "/h/j.files/s1.jsonl"}, {Path: "/h/sessions/s1.json", AfterStash: "/h/j.files/s1.json"}},
			Rows:  []statedb.RowChange{{Table: "sessions", Key: img.Key, Before: img}, {Table: "sessions", Key: img.Key, Before: img, After: img}}},
	}
	for name, j := range journals {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := encode(&buf, j); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(buf.Bytes()) {
				t.Fatalf("invalid JSON:\n%s", buf.Bytes())
			}
			path := filepath.Join(t.TempDir(), "j.json")
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			back, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(j)
			got, _ := json.Marshal(back)
			var a, b any
			_ = json.Unmarshal(want, &a)
			_ = json.Unmarshal(got, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("round trip changed the journal:\n%s\n%s", want, got)
			}
		})
	}
}

// TestMoveFile: a rename on one filesystem, a synced copy across filesystems (when /dev/shm
// is a different one), never over an existing file.
func TestMoveFile(t *testing.T) {
	targets := map[string]string{"same filesystem": t.TempDir()}
	if shm, err := os.MkdirTemp("/dev/shm", "sessionctl-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(shm) })
		targets["across filesystems"] = shm
	}
	for name, dir := range targets {
		t.Run(name, func(t *testing.T) {
			from := filepath.Join(t.TempDir(), "s1.jsonl")
			if err := os.WriteFile(from, []byte("transcript"), 0o640); err != nil {
				t.Fatal(err)
			}
			to := filepath.Join(dir, "j.files", "s1.jsonl")
			if err := MoveFile(from, to); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(to)
			st, _ := os.Stat(to)
			if err != nil || string(data) != "transcript" || st.Mode().Perm() != 0o640 {
				t.Fatalf("moved file: %q, mode %v, %v", data, st.Mode(), err)
			}
			if _, err := os.Stat(from); !os.IsNotExist(err) {
				t.Fatalf("source still there: %v", err)
			}
			if err := os.WriteFile(from, []byte("new"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := MoveFile(from, to); err == nil {
				t.Fatal("moved over an existing file")
			}
			if data, _ := os.ReadFile(to); string(data) != "transcript" {
				t.Fatalf("existing file replaced: %q", data)
			}
			if data, _ := os.ReadFile(from); string(data) != "new" {
				t.Fatalf("source lost: %q", data)
			}
		})
	}
}

// TestJournalCheckPaths: undo only touches what sessionctl journals: the counts file, and
// transcripts directly in the sessions directory, moved to and from a stash of the same name
// in a <journal>.files directory or written back; never a symbolic link.
func TestJournalCheckPaths(t *testing.T) {
	home := sessionsjson.Home{Dir: t.TempDir()}
	sessions, journals := home.SessionsDir(), home.JournalDir()
	for _, dir := range []string{sessions, journals} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(sessions, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(sessions, "s1.jsonl")
	stash := filepath.Join(journals, "20261123T000000Z-prune-ghosts.files", "s1.jsonl")
	tests := []struct {
		name string
		file FileImage
		ok   bool
	}{
		{"transcript moved to its stash", FileImage{Path: transcript, BeforeStash: stash}, true},
		{"transcript moved back", FileImage{Path: transcript, AfterStash: stash}, true},
		{"counts file written back", FileImage{Path: home.CountsFile()}, true},
		{"transcript written back (journals before stashes)", FileImage{Path: transcript, Before: &[]byte{'x'}}, true},
		{"counts file moved", FileImage{Path: home.CountsFile(), BeforeStash: filepath.Join(filepath.Dir(stash), ".restart_failure_counts")}, false},
		{"another file of the home written back", FileImage{Path: home.SessionsJSON()}, false},
		{"state.db written back", FileImage{Path: home.StateDB()}, false},
		{"file outside the home", FileImage{Path: "/etc/passwd"}, false},
		{"routing index moved", FileImage{Path: home.SessionsJSON(), BeforeStash: filepath.Join(filepath.Dir(stash), "sessions.json")}, false},
		{"file climbing out of the sessions directory", FileImage{Path: sessions + "/../state.db", BeforeStash: stash}, false},
		{"file below the sessions directory", FileImage{Path: filepath.Join(sessions, "sub", "s1.jsonl"), BeforeStash: stash}, false},
		{"relative path", FileImage{Path: "sessions/s1.jsonl", BeforeStash: stash}, false},
		{"symbolic link", FileImage{Path: filepath.Join(sessions, "link.jsonl"), BeforeStash: filepath.Join(filepath.Dir(stash), "link.jsonl")}, false},
		{"stash of another name", FileImage{Path: transcript, AfterStash: filepath.Join(filepath.Dir(stash), "s2.jsonl")}, false},
		{"stash outside a .files directory", FileImage{Path: transcript, AfterStash: filepath.Join(journals, "s1.jsonl")}, false},
		{"stash in the sessions directory", FileImage{Path: transcript, AfterStash: filepath.Join(sessions, "x.files", "s1.jsonl")}, false},
		{"stash climbing out", FileImage{Path: transcript, BeforeStash: journals + "/j.files/../../../s1.jsonl"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := (&Journal{Files: []FileImage{tt.file}}).CheckPaths(home)
			if (err == nil) != tt.ok {
				t.Fatalf("checkPaths(%+v) = %v, want ok=%v", tt.file, err, tt.ok)
			}
		})
	}
}

// FuzzReadJournal: any file either is refused with an error or reads into a journal that
// encodes and reads back to the same encoding.
func FuzzReadJournal(f *testing.F) {
	f.Add([]byte(`{"version": 1, "command": "suspend", "home": "/h", "files": [{"path": "/h/x", "before": "YQ==", "after": null}]}`))
	f.Add([]byte(`{"version": 1, "rows": [{"table": "sessions", "key": {"id": {"text": "s1"}}, "before": null, "after": null}]}`))
	f.Add([]byte(`{"version": 2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "j.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		j, err := Read(path)
		if err != nil {
			return
		}
		var first, second bytes.Buffer
		if err := encode(&first, j); err != nil {
			return // a value JSON reads but the row encoder refuses
		}
		if err := os.WriteFile(path, first.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := Read(path)
		if err != nil {
			t.Fatalf("re-reading an encoded journal: %v\n%s", err, first.Bytes())
		}
		if err := encode(&second, again); err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("encoding not stable:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}
