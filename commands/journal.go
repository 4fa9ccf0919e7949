package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/statedb"
)

// journal is the before/after record of one applied change, written (mode 0600) before the
// first byte of the change so that `undo` can restore it.
type journal struct {
	Version    int                 `json:"version"`
	Command    string              `json:"command"`
	CreatedAt  string              `json:"created_at"`
	Home       string              `json:"home"`
	Storage    string              `json:"storage"`
	Generation string              `json:"generation"`
	Scope      string              `json:"scope,omitempty"`
	Routing    []entryImage        `json:"routing,omitempty"`
	Files      []fileImage         `json:"files,omitempty"`
	Rows       []statedb.RowChange `json:"rows,omitempty"`
}

// entryImage is one routing entry before and after, in the store it lives in
// ("sessions.json" or "gateway_routing").
type entryImage struct {
	Store  string          `json:"store"`
	Key    string          `json:"key"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// fileImage is a whole small file before and after (nil: absent).
type fileImage struct {
	Path   string  `json:"path"`
	Before *[]byte `json:"before"`
	After  *[]byte `json:"after"`
}

// journalPath names a new journal for the running command:
// <home>/sessionctl/journal/<UTC time>-<command>.json.
func journalPath(o *options) string {
	name := time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + strings.ReplaceAll(o.command, " ", "-") + ".json"
	return filepath.Join(o.home.JournalDir(), name)
}

// writeJournal stores j at a new journal path and returns the path.
func writeJournal(o *options, j *journal) (string, error) {
	path := journalPath(o)
	return path, writeJournalAt(o, path, j)
}

// writeJournalAt writes j to path (mode 0600, synced). Writing the same journal again
// replaces it, so it may be called from a transaction that is retried.
func writeJournalAt(o *options, path string, j *journal) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create journal dir: %w", err)
	}
	j.Version = 1
	j.Command = o.command
	j.Home = o.home.Dir
	j.CreatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	data, err := encodeJournal(j)
	if err != nil {
		return fmt.Errorf("encode journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("create journal: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write journal: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync journal: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close journal: %w", err)
	}
	return nil
}

// encodeJournal returns j as JSON: everything but the row images indented by encoding/json,
// then the rows, one per line, by statedb's direct encoder (a state.db repair's journal
// holds thousands of full row images; encoding them by reflection and then indenting took
// most of the time the write lock was held).
func encodeJournal(j *journal) ([]byte, error) {
	head := *j
	head.Rows = nil
	data, err := json.MarshalIndent(&head, "", "  ")
	if err != nil || len(j.Rows) == 0 {
		return data, err
	}
	data = append(bytes.TrimSuffix(data, []byte("\n}")), ",\n  \"rows\": [\n"...)
	for i, row := range j.Rows {
		if i > 0 {
			data = append(data, ",\n"...)
		}
		if data, err = row.AppendJSON(data); err != nil {
			return nil, err
		}
	}
	return append(data, "\n  ]\n}\n"...), nil
}

// readJournal loads a journal file.
func readJournal(path string) (*journal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, withCode(ExitData, fmt.Errorf("journal %s is not a sessionctl journal: %w", path, err))
	}
	if j.Version != 1 {
		return nil, withCode(ExitData, fmt.Errorf("journal %s: unsupported version %d", path, j.Version))
	}
	return &j, nil
}
