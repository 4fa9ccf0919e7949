package space

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Reclaim is what each hygiene command would reclaim: estimates (Estimate is always true),
// from the file as it is now.
type Reclaim struct {
	Estimate     bool          `json:"estimate"`
	Prune        *PruneReclaim `json:"prune"`
	Compact      Compact       `json:"compact"`
	EntriesPrune *EntriesPrune `json:"entries_prune"`
}

// PruneReclaim is `prune --older-than D`: the runtime's prune_sessions candidates (ended
// sessions older than D by the generation's age rule), their messages, the bytes of state.db
// they hold (their share of the messages, FTS and sessions b-trees: the pages become free
// pages, which only compact returns to the file system) and their transcript files where the
// generation's prune removes them (Maintenance.PruneFiles: r0418's removes none).
type PruneReclaim struct {
	OlderThanDays float64   `json:"older_than_days"`
	Sessions      int       `json:"sessions"`
	Messages      int64     `json:"messages"`
	DBBytes       int64     `json:"db_bytes"`
	Transcripts   FileCount `json:"transcripts"`
	// Note says why the estimate is missing (a generation whose rules are not known).
	Note string `json:"note,omitempty"`
}

// Compact is what compact (the generation's vacuum()) reclaims at least: the free pages and
// the WAL (checkpointed and truncated); merging FTS segments may free more.
type Compact struct {
	FreeBytes int64 `json:"free_bytes"`
	WALBytes  int64 `json:"wal_bytes"`
	Bytes     int64 `json:"bytes"`
}

// EntriesPrune is `entries prune --older-than D` (SessionStore.prune_old_entries): the
// loaded entries not updated for D days (strictly older), suspended ones kept.
type EntriesPrune struct {
	OlderThanDays float64 `json:"older_than_days"`
	Entries       int     `json:"entries"`
	// Aware counts entries whose aware updated_at makes the runtime's comparison raise (the
	// runtime's prune then drops nothing).
	Aware int `json:"aware,omitempty"`
}

// estimate fills Reclaim.
func (r *Report) estimate(ctx context.Context, h *home.Home, o Options) error {
	r.Reclaim.Estimate = true
	c := &r.Reclaim.Compact
	c.FreeBytes, c.WALBytes = r.File.FreeBytes, r.File.WALBytes
	c.Bytes = c.FreeBytes + c.WALBytes
	if h.Rules.Verified() {
		r.Reclaim.EntriesPrune = entriesPrune(h, o.EntriesDays)
	}
	if h.DB == nil {
		return nil
	}
	p, err := r.prune(ctx, h, o.PruneDays)
	r.Reclaim.Prune = p
	return err
}

// prune estimates the retention prune at days.
func (r *Report) prune(ctx context.Context, h *home.Home, days float64) (*PruneReclaim, error) {
	p := &PruneReclaim{OlderThanDays: days}
	if !h.Rules.Verified() || h.Schema.Intermediate {
		p.Note = "the prune rule of schema v" + fmt.Sprint(h.Schema.Version) + " is not known to this sessionctl"
		return p, nil
	}
	view, err := h.DB.NewView(ctx, h.Schema.Version, nil)
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	ids, err := view.PruneCandidates(ctx, h.Opts.Clock.Unix-days*86400, h.Rules.Maintenance.Age)
	if cerr := view.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	p.Sessions = len(ids)
	if p.Messages, err = h.DB.MessageCount(ctx, ids); err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	p.DBBytes = r.share(p.Messages, int64(p.Sessions))
	if !h.Rules.Maintenance.PruneFiles { // r0418's prune_sessions has no sessions_dir
		return p, nil
	}
	files, err := statedb.TranscriptFiles(h.Opts.Home.SessionsDir(), ids)
	if err != nil {
		return nil, err
	}
	for _, paths := range files {
		for _, path := range paths {
			p.Transcripts.Files, p.Transcripts.Bytes = p.Transcripts.Files+1, p.Transcripts.Bytes+size(path)
		}
	}
	return p, nil
}

// share is the bytes of messages messages and sessions sessions: their proportional share of
// the messages b-trees (the table, its indexes, every FTS index) and of the sessions b-trees
// (without dbstat, of the pages in use).
func (r *Report) share(messages, sessions int64) int64 {
	var msgBytes, sesBytes, totalMsgs, totalSes int64
	for _, s := range r.Sessions.BySource {
		totalMsgs, totalSes = totalMsgs+s.Messages, totalSes+s.Sessions
	}
	for _, g := range r.Tables {
		switch g.Name {
		case "messages":
			msgBytes += g.Bytes
		case "sessions":
			sesBytes += g.Bytes
		}
	}
	for _, g := range r.FTS {
		msgBytes += g.Bytes
	}
	if r.Method == MethodNone {
		msgBytes = (r.File.PageCount - r.File.FreelistCount) * r.File.PageSize
	}
	return part(msgBytes, messages, totalMsgs) + part(sesBytes, sessions, totalSes)
}

// part is bytes × n / total (0 when total is 0).
func part(bytes, n, total int64) int64 {
	if total == 0 {
		return 0
	}
	return int64(float64(bytes) * float64(n) / float64(total))
}

// entriesPrune counts the entries prune_old_entries(days) drops now
// (sessionsjson.PruneOldEntries): updated_at strictly older than the naive local now − days,
// suspended entries kept; the entries whose aware updated_at makes it raise are counted apart.
func entriesPrune(h *home.Home, days float64) *EntriesPrune {
	p := &EntriesPrune{OlderThanDays: days}
	var entries []sessionsjson.StoreEntry
	for _, e := range h.Loaded() {
		se := e.StoreEntry()
		if se.Aware && !se.Suspended {
			p.Aware++
			continue
		}
		entries = append(entries, se)
	}
	keys, _ := sessionsjson.PruneOldEntries(entries, sessionsjson.OldEntriesCutoff(h.Opts.Clock.NaiveLocalMicros(time.Local), days*86400))
	p.Entries = len(keys)
	return p
}

// sortGroups orders groups largest first, then by name.
func sortGroups(g []Group) {
	slices.SortFunc(g, func(a, b Group) int {
		if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
}
