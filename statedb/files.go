package statedb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TranscriptFiles returns the existing transcript files the runtime's _remove_session_files
// deletes for id in sessionsDir: <id>.json, <id>.jsonl and request_dump_<id>_*.json (id's
// glob metacharacters matched literally). session_<id>.json is not included. An id that
// could name a path outside sessionsDir is refused.
func TranscriptFiles(sessionsDir, id string) ([]string, error) {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\x00") {
		return nil, fmt.Errorf("transcript files: unsafe session id %q", id)
	}
	var out []string
	for _, name := range []string{id + ".json", id + ".jsonl"} {
		p := filepath.Join(sessionsDir, name)
		_, err := os.Lstat(p)
		if err == nil {
			out = append(out, p)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("transcript files: %w", err)
		}
	}
	dumps, err := filepath.Glob(filepath.Join(globEscape(sessionsDir), "request_dump_"+globEscape(id)+"_*.json"))
	if err != nil {
		return nil, fmt.Errorf("transcript files: %w", err)
	}
	return append(out, dumps...), nil
}

// globEscape makes s match itself literally in filepath.Glob.
func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`).Replace(s)
}
