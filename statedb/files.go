package statedb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// TranscriptFiles returns, for each id, the existing transcript files the runtime's
// _remove_session_files deletes from sessionsDir: <id>.json, <id>.jsonl and
// request_dump_<id>_*.json. session_<id>.json is not included, nor sessions.json (the
// routing index, which a session with id "sessions" would name). The directory is read once,
// however many ids are asked for (ListTranscriptDir, then TranscriptDir.Files). An id that is
// not a safe file name (UnsafeFileID) has no files: the runtime's pattern would reach a path
// outside sessionsDir, another file of it, or none at all, and its row is the runtime's
// business, not its files. A missing directory has no files.
func TranscriptFiles(sessionsDir string, ids []string) (map[string][]string, error) {
	d, err := ListTranscriptDir(sessionsDir)
	if err != nil {
		return nil, err
	}
	return d.Files(ids), nil
}

// TranscriptDir is one listing of a sessions directory, read before the ids whose
// transcripts it holds are known (a repair lists it while its candidate scan runs).
type TranscriptDir struct {
	dir   string
	names []string
}

// ListTranscriptDir reads the names in sessionsDir once; a missing directory holds none.
func ListTranscriptDir(sessionsDir string) (TranscriptDir, error) {
	names, err := readDirNames(sessionsDir)
	if err != nil {
		return TranscriptDir{}, fmt.Errorf("transcript files: %w", err)
	}
	return TranscriptDir{dir: sessionsDir, names: names}, nil
}

// Files returns, for each id, its transcript files in the listing, as TranscriptFiles does.
func (d TranscriptDir) Files(ids []string) map[string][]string {
	wanted := make(map[string]bool, len(ids))
	for _, id := range ids {
		if UnsafeFileID(id) == "" {
			wanted[id] = true
		}
	}
	out := make(map[string][]string, len(ids))
	for _, name := range d.names {
		if id, ok := transcriptOwner(name, wanted); ok {
			out[id] = append(out[id], filepath.Join(d.dir, name))
		}
	}
	return out
}

// MaxFileIDBytes is the longest id that can name a file: NAME_MAX, 255 bytes.
const MaxFileIDBytes = 255

// UnsafeFileID says why a session id is not a safe file name ("" when it is): empty, "." or
// "..", a "/" (a sub-directory, or from the start an absolute path the runtime's Path join
// would take as is), a NUL byte (the runtime's unlink raises ValueError), or longer than
// MaxFileIDBytes.
func UnsafeFileID(id string) string {
	switch {
	case id == "":
		return "empty"
	case id == "." || id == "..":
		return "a relative directory name"
	case strings.HasPrefix(id, "/"):
		return "an absolute path"
	case strings.Contains(id, "/"):
		return `contains "/"`
	case strings.Contains(id, "\x00"):
		return "contains a NUL byte"
	case len(id) > MaxFileIDBytes:
		return fmt.Sprintf("longer than %d bytes", MaxFileIDBytes)
	}
	return ""
}

// routingIndexName is sessions.json, which the runtime's pattern would take for the
// transcript of a session whose id is "sessions".
const routingIndexName = "sessions.json"

// transcriptOwner returns the wanted id whose transcript file name is, if any. The routing
// index is never a transcript.
func transcriptOwner(name string, wanted map[string]bool) (string, bool) {
	if name == routingIndexName {
		return "", false
	}
	for _, ext := range []string{".jsonl", ".json"} {
		if id, ok := strings.CutSuffix(name, ext); ok && wanted[id] {
			return id, true
		}
	}
	rest, ok := strings.CutPrefix(name, "request_dump_")
	if !ok || !strings.HasSuffix(rest, ".json") {
		return "", false
	}
	// request_dump_<id>_<anything>.json: <id> may itself contain "_", so try every split.
	for i := strings.IndexByte(rest, '_'); i >= 0; i = nextUnderscore(rest, i) {
		if wanted[rest[:i]] {
			return rest[:i], true
		}
	}
	return "", false
}

func nextUnderscore(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '_')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}
