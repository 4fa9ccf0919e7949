// Package space measures where a home's bytes are (`sessionctl space`, read-only): state.db
// per table and index (the dbstat virtual table), its WAL and free pages, the full-text
// indexes, the transcript files of the sessions directory, the sessions by source and by
// age; and estimates what the retention prune, compact and the entries prune would reclaim.
// Every query streams (aggregates, one b-tree walk): a 1 GB home is measured without loading
// its rows.
package space

import (
	"context"
	"fmt"
	"os"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Methods of Report.Method: how the per-object sizes were measured.
const (
	MethodDBStat = "dbstat" // SQLite's dbstat virtual table: every page of every b-tree
	MethodNone   = "none"   // the linked SQLite lacks dbstat (or no state.db): totals only
)

// Report is `data.space`.
type Report struct {
	Method      string                `json:"method"`
	File        File                  `json:"file"`
	Objects     []statedb.ObjectSpace `json:"objects"`
	Tables      []Group               `json:"tables"`
	FTS         []Group               `json:"fts"`
	Transcripts Transcripts           `json:"transcripts"`
	Sessions    *Sessions             `json:"sessions"`
	Reclaim     Reclaim               `json:"reclaim"`
}

// File is state.db's files and page geometry.
type File struct {
	DBBytes       int64 `json:"db_bytes"`
	WALBytes      int64 `json:"wal_bytes"`
	SHMBytes      int64 `json:"shm_bytes"`
	PageSize      int64 `json:"page_size"`
	PageCount     int64 `json:"page_count"`
	FreelistCount int64 `json:"freelist_count"`
	FreeBytes     int64 `json:"free_bytes"`
	// CheckpointLimitBytes is wal_autocheckpoint × page_size: the WAL size at which a
	// connection checkpoints it (the runtime keeps SQLite's default of 1000 pages).
	CheckpointLimitBytes int64 `json:"checkpoint_limit_bytes"`
}

// Group is a table with its indexes (Tables), or an FTS5 table with its shadow tables (FTS).
type Group struct {
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	Pages   int64  `json:"pages"`
	Objects int    `json:"objects"`
}

// Transcripts is the sessions directory's files by kind, and those no row owns.
type Transcripts struct {
	Files  int64                `json:"files"`
	Bytes  int64                `json:"bytes"`
	ByKind map[string]FileCount `json:"by_kind"`
	// Stray are the files of a session pattern whose session has no row (nil without state.db).
	Stray *FileCount `json:"stray"`
}

// FileCount is a number of files and their bytes.
type FileCount struct {
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Sessions is the sessions by source and by age (the generation's prune age rule).
type Sessions struct {
	BySource []statedb.SourceCount `json:"by_source"`
	AgeRule  string                `json:"age_rule"`
	ByAge    []statedb.AgeBucket   `json:"by_age"`
}

// Options are the ages of the reclaim estimates (the runtime's defaults: 90 days each).
type Options struct {
	PruneDays, EntriesDays float64
}

// Measure reads where the home's bytes are.
func Measure(ctx context.Context, h *home.Home, o Options) (Report, error) {
	r := Report{Method: MethodNone, Objects: []statedb.ObjectSpace{}, Tables: []Group{}, FTS: []Group{}}
	r.File = files(h.Opts.Home.StateDB())
	var ids map[string]bool
	if h.DB != nil {
		if err := r.measureDB(ctx, h); err != nil {
			return r, err
		}
		var err error
		if ids, err = sessionIDs(ctx, h.DB); err != nil {
			return r, err
		}
	}
	if err := r.measureTranscripts(h.Opts.Home.SessionsDir(), ids); err != nil {
		return r, err
	}
	if err := r.estimate(ctx, h, o); err != nil {
		return r, err
	}
	return r, nil
}

// files reads the sizes of state.db, its WAL and shared-memory file (0 when absent).
func files(db string) File {
	return File{DBBytes: size(db), WALBytes: size(db + "-wal"), SHMBytes: size(db + "-shm")}
}

// size is a file's size, 0 when it does not exist.
func size(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// measureDB reads the page geometry, the b-trees and the sessions' distribution.
func (r *Report) measureDB(ctx context.Context, h *home.Home) error {
	p, err := h.DB.Pager(ctx)
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	f := &r.File
	f.PageSize, f.PageCount, f.FreelistCount = p.PageSize, p.PageCount, p.FreelistCount
	f.FreeBytes, f.CheckpointLimitBytes = p.FreelistCount*p.PageSize, p.AutoCheckpoint*p.PageSize
	has, err := h.DB.HasDBStat(ctx)
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	if has {
		if r.Objects, err = h.DB.ObjectSpaces(ctx); err != nil {
			return fmt.Errorf("state.db: %w", err)
		}
		r.Method = MethodDBStat
		r.Tables, r.FTS = group(r.Objects)
	}
	s := &Sessions{AgeRule: ageRuleName(h.Rules.Maintenance.Age)}
	if s.BySource, err = h.DB.SessionsBySource(ctx); err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	if s.ByAge, err = h.DB.SessionsByAge(ctx, h.Opts.Clock.Unix, h.Rules.Maintenance.Age); err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	r.Sessions = s
	return nil
}

// ageRuleName names the prune age rule of the generation.
func ageRuleName(a sessionsjson.PruneAge) string {
	if a == sessionsjson.PruneByInactivity {
		return "last_active" // the latest message, else started_at (r0817)
	}
	return "started_at"
}

// group sums the objects by table (a table with its indexes) and by FTS table (with its
// shadow tables), largest first.
func group(objects []statedb.ObjectSpace) (tables, fts []Group) {
	tables, fts = []Group{}, []Group{}
	at := map[bool]map[string]int{false: {}, true: {}}
	lists := map[bool]*[]Group{false: &tables, true: &fts}
	for _, o := range objects {
		isFTS := o.Kind == statedb.KindFTSShadow
		list := lists[isFTS]
		i, ok := at[isFTS][o.Table]
		if !ok {
			i = len(*list)
			*list = append(*list, Group{Name: o.Table})
			at[isFTS][o.Table] = i
		}
		g := &(*list)[i]
		g.Bytes, g.Pages, g.Objects = g.Bytes+o.Bytes, g.Pages+o.Pages, g.Objects+1
	}
	sortGroups(tables)
	sortGroups(fts)
	return tables, fts
}

// sessionIDs reads every session id into a set (the transcript owners are resolved against
// it; a 100,000-session home holds a few megabytes).
func sessionIDs(ctx context.Context, db *statedb.DB) (map[string]bool, error) {
	ids := map[string]bool{}
	err := db.EachSessionID(ctx, func(id string, _ bool, _ string) error {
		ids[id] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	return ids, nil
}

// measureTranscripts counts the sessions directory's files by kind, and the stray ones.
func (r *Report) measureTranscripts(dir string, ids map[string]bool) error {
	t := Transcripts{ByKind: map[string]FileCount{}}
	if ids != nil {
		t.Stray = &FileCount{}
	}
	err := ScanTranscripts(dir, ids, func(f TranscriptFile) {
		t.Files, t.Bytes = t.Files+1, t.Bytes+f.Size
		c := t.ByKind[f.Kind]
		t.ByKind[f.Kind] = FileCount{c.Files + 1, c.Bytes + f.Size}
		if ids != nil && f.Owner == "" && f.Kind != KindOther {
			t.Stray.Files, t.Stray.Bytes = t.Stray.Files+1, t.Stray.Bytes+f.Size
		}
	})
	r.Transcripts = t
	return err
}
