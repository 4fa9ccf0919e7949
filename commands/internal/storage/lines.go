package storage

import (
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/holders"
	"github.com/sessionctl/sessionctl/commands/internal/home"
)

// HoldersData is data of `holders --json`.
type HoldersData struct {
	holders.Scan
}

// Holders lists the processes holding the home's files open. Elsewhere than on Linux it is a
// data error (exit 4): there is nothing to scan.
func Holders(h *home.Home) (HoldersData, error) {
	s, err := holders.Find(h.Opts.Home)
	if err != nil {
		return HoldersData{}, failure.Mark(failure.Data, err)
	}
	if s.Holders == nil {
		s.Holders = []holders.Holder{}
	}
	return HoldersData{s}, nil
}

// Lines words the holders, one per line.
func (d HoldersData) Lines() []string {
	var out []string
	for _, hd := range d.Holders {
		what := hd.File
		if hd.Deleted {
			what += " (DELETED: its writes go nowhere; restart the process)"
		}
		out = append(out, fmt.Sprintf("pid %-7d %-16s %s", hd.PID, hd.Command, what))
	}
	if len(out) == 0 {
		out = append(out, "no other process holds state.db, its -wal or -shm, or sessions.json open")
	}
	if d.Unreadable > 0 {
		out = append(out, fmt.Sprintf("(%d processes of other users could not be inspected: run as their user or root for a complete list)", d.Unreadable))
	}
	return out
}

// Lines words a compact plan or run.
func (d *CompactData) Lines() []string {
	b := d.Before
	out := []string{fmt.Sprintf("state.db    %d bytes (%d pages of %d, %d free), WAL %d bytes, journal %s", b.FileBytes, b.PageCount, b.PageSize, b.FreelistCount, b.WALBytes, b.JournalMode)}
	if d.Into == "" {
		out = append(out, fmt.Sprintf("reclaims    %d bytes of free pages, %d bytes of WAL, FTS segments %s", d.Reclaimable.FreeBytes, d.Reclaimable.WALBytes, segments(d.Before.FTSSegments)))
		out = append(out, "runs        "+strings.Join(d.Steps, "; "))
	}
	for _, s := range d.Space {
		out = append(out, fmt.Sprintf("needs       %d bytes free in %s (%s): %d available", s.Needed, s.Dir, s.What, s.Available))
	}
	if a := d.After; a != nil {
		out = append(out, fmt.Sprintf("after       %d bytes (%d pages, %d free), WAL %d bytes, FTS segments %s", a.FileBytes, a.PageCount, a.FreelistCount, a.WALBytes, segments(a.FTSSegments)))
	}
	return out
}

// segments words FTS segment counts: "messages_fts 13, messages_fts_trigram 16".
func segments(m map[string]int64) string {
	var parts []string
	for _, t := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", t, m[t]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Lines words a backup.
func (d *BackupData) Lines() []string {
	out := []string{fmt.Sprintf("backup      %s (%d files, generation %s, schema v%d)", d.Backup, len(d.Manifest.Files), d.Manifest.Generation, d.Manifest.SchemaVersion)}
	for _, r := range d.Removed {
		out = append(out, "rotated out "+r)
	}
	return out
}

// Lines words a verification.
func (d *VerifyData) Lines() []string {
	if d.Manifest == nil {
		return nil
	}
	return []string{fmt.Sprintf("backup      %s taken %s of %s (generation %s, schema v%d): %d files, %d bytes checked; integrity %s",
		d.Backup, d.Manifest.CreatedAt, d.Manifest.Home, d.Manifest.Generation, d.Manifest.SchemaVersion, d.Files, d.Bytes, d.integrityWord())}
}

// integrityWord is the integrity found, or why it was not checked.
func (d *VerifyData) integrityWord() string {
	if d.Integrity == "" {
		return "not checked (" + d.unchecked + ")"
	}
	return d.Integrity
}

// Lines words a restore.
func (d *RestoreData) Lines() []string {
	out := []string{fmt.Sprintf("backup      %s taken %s (generation %s, schema v%d)", d.Backup, d.Manifest.CreatedAt, d.Manifest.Generation, d.Manifest.SchemaVersion)}
	if d.Saved != "" {
		out = append(out, "saved       what it replaced: "+d.Saved)
	}
	return out
}
