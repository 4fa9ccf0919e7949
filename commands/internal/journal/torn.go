package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// The fault points of Write (docs/decisions.md, "Issue 31").
const (
	// FaultJournalTorn leaves the journal cut at a random byte: the whole journal is written
	// to its temporary file, which is then truncated at a random length below its size and
	// renamed into place, and the process is killed — what a kill in the middle of writing
	// the journal in place would leave (older sessionctl versions wrote it so).
	FaultJournalTorn = "journal.torn"
	// FaultJournalBeforeRename stops the process once the temporary file is written and
	// synced, before it is renamed: no journal, a temporary file of sessionctl's own.
	FaultJournalBeforeRename = "journal.before-rename"
)

// ErrTorn says a journal is cut short: a prefix of a sessionctl journal that ends before
// the journal does. Journals are written whole (and synced) before the change they describe
// starts, so a torn journal names a change that never started: there is nothing to undo,
// and Settle moves it aside.
var ErrTorn = errors.New("the journal is cut short (torn): it names a change that never started")

// tornSuffix replaces .json in the name of a torn journal Settle moved aside.
const tornSuffix = ".torn"

// journalHead is how every journal Write writes starts.
var journalHead = []byte("{\n  \"version\": ")

// tornFault is FaultJournalTorn: when selected, tmp (written whole) is cut at a random
// length, renamed to path, the directories synced, and the process killed.
func tornFault(tmp, path string, dirs []string) {
	if !sessionsjson.FaultSelected(FaultJournalTorn) {
		return
	}
	if fi, err := os.Stat(tmp); err == nil && fi.Size() > 0 {
		_ = os.Truncate(tmp, rand.Int64N(fi.Size()))
	}
	_ = os.Rename(tmp, path)
	_ = SyncDirs(dirs...)
	sessionsjson.FaultPoint(FaultJournalTorn)
}

// torn reports whether data is a sessionctl journal cut short: empty or zeros only (a file
// whose blocks never reached the disk), or, with trailing zeros dropped, a prefix of a JSON
// object that begins as every journal does and ends before the object does.
func torn(data []byte) bool {
	data = bytes.TrimRight(data, "\x00")
	if len(data) == 0 {
		return true
	}
	if !bytes.HasPrefix(data, journalHead) && !bytes.HasPrefix(journalHead, data) {
		return false
	}
	var v json.RawMessage
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&v)
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// ReadOrTorn is Read, except that a torn journal in a home's journal directory (a name Write
// gives, in <home>/sessionctl/journal/) is returned as a Journal with Torn set and the home
// and command its path names, for undo to settle, instead of an error.
func ReadOrTorn(path string) (*Journal, error) {
	j, err := Read(path)
	if !errors.Is(err, ErrTorn) {
		return j, err
	}
	abs, aerr := filepath.Abs(path)
	stem, ok := strings.CutSuffix(filepath.Base(abs), ".json")
	dir := filepath.Dir(abs)
	if aerr != nil || !ok || !journalName.MatchString(stem) || filepath.Base(dir) != "journal" || filepath.Base(filepath.Dir(dir)) != "sessionctl" {
		return nil, err
	}
	_, command, _ := strings.Cut(stem, "-")
	return &Journal{Torn: true, Home: filepath.Dir(filepath.Dir(dir)), Command: command}, nil
}

// tornError marks the error of a torn journal (a data error: exit 4 where it is not
// settled).
func tornError(path string) error {
	return failure.Mark(failure.Data, fmt.Errorf("journal %s: %w (journals are written whole before their change; `sessionctl undo %s --apply` moves it aside)", path, ErrTorn, path))
}

// TornJournals lists the torn journals of the home's journal directory (regular files of a
// journal's name; nothing is followed). A journal whose last byte other than white space is
// the closing brace is complete (read no further): only the others are read whole.
func TornJournals(home sessionsjson.Home) []string {
	dir, entries, err := journalEntries(home)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		stem, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !journalName.MatchString(stem) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if endsComplete(path) {
			continue
		}
		if _, err := Read(path); errors.Is(err, ErrTorn) {
			out = append(out, path)
		}
	}
	return out
}

// endsComplete reports whether the file's last byte other than white space is '}'.
func endsComplete(path string) bool {
	f, err := sessionsjson.OpenToolFile(path, os.O_RDONLY)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	buf := make([]byte, min(fi.Size(), 64))
	if _, err := f.ReadAt(buf, fi.Size()-int64(len(buf))); err != nil {
		return false
	}
	buf = bytes.TrimRight(buf, " \t\r\n")
	return len(buf) > 0 && buf[len(buf)-1] == '}'
}

// tempPrefix starts the name of every temporary file sessionctl writes beside a home's
// files: never the runtime's .sessions_*.tmp or .restart_failure_counts_*.tmp.
const tempPrefix = ".sessionctl-"

// TempPattern is the pattern (for sessionsjson.WriteFileAtomic) of the temporary files the
// change journaled at journalPath writes beside the files it rewrites:
// .sessionctl-<journal name>-*.tmp. The journal names it (Temps) before any is created,
// which proves such a file sessionctl's.
func TempPattern(journalPath string) string {
	return tempPrefix + strings.TrimSuffix(filepath.Base(journalPath), ".json") + "-*.tmp"
}

// Temps is what a journal at journalPath records in Temps: its TempPattern in every
// directory its rewrites may put a temporary file in (WriteFileAtomic writes it beside the
// file's resolved target): sessions/ (sessions.json) and the home itself (the counts file),
// relative to the home, and the directory a symbolic link among the two points into, by its
// absolute path (slash-separated).
func Temps(home sessionsjson.Home, journalPath string) []string {
	name := TempPattern(journalPath)
	out := []string{"sessions/" + name, name}
	for _, d := range linkedDirs(home) {
		out = append(out, filepath.ToSlash(filepath.Join(d, name)))
	}
	return out
}

