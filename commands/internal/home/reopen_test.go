package home

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// reopenHome copies the r0703 fixture's home (sessions.json primary) into a temporary
// directory and returns its options.
func reopenHome(t *testing.T) Options {
	t.Helper()
	src := filepath.Join("..", "..", "..", "testdata", "fixtures", "r0703-52d0d671e", "home")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return Options{Home: sessionsjson.Home{Dir: dst}}
}

// TestReopenKeepsOnlyTheSameBytes: Reopen keeps the earlier decoded sessions.json when the
// file holds the same bytes, and decodes the file again when another writer changed it
// (even to the same size, the same inode and the same modification time), when the earlier
// document was edited, or when the file is gone.
func TestReopenKeepsOnlyTheSameBytes(t *testing.T) {
	ctx := context.Background()
	for name, tt := range map[string]struct {
		change func(t *testing.T, path string, prev *Mirror)
		kept   bool
	}{
		"unchanged": {kept: true},
		"same size, other bytes": {change: func(t *testing.T, path string, _ *Mirror) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			i := bytes.Index(data, []byte(`"updated_at": "2026-07-16T09:04:37.811354"`))
			if i < 0 {
				t.Fatal("no updated_at to change")
			}
			copy(data[i:], `"updated_at": "2026-07-16T09:04:38.811354"`)
			f, err := os.OpenFile(path, os.O_WRONLY, 0) // in place: same inode
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(data, 0); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		"longer": {change: func(t *testing.T, path string, _ *Mirror) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("\n"); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		"edited": {change: func(t *testing.T, _ string, prev *Mirror) {
			key := prev.Doc.Entries()[0].Key
			if err := prev.Doc.Remove(key); err != nil {
				t.Fatal(err)
			}
		}},
		"gone": {change: func(t *testing.T, path string, _ *Mirror) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			o := reopenHome(t)
			first, err := Open(ctx, o, Read)
			if err != nil {
				t.Fatal(err)
			}
			first.Close()
			prev := first.Mirror
			if prev.Doc == nil {
				t.Fatal("no sessions.json decoded")
			}
			if tt.change != nil {
				tt.change(t, o.Home.SessionsJSON(), &prev)
			}
			h, err := Reopen(ctx, o, Read, prev)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if kept := h.Mirror.Doc == prev.Doc; kept != tt.kept {
				t.Fatalf("document kept: %v, want %v", kept, tt.kept)
			}
			want, err := os.ReadFile(o.Home.SessionsJSON())
			switch {
			case os.IsNotExist(err):
				if h.Mirror.Doc != nil {
					t.Fatal("a document for a file that is gone")
				}
			case err != nil:
				t.Fatal(err)
			case h.Mirror.Doc == nil || !bytes.Equal(h.Mirror.Doc.Bytes(), want):
				t.Fatal("the document is not the file's bytes")
			case h.Mirror.Read == nil:
				t.Fatal("no stat of the file read")
			}
			if h.Mirror.Doc != nil && len(h.Routing.Entries) != len(h.Mirror.Doc.Entries()) {
				t.Fatalf("%d routing entries for %d in the document", len(h.Routing.Entries), len(h.Mirror.Doc.Entries()))
			}
		})
	}
}
