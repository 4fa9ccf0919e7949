package sessionsjson

import (
	"errors"
	"fmt"
	"runtime/debug"
	"unsafe"
)

// EachKeyOfFile calls fn with the key of each entry of the sessions.json at path, in the
// file's order (a duplicate key each time it appears; "_" keys left out where the generation
// skips them), checking the file as Decode does and decoding no entry; it fails where Decode
// fails. The file is refused as ReadRegularFile refuses it (a missing file is an
// fs.ErrNotExist error). Where the platform maps files it is never held whole in memory: it is
// mapped, and the pages already read leave memory as the scan moves on (elsewhere it is read
// whole). A file cut shorter while it is read ends the scan with an error, never a crash.
func EachKeyOfFile(path string, limit int64, rules Rules, fn func(key string)) (err error) {
	m, err := mapRegularFile(path, limit)
	if err != nil {
		return err
	}
	defer func() {
		if uerr := m.unmap(); err == nil && uerr != nil {
			err = fmt.Errorf("unmap %s: %w", path, uerr)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if f, fault := r.(interface{ Addr() uintptr }); !fault || !m.holds(f.Addr()) {
				panic(r) // not a fault in the mapping: not this function's to answer
			}
			err = fmt.Errorf("read %s: %w", path, errFileShrank)
		}
	}()
	return eachKey(m.data, rules, fn, m.release)
}

// errFileShrank reports a mapped file cut shorter while it was read.
var errFileShrank = errors.New("the file was cut shorter while it was read (changed in place, not replaced)")

// mapping is a file's contents in memory: mapped where the platform maps files, else read.
type mapping struct {
	data     []byte
	released int               // how much of data has been let go
	drop     func(n int) error // lets go of the pages of data[:n] (nil: nothing to let go)
	close    func() error      // ends the mapping (nil: nothing to end)
}

// releaseStep is how far a scan moves on between two releases of a mapped file's pages.
const releaseStep = 1 << 20

// release lets go of the pages of data before upTo, a releaseStep or more at a time; an upTo
// before the last one starts a new pass over data (eachKey checks the text, then scans it).
func (m *mapping) release(upTo int) {
	if upTo < m.released {
		m.released = 0
	}
	if m.drop == nil || upTo-m.released < releaseStep {
		return
	}
	if m.drop(upTo) == nil {
		m.released = upTo
	}
}

// holds reports whether addr lies in data.
func (m *mapping) holds(addr uintptr) bool {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
	return len(m.data) > 0 && addr >= base && addr < base+uintptr(len(m.data))
}

// unmap ends the mapping.
func (m *mapping) unmap() error {
	if m.close == nil {
		return nil
	}
	return m.close()
}
