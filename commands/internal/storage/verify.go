package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/statedb"
)

// VerifyData is data of `backup verify --json`.
type VerifyData struct {
	Backup    string    `json:"backup"`
	Manifest  *Manifest `json:"manifest"`
	Files     int       `json:"files_checked"`
	Bytes     int64     `json:"bytes_checked"`
	Integrity string    `json:"integrity"` // "ok", the problems, or "" when not checked
	unchecked string    // why the integrity was not checked
}

// Verify checks the backup in dir: its manifest, each file's size and SHA-256, and
// `PRAGMA integrity_check` of its state.db (opened read-only, nothing created). What is wrong
// comes as error findings; an error is returned only when dir is not a directory.
func Verify(ctx context.Context, dir string) (*VerifyData, []check.Finding, error) {
	abs, err := absPath(dir)
	if err != nil {
		return nil, nil, err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, nil, failure.Mark(failure.Data, fmt.Errorf("backup %s: not a directory", dir))
	}
	d := &VerifyData{Backup: abs}
	m, err := ReadManifest(abs)
	if err != nil {
		return d, []check.Finding{{Check: check.BackupManifest, Severity: check.Error, Subject: abs,
			Message: "no readable sessionctl manifest (" + err.Error() + "): this is not a backup sessionctl can verify or restore"}}, nil
	}
	d.Manifest = m
	var findings []check.Finding
	for _, f := range m.Files {
		if problem := checkFile(abs, f); problem != "" {
			findings = append(findings, check.Finding{Check: check.BackupFile, Severity: check.Error, Subject: f.Path, Message: problem + ": the backup is damaged; do not restore it"})
			continue
		}
		d.Files++
		d.Bytes += f.Size
	}
	switch {
	case len(findings) > 0:
		d.unchecked = "a file failed its check"
	case !hasFile(m, relStateDB):
		d.unchecked = "no state.db"
	case m.RawStateDB:
		d.unchecked = "a raw copy of state.db"
	default:
		d.Integrity = integrity(ctx, filepath.Join(abs, relStateDB))
		if d.Integrity != "ok" {
			findings = append(findings, check.Finding{Check: check.BackupIntegrity, Severity: check.Error, Subject: relStateDB,
				Message: "PRAGMA integrity_check of the copy: " + d.Integrity + ": do not restore it"})
		}
	}
	return d, findings, nil
}

// checkFile says what is wrong with one file of a backup ("" when it matches the manifest).
func checkFile(dir string, f ManifestFile) string {
	path := filepath.Join(dir, filepath.FromSlash(f.Path))
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return "missing (" + err.Error() + ")"
	case !st.Mode().IsRegular():
		return "not a regular file"
	case st.Size() != f.Size:
		return fmt.Sprintf("%d bytes, the manifest says %d", st.Size(), f.Size)
	}
	d, err := digestFile(path)
	switch {
	case err != nil:
		return "unreadable (" + err.Error() + ")"
	case d.SHA256 != f.SHA256:
		return "SHA-256 " + d.SHA256 + ", the manifest says " + f.SHA256
	}
	return ""
}

// hasFile reports whether the manifest lists rel.
func hasFile(m *Manifest, rel string) bool {
	for _, f := range m.Files {
		if f.Path == rel {
			return true
		}
	}
	return false
}

// integrity runs PRAGMA integrity_check over a database copy: "ok" or the problems.
func integrity(ctx context.Context, path string) string {
	db, err := statedb.OpenReadOnly(ctx, path)
	if err != nil {
		return "cannot be opened: " + err.Error()
	}
	defer db.Close()
	problems, err := db.QuickCheck(ctx, true)
	switch {
	case err != nil:
		return err.Error()
	case len(problems) > 0:
		return strings.Join(problems[:min(len(problems), 5)], "; ")
	}
	return "ok"
}