// linkedDirs lists the directories other than sessions/ and the home that a rewrite of
// sessions.json or of the counts file writes its temporary file in now: the directory of
// the target of a symbolic link among them (resolved as WriteFileAtomic resolves it).
func linkedDirs(home sessionsjson.Home) []string {
	var out []string
	for _, file := range []string{home.SessionsJSON(), home.CountsFile()} {
		d, err := sessionsjson.WriteDir(file)
		if err != nil || sameDir(d, home.SessionsDir()) || sameDir(d, home.Dir) || slices.Contains(out, d) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// sameDir reports whether a and b name the same existing directory.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// LeftoverTemps lists the temporary files of j that exist (regular files matching one of
// j.Temps; nothing is followed). A pattern is looked for only where sessionctl writes its
// temporary files (Temps): sessions/, the home, or the directory a symbolic link of the
// home's points into now; any other is ignored.
func LeftoverTemps(home sessionsjson.Home, j *Journal) []string {
	var out []string
	linked := linkedDirs(home)
	for _, pattern := range j.Temps {
		dir, base := path.Split(pattern)
		if !strings.HasPrefix(base, tempPrefix) || !strings.HasSuffix(base, ".tmp") || strings.Contains(base, `\`) {
			continue // a pattern sessionctl never writes
		}
		switch dir = strings.TrimSuffix(dir, "/"); {
		case dir == "sessions":
			dir = home.SessionsDir()
		case dir == "":
			dir = home.Dir
		case slices.Contains(linked, filepath.FromSlash(dir)):
			dir = filepath.FromSlash(dir)
		default:
			continue // a directory sessionctl writes no temporary file in (now)
		}
		matches, _ := filepath.Glob(filepath.Join(dir, base))
		for _, m := range matches {
			if isRegular(m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// OwnTemps lists the temporary files beside the home's files that sessionctl can prove its
// own: in a directory it writes them in (sessions/, the home, a symbolic link's target
// directory), named .sessionctl-<journal name>-*.tmp, and the journal of that name in the
// journal directory names the pattern (Temps). journal is that journal's path for each.
func OwnTemps(home sessionsjson.Home) (temps []string, journals map[string]string) {
	journals = map[string]string{}
	for _, dir := range append([]string{home.SessionsDir(), home.Dir}, linkedDirs(home)...) {
		matches, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*.tmp"))
		for _, m := range matches {
			name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), tempPrefix), ".tmp")
			i := strings.LastIndexByte(name, '-')
			if i < 0 || !journalName.MatchString(name[:i]) {
				continue
			}
			path := filepath.Join(home.JournalDir(), name[:i]+".json")
			j, err := Read(path)
			if err != nil || !slices.Contains(LeftoverTemps(home, j), m) {
				continue // not proven sessionctl's: left alone
			}
			temps = append(temps, m)
			journals[m] = path
		}
	}
	return temps, journals
}

// Settle puts right, under sessionctl's lock, what an interrupted run left in the home:
// its journal temporary files (a journal never renamed into place, or a Finish cut short),
// torn journals, which are moved aside (<name>.torn beside them: kept, no longer listed as
// journals), then the row stores no journal names (OrphanRowStores: a prune stopped before
// the journal naming its store was in place, or whose journal was torn) and the saved
// backups a restore stopped before publishing (SavedTemp), and the temporary files beside
// the home's files it can prove its own (OwnTemps). Under the lock no other sessionctl is
// between writing any of them and the journal that names it. Each is warned of; what cannot
// be settled is warned of and left.
func Settle(home sessionsjson.Home, warn func(string, ...any)) {
	dir, entries, err := journalEntries(home)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if temp, _ := filepath.Match(finishTemp, e.Name()); temp && e.Type().IsRegular() {
			if err := os.Remove(p); err != nil {
				warn("sessionctl's temporary file %s (a journal never put in place): %v", p, err)
			}
		}
		if strings.HasPrefix(e.Name(), SavedTemp) && e.IsDir() {
			if err := os.RemoveAll(p); err != nil {
				warn("sessionctl's temporary directory %s (a restore's copy of the files it replaces, never put in place): %v", p, err)
			} else {
				warn("removed %s: a restore stopped while it saved the files it replaces, before its journal; nothing in the home changed", p)
			}
		}
	}
	for _, p := range TornJournals(home) {
		if aside, err := SettleTorn(p); err != nil {
			warn("%v", err)
		} else {
			warn("journal %s was torn (cut short by a crash while it was written): it names a change that never started, nothing to undo; moved aside to %s", p, aside)
		}
	}
	settleRowStores(home, warn)
	temps, journals := OwnTemps(home)
	for _, t := range temps {
		if err := os.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			warn("sessionctl's temporary file %s: %v", t, err)
			continue
		}
		warn("removed %s: sessionctl's temporary file from an interrupted write (journal %s)", t, journals[t])
	}
	synced := map[string]bool{}
	for _, t := range temps {
		if d := filepath.Dir(t); !synced[d] {
			synced[d] = true
			_ = SyncDirs(d)
		}
	}
}

// SettleTorn moves the torn journal at path aside (<name>.torn, durably) and returns where.
func SettleTorn(path string) (string, error) {
	aside := strings.TrimSuffix(path, ".json") + tornSuffix
	if _, err := os.Lstat(aside); err == nil {
		return "", fmt.Errorf("torn journal %s: %s exists: left as it is", path, aside)
	}
	if err := os.Rename(path, aside); err != nil {
		return "", fmt.Errorf("move the torn journal %s aside: %w", path, err)
	}
	return aside, SyncDirs(filepath.Dir(path))
}
