package space

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Transcript file kinds, by the name patterns the runtimes write in the sessions directory.
const (
	KindJSONL       = "jsonl"        // <id>.jsonl: the gateway's JSONL transcript (r0418, r0506; 351fdcc6e stopped it)
	KindJSON        = "json"         // <id>.json: a session file _remove_session_files deletes
	KindRequestDump = "request_dump" // request_dump_<id>_<stamp>.json: a failed request's dump
	KindSnapshot    = "snapshot"     // session_<id>.json: the agent's session log (never removed by the runtime)
	KindOther       = "other"        // anything else except sessions.json and dot files
)

// TranscriptFile is one file of the sessions directory that belongs to a session by its
// name: Owner is the id of the row it belongs to, "" when no row of state.db owns it.
type TranscriptFile struct {
	Name  string
	Kind  string
	Size  int64
	Owner string
}

// dirBatch is how many directory entries are read at a time (the listing is streamed).
const dirBatch = 512

// ScanTranscripts calls fn for every regular file of dir that a session's name pattern
// matches (and, as KindOther, every other regular file but the routing index sessions.json and
// dot files such as sessions.json's temporary files), resolving its owner among the row ids
// (nil: no state.db, every owner ""). A missing directory has no files.
func ScanTranscripts(dir string, ids map[string]bool, fn func(TranscriptFile)) error {
	d, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sessions directory: %w", err)
	}
	defer d.Close()
	for {
		entries, err := d.ReadDir(dirBatch)
		for _, e := range entries {
			if f, ok := classify(e, ids); ok {
				fn(f)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sessions directory: %w", err)
		}
	}
}

// classify reads one directory entry: a regular file, not the routing index nor a dot file.
func classify(e fs.DirEntry, ids map[string]bool) (TranscriptFile, bool) {
	name := e.Name()
	if !e.Type().IsRegular() || name == "sessions.json" || strings.HasPrefix(name, ".") {
		return TranscriptFile{}, false
	}
	info, err := e.Info()
	if err != nil {
		return TranscriptFile{}, false // removed meanwhile
	}
	kind, owner := ownerOf(name, ids)
	return TranscriptFile{Name: name, Kind: kind, Size: info.Size(), Owner: owner}, true
}

// ownerOf names a file's kind and the row that owns it ("" when none does). A name two
// patterns match goes to the row that exists: session_<x>.json is <id>.json of a row
// "session_<x>" before it is the snapshot of row <x>; request_dump_<id>_<stamp>.json takes
// the longest id before an underscore that is a row (ids hold underscores, and so may the
// stamp).
func ownerOf(name string, ids map[string]bool) (string, string) {
	if id, ok := strings.CutSuffix(name, ".jsonl"); ok {
		return KindJSONL, pick(ids, id)
	}
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return KindOther, ""
	}
	if rest, ok := strings.CutPrefix(base, "request_dump_"); ok {
		for i := len(rest) - 1; i > 0; i-- {
			if rest[i] == '_' && ids[rest[:i]] {
				return KindRequestDump, rest[:i]
			}
		}
		return KindRequestDump, ""
	}
	if rest, ok := strings.CutPrefix(base, "session_"); ok && !ids[base] {
		return KindSnapshot, pick(ids, rest)
	}
	return KindJSON, pick(ids, base)
}

// pick returns id when it is a row's, else "".
func pick(ids map[string]bool, id string) string {
	if ids[id] {
		return id
	}
	return ""
}
