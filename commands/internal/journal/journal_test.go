package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
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
	if err := os.Symlink(t.TempDir(), filepath.Join(journals, "linked.files")); err != nil {
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
		{"stash in a linked .files directory", FileImage{Path: transcript, AfterStash: filepath.Join(journals, "linked.files", "s1.jsonl")}, false},
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
	f.Add([]byte(`{"version": 2, "routing": [{"store": "sessions.json", "key": "k", "before": null, "after": {"a": 1}, "before_text": "{\"a\": NaN}"}]}`))
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

// TestWriteRefusesLinks: a journal is written only in its home's journal directory, never
// through a symbolic link (the file, its stash, the journal directory or <home>/sessionctl),
// and such a refusal is marked failure.Refused; a regular file left by an earlier attempt of
// the same write is replaced.
func TestWriteRefusesLinks(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, h sessionsjson.Home, path, outside string)
	}{
		{"tool dir", func(t *testing.T, h sessionsjson.Home, path, outside string) {
			mustLink(t, outside, h.ToolDir())
		}},
		{"journal dir", func(t *testing.T, h sessionsjson.Home, path, outside string) {
			mustMkdirAll(t, h.ToolDir())
			mustLink(t, outside, h.JournalDir())
		}},
		{"journal file", func(t *testing.T, h sessionsjson.Home, path, outside string) {
			mustMkdirAll(t, h.JournalDir())
			mustLink(t, filepath.Join(outside, "j.json"), path)
		}},
		{"stash", func(t *testing.T, h sessionsjson.Home, path, outside string) {
			mustMkdirAll(t, h.JournalDir())
			mustLink(t, outside, StashDir(path))
		}},
		{"journal file is a named pipe", func(t *testing.T, h sessionsjson.Home, path, outside string) {
			mustMkdirAll(t, h.JournalDir())
			mkfifo(t, path)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, outside := sessionsjson.Home{Dir: t.TempDir()}, t.TempDir()
			path := filepath.Join(h.JournalDir(), "j.json")
			tt.plant(t, h, path, outside)
			err := Write(path, &Journal{Command: "x", Home: h.Dir})
			if !errors.Is(err, sessionsjson.ErrUnsafeToolPath) {
				t.Fatalf("Write = %v", err)
			}
			if class, _ := failure.ClassOf(err); class != failure.Refused {
				t.Errorf("class %v, want Refused", class)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("written outside the home: %v", entries)
			}
		})
	}
	t.Run("outside the journal directory", func(t *testing.T) {
		h := sessionsjson.Home{Dir: t.TempDir()}
		if err := Write(filepath.Join(h.Dir, "j.json"), &Journal{Home: h.Dir}); !errors.Is(err, sessionsjson.ErrUnsafeToolPath) {
			t.Fatalf("Write = %v", err)
		}
	})
	t.Run("an earlier attempt is replaced", func(t *testing.T) {
		h := sessionsjson.Home{Dir: t.TempDir()}
		path := filepath.Join(h.JournalDir(), "j.json")
		for _, cmd := range []string{"first", "second"} {
			if err := Write(path, &Journal{Command: cmd, Home: h.Dir}); err != nil {
				t.Fatal(err)
			}
		}
		j, err := Read(path)
		if err != nil || j.Command != "second" {
			t.Fatalf("Read = %+v, %v", j, err)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v", st.Mode())
		}
	})
}

