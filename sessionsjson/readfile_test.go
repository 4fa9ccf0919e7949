package sessionsjson

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadRegularFile: a regular file (or a link to one) is read whole; a named pipe, a
// device, a directory or a socket is refused at once, naming what it is; a file over the
// limit is refused before it is read; a missing file is fs.ErrNotExist. Each read runs under
// a deadline, so a hang fails the test instead of stopping it.
func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	mustWrite(t, regular, "0123456789", 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("regular", link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	tests := []struct {
		name, path string
		limit      int64
		want       string // content, or the error's text
		is         error
		endless    bool
	}{
		{"regular", regular, 10, "0123456789", nil, false},
		{"link to a regular file", link, 100, "0123456789", nil, false},
		{"over the limit", regular, 9, "is larger than 9 bytes", ErrTooLarge, false},
		{"sparse, over the limit", sparse, MaxSessionsJSONBytes, "is larger than 1 GiB", ErrTooLarge, false},
		{"named pipe", fifo, 100, "is a named pipe (FIFO), not a regular file", ErrNotRegular, true},
		{"character device", "/dev/zero", MaxSessionsJSONBytes, "is a device, not a regular file", ErrNotRegular, true},
		{"directory", dir, 100, "is a directory, not a regular file", ErrNotRegular, false},
		{"socket", sock, 100, "is a socket, not a regular file", ErrNotRegular, false},
		{"missing", filepath.Join(dir, "missing"), 100, "no such file", fs.ErrNotExist, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				data []byte
				err  error
			}
			done := make(chan result, 1)
			go func() {
				data, err := ReadRegularFile(tt.path, tt.limit)
				done <- result{data, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("ReadRegularFile hangs")
			}
			if tt.is == nil {
				if r.err != nil || string(r.data) != tt.want {
					t.Fatalf("= %q, %v; want %q", r.data, r.err, tt.want)
				}
				return
			}
			if !errors.Is(r.err, tt.is) || !strings.Contains(r.err.Error(), tt.want) {
				t.Fatalf("error = %v; want %q (%v)", r.err, tt.want, tt.is)
			}
			if tt.is != fs.ErrNotExist && (!errors.Is(r.err, ErrCorrupt) || !strings.HasPrefix(r.err.Error(), tt.path+": ")) {
				t.Errorf("error %v: not an ErrCorrupt naming the file", r.err)
			}
			if ReadNeverEnds(r.err) != tt.endless {
				t.Errorf("ReadNeverEnds = %v", !tt.endless)
			}
		})
	}
}
