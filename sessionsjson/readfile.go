package sessionsjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Size limits of the files sessionctl reads whole. A file over its limit is refused (an
// ErrTooLarge error), never read into memory. The runtime has no limits, but no home it
// writes comes near them: a routing index of 100,000 entries is about 150 MB.
const (
	// MaxSessionsJSONBytes bounds sessions/sessions.json: 1 GiB.
	MaxSessionsJSONBytes = 1 << 30
	// MaxCountsBytes bounds .restart_failure_counts: 64 MiB (one key and count per session
	// active at a shutdown; a real file is a few hundred bytes).
	MaxCountsBytes = 64 << 20
	// MaxSmallFileBytes bounds the one-line files: active_profile, gateway.pid,
	// gateway_state.json, the tool lock: 1 MiB.
	MaxSmallFileBytes = 1 << 20
)

// ErrNotRegular reports a path that is not a regular file where one is expected: a named
// pipe (reading it would wait for a writer), a device (reading /dev/zero never ends), a
// socket or a directory. Such an error is also an ErrCorrupt.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge reports a file over the size limit of its kind. Such an error is also an
// ErrCorrupt.
var ErrTooLarge = errors.New("larger than sessionctl reads")

// fileError is a file ReadRegularFile refuses: "<path>: <what>". It is its kind
// (ErrNotRegular, ErrTooLarge) and an ErrCorrupt.
type fileError struct {
	path, what string
	kind       error
	endless    bool // a named pipe or a device: a plain read waits or never ends
}

func (e *fileError) Error() string { return e.path + ": " + e.what }

// Is makes the error its kind and an ErrCorrupt.
func (e *fileError) Is(target error) bool { return target == e.kind || target == ErrCorrupt }

// ReadRegularFile reads the regular file at path (a symbolic link is followed), refusing,
// before reading a byte, anything else (ErrNotRegular, naming what it is) and a file larger
// than limit bytes (ErrTooLarge). The open never blocks: a named pipe is opened without
// waiting for a writer, and then refused. A file that grows past limit while it is read is
// refused too. A missing file is an fs.ErrNotExist error, as from os.ReadFile.
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	f, size, err := openWithin(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, 0, size+1) // +1: the read at the end sees EOF without growing
	data, err = readAllInto(data, io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

// FileHolds reports whether the regular file at path holds exactly data, comparing as it
// reads (no copy of the file is made). A file that cannot be read holds nothing: the error
// says why.
func FileHolds(path string, data []byte) (bool, error) {
	f, size, err := openWithin(path, int64(len(data)))
	if errors.Is(err, ErrTooLarge) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if size != int64(len(data)) {
		return false, nil
	}
	buf := make([]byte, min(len(data)+1, 64<<10))
	for off := 0; ; {
		n, err := f.Read(buf)
		if n > len(data)-off || !bytes.Equal(buf[:n], data[off:off+n]) {
			return false, nil // longer than data now, or different
		}
		off += n
		if err == io.EOF {
			return off == len(data), nil
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// openWithin opens the regular file at path (OpenRegularFile) and returns its size, refusing
// a file larger than limit bytes (ErrTooLarge). The caller closes the file.
func openWithin(path string, limit int64) (*os.File, int64, error) {
	f, err := OpenRegularFile(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err == nil && st.Size() > limit {
		err = tooLarge(path, limit)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// OpenRegularFile opens path read-only without blocking (O_NONBLOCK, O_NOCTTY: a named pipe
// without a writer or a terminal never hangs the open) and refuses anything that is not a
// regular file with an ErrNotRegular error naming what it is. The caller closes the file.
func OpenRegularFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) { // a socket: there is nothing to open
			return nil, &fileError{path: path, what: "is a socket, not a regular file", kind: ErrNotRegular}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		endless := st.Mode()&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice) != 0
		return nil, &fileError{path: path, what: "is " + FileKind(st.Mode()) + ", not a regular file", kind: ErrNotRegular, endless: endless}
	}
	return f, nil
}

// ReadNeverEnds reports an error of ReadRegularFile for a named pipe or a device: a plain
// read of it (the runtime's) waits for a writer or never ends.
func ReadNeverEnds(err error) bool {
	var fe *fileError
	return errors.As(err, &fe) && fe.endless
}

// FileKind names the type of a file mode for messages: "a directory", "a named pipe
// (FIFO)", "a device", "a socket", "a symbolic link", "a regular file".
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file"
}

func tooLarge(path string, limit int64) error {
	return &fileError{path: path, what: "is larger than " + byteSize(limit) + ", the most sessionctl reads of it", kind: ErrTooLarge}
}

// byteSize writes a limit in the largest binary unit that divides it.
func byteSize(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// readAllInto reads r to EOF, appending to data (io.ReadAll that starts from a sized buffer).
func readAllInto(data []byte, r io.Reader) ([]byte, error) {
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return data, err
		}
	}
}