// TestStashRefusesLink: a stash directory that is a symbolic link (planted after the journal
// was written) receives nothing: the files stay in place, with a warning.
func TestStashRefusesLink(t *testing.T) {
	h, outside := sessionsjson.Home{Dir: t.TempDir()}, t.TempDir()
	mustMkdirAll(t, h.SessionsDir())
	path := filepath.Join(h.JournalDir(), "j.json")
	if err := Write(path, &Journal{Home: h.Dir}); err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(h.SessionsDir(), "s1.jsonl")
	if err := os.WriteFile(transcript, []byte("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustLink(t, outside, StashDir(path))
	var warnings []string
	Stash(StashImages([]string{transcript}, StashDir(path)), func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) })
	if _, err := os.Stat(transcript); err != nil {
		t.Fatalf("transcript moved: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("moved outside the home: %v", entries)
	}
	if len(warnings) != 1 {
		t.Errorf("warnings: %q", warnings)
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustMkdirAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

// TestEntryImagesWithPythonConstants: an entry image holding NaN or Infinity (values the
// runtime's json reads and writes) is journaled as its text, in a version 2 journal, and read
// back byte for byte; a journal without one stays version 1.
func TestEntryImagesWithPythonConstants(t *testing.T) {
	h := sessionsjson.Home{Dir: t.TempDir()}
	before := json.RawMessage(`{"input_tokens":NaN,"x":[Infinity,-Infinity],"suspended":false}`)
	after := json.RawMessage(`{"input_tokens":NaN,"x":[Infinity,-Infinity],"suspended":true}`)
	for _, tt := range []struct {
		name    string
		routing []EntryImage
		version int
	}{
		{"standard JSON", []EntryImage{{Store: "sessions.json", Key: "k", Before: json.RawMessage(`{"a":1}`), After: json.RawMessage(`{"a":2}`)}}, 1},
		{"NaN and Infinity", []EntryImage{{Store: "sessions.json", Key: "k", Before: before, After: after}, {Store: "gateway_routing", Key: "k2", Before: json.RawMessage(`{"a":1}`), After: after}}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(h.JournalDir(), tt.name+".json")
			if err := Write(path, &Journal{Command: "suspend", Home: h.Dir, Routing: tt.routing}); err != nil {
				t.Fatal(err)
			}
			j, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if j.Version != tt.version {
				t.Errorf("version %d, want %d", j.Version, tt.version)
			}
			same := len(j.Routing) == len(tt.routing)
			for i := 0; same && i < len(j.Routing); i++ {
				got, want := j.Routing[i], tt.routing[i]
				same = got.Store == want.Store && got.Key == want.Key &&
					sessionsjson.SameValue(got.Before, want.Before) && sessionsjson.SameValue(got.After, want.After)
				if _, text := imageSide(want.Before, false); text != nil && string(got.Before) != *text {
					same = false
				}
			}
			if !same {
				t.Errorf("routing read back as %s", mustJSON(t, j.Routing))
			}
			data, _ := os.ReadFile(path)
			if !json.Valid(data) {
				t.Errorf("journal is not valid JSON:\n%s", data)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "both.json")
	if err := os.WriteFile(path, []byte(`{"version": 2, "routing": [{"store": "sessions.json", "key": "k", "before": {"a": 1}, "before_text": "{}", "after": null}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil {
		t.Error("an image with both forms was read")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestForHome: a journal written through a symbolic link to the home (or through the home,
// read through a link) is taken for the home in use, its paths rewritten below it; a journal
// of another home is refused; paths outside the journal's home are left for CheckPaths.
func TestForHome(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	mustLink(t, real, link)
	other := t.TempDir()
	files := func(home string) []FileImage {
		return []FileImage{
			{Path: home + "/sessions/s1.jsonl", BeforeStash: home + "/sessionctl/journal/j.files/s1.jsonl"},
			{Path: home + "/.restart_failure_counts"},
			{Path: "/etc/passwd"},
		}
	}
	for _, tt := range []struct{ from, to string }{{link, real}, {real, link}, {real, real}} {
		j := &Journal{Home: tt.from, Files: files(tt.from)}
		if err := j.ForHome(sessionsjson.Home{Dir: tt.to}); err != nil {
			t.Fatalf("%s for %s: %v", tt.from, tt.to, err)
		}
		if want := files(tt.to); j.Home != tt.to || !reflect.DeepEqual(j.Files, want) {
			t.Errorf("%s for %s: %s %+v", tt.from, tt.to, j.Home, j.Files)
		}
	}
	for _, from := range []string{other, real + "/sessions/..", "relative"} {
		j := &Journal{Home: from, Files: files(from)}
		if err := j.ForHome(sessionsjson.Home{Dir: link}); err == nil {
			t.Errorf("journal of %s taken for %s", from, link)
		}
	}
}

// TestSettleStashes: an undo's file records after whatever a crash or fault left. A transcript
// in its stash goes back; one never moved (still in place, no stash copy) or already back is
// dropped; one in both places with the same content (a move across filesystems that copied but
// could not remove its source) is dropped and its stash copy named for removal; one in both
// places with different content stays, for undo to refuse.
func TestSettleStashes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stashed := FileImage{Path: filepath.Join(dir, "a.jsonl"), AfterStash: write("a.stash", "A")}
	neverMoved := FileImage{Path: write("b.jsonl", "B"), AfterStash: filepath.Join(dir, "b.stash")}
	both := FileImage{Path: write("c.jsonl", "C"), AfterStash: write("c.stash", "C")}
	differs := FileImage{Path: write("d.jsonl", "D"), AfterStash: write("d.stash", "other")}
	j := &Journal{Files: []FileImage{stashed, neverMoved, both, differs}}
	var warnings []string
	dups := j.SettleStashes(func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) })
	if !reflect.DeepEqual(dups, []string{both.AfterStash}) {
		t.Errorf("duplicates = %v, want %v", dups, []string{both.AfterStash})
	}
	if !reflect.DeepEqual(j.Files, []FileImage{stashed, differs}) {
		t.Errorf("kept %+v", j.Files)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	for _, p := range []string{both.Path, both.AfterStash} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("SettleStashes removed %s: it only names the copy", p)
		}
	}
}

// TestAbsentImage: an absent side (entries rm) makes a version-5 journal and reads back as
// absent, distinct from an entry whose value is null; Undoes survives.
func TestAbsentImage(t *testing.T) {
	h := sessionsjson.Home{Dir: t.TempDir()}
	path := NewPath(h.JournalDir(), "entries rm")
	j := &Journal{Command: "entries rm", Home: h.Dir, Undoes: "/x/y.json", Routing: []EntryImage{
		{Store: "sessions.json", Key: "gone", Before: json.RawMessage(`{"a":1}`)},
		{Store: "sessions.json", Key: "null", Before: json.RawMessage(`null`), After: json.RawMessage(`{"a":1}`)},
	}}
	if err := Write(path, j); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != versionAbsent || got.Undoes != "/x/y.json" {
		t.Errorf("version %d, undoes %q", got.Version, got.Undoes)
	}
	if got.Routing[0].After != nil || string(got.Routing[1].Before) != "null" {
		t.Errorf("images: after %q, before %q", got.Routing[0].After, got.Routing[1].Before)
	}
	inv := got.Inverse()
	if inv.Routing[0].Before != nil || string(bytes.Join(bytes.Fields(inv.Routing[0].After), nil)) != `{"a":1}` {
		t.Errorf("inverse: %q → %q", inv.Routing[0].Before, inv.Routing[0].After)
	}
}

// TestDirMover: a file of the mover's source directory goes by name into its target (on Linux
// through the two directory descriptors), a file from elsewhere by path; a missing file is
// fs.ErrNotExist, and a move to another filesystem (when /dev/shm is one) is CrossDevice, for
// Stash to skip the one and copy the other.
func TestDirMover(t *testing.T) {
	from, to, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(from, "a.jsonl"), filepath.Join(elsewhere, "b.json")} {
		if err := os.WriteFile(p, []byte(filepath.Base(p)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m := openDirMover(from, to)
	defer m.close()
	if runtime.GOOS == "linux" && m.from < 0 {
		t.Fatal("the directories were not opened")
	}
	for _, name := range []string{"a.jsonl", "b.json"} {
		src := filepath.Join(from, name)
		if name == "b.json" {
			src = filepath.Join(elsewhere, name)
		}
		if err := m.move(src, filepath.Join(to, name)); err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(filepath.Join(to, name)); err != nil || string(data) != name {
			t.Fatalf("%s: moved %q, %v", name, data, err)
		}
		if _, err := os.Lstat(src); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s still in place: %v", src, err)
		}
	}
	if err := m.move(filepath.Join(from, "gone.json"), filepath.Join(to, "gone.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want ErrNotExist", err)
	}
	shm, err := os.MkdirTemp("/dev/shm", "sessionctl-test-")
	if err != nil {
		return
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	if err := os.WriteFile(filepath.Join(from, "c.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	far := openDirMover(from, shm)
	defer far.close()
	if err := far.move(filepath.Join(from, "c.json"), filepath.Join(shm, "c.json")); err != nil && !sessionsjson.CrossDevice(err) {
		t.Fatalf("move across filesystems: %v, want a cross-device error", err)
	}
}
