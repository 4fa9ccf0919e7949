package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sessionctl/sessionctl/statedb"
)

// TestEncodeJournalRoundTrip: every shape of journal the commands write encodes to valid JSON
// that readJournal gives back unchanged.
func TestEncodeJournalRoundTrip(t *testing.T) {
	content := []byte("{\"agent:main:x\": 3}")
	img := &statedb.RowImage{Table: "sessions", Key: map[string]statedb.Value{"id": statedb.TextValue("s1")},
		Columns: []string{"id", "ended_at"}, Values: []statedb.Value{statedb.TextValue("s1"), statedb.NullValue()}}
	journals := map[string]*journal{
		"empty": {Version: 1, Command: "x", Storage: storageJSON},
		"routing and an inline file": {Version: 1, Command: "suspend", Storage: storageJSON,
			Routing: []entryImage{{Store: "sessions.json", Key: "k", Before: json.RawMessage(`{"a": 1}`), After: json.RawMessage(`{"a": 2}`)}},
			Files:   []fileImage{{Path: "/h/.restart_failure_counts", Before: &content}}},
		"rows and stashed files": {Version: 1, Command: "prune-ghosts", Storage: storageDB,
			Files: []fileImage{{Path: "/h/sessions/s1.jsonl", BeforeStash: "/h/j.files/s1.jsonl"}, {Path: "/h/sessions/s1.json", AfterStash: "/h/j.files/s1.json"}},
			Rows:  []statedb.RowChange{{Table: "sessions", Key: img.Key, Before: img}, {Table: "sessions", Key: img.Key, Before: img, After: img}}},
	}
	for name, j := range journals {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := encodeJournal(&buf, j); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(buf.Bytes()) {
				t.Fatalf("invalid JSON:\n%s", buf.Bytes())
			}
			path := filepath.Join(t.TempDir(), "j.json")
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			back, err := readJournal(path)
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
			if err := moveFile(from, to); err != nil {
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
			if err := moveFile(from, to); err == nil {
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
