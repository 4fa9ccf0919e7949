package home

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// entryPage is how many routing entries a streamed list reads, with their state.db rows, at
// a time.
const entryPage = 512

// entryStream is the routing index of a db-primary home opened for List: its entries are
// read from gateway_routing page by page when listed, never all held.
type entryStream struct {
	// rowLoads maps each row's key to whether the runtime loads the row (a few bytes a row,
	// where the entries themselves are kilobytes); kept only when there may be legacy entries.
	rowLoads map[string]bool
	// legacy: sessions.json has a key no row has, or one whose row the runtime skips, so
	// there may be legacy entries (Routing.Legacy).
	legacy bool
}

// streamRouting prepares the entries of a db-primary home to be streamed (EachEntryRow)
// instead of loaded. The rows are read once here, as Read reads them (a row that cannot be
// decoded fails the open, as there), for each key and whether the runtime loads its row;
// sessions.json is read for its keys only: one with no row, or with a row the runtime skips,
// means there may be legacy entries (EachEntryRow then takes them as Read does). It reports
// false, having changed nothing, when the home is not db-primary with rows of its own scope,
// or a key of it has two rows (the pages keep their place by key): the entries are then
// loaded as for Read.
func (h *Home) streamRouting(ctx context.Context) (bool, error) {
	if h.DB == nil || !h.Schema.HasGatewayRouting {
		return false, nil
	}
	scopes, err := h.DB.RoutingScopes(ctx)
	if err != nil {
		return false, fmt.Errorf("state.db: %w", err)
	}
	r := &h.Routing
	if scopes[r.Scope] == 0 {
		return false, nil
	}
	if unique, err := h.DB.RoutingKeysUnique(ctx, r.Scope); err != nil || !unique {
		return false, err // a key twice (a table without the runtime's primary key): loaded
	}
	h.settleRules(nil)
	stream := &entryStream{rowLoads: map[string]bool{}}
	err = h.eachRoutingPage(ctx, func(entries []*sessionsjson.Entry) error {
		for _, e := range entries {
			stream.rowLoads[e.Key] = e.Skip == ""
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if stream.legacy, err = h.mirrorNamesLegacy(stream.rowLoads); err != nil {
		return false, err
	}
	if !stream.legacy {
		stream.rowLoads = nil // needed again only to take legacy entries
	}
	h.Storage, r.Source, r.Foreign, r.stream = StorageDB, SourceGatewayRouting, foreignScopes(scopes, r.Scope), stream
	return true, nil
}

// mirrorNamesLegacy reads the keys of sessions.json and reports whether one has no row or a
// row the runtime skips (rowLoads: key → the runtime loads its row), comparing keys as Read
// does (see scanMirrorKeys).
func (h *Home) mirrorNamesLegacy(rowLoads map[string]bool) (bool, error) {
	legacy := false
	err := h.scanMirrorKeys(func(key string) { legacy = legacy || !rowLoads[key] })
	return legacy, err
}

// scanMirrorKeys calls fn with each key of sessions.json, in file order. The file is checked
// as Read checks it (and its faults worded as decodeMirror words them), but never held whole
// in memory (sessionsjson.EachKeyOfFile); a missing file has no keys.
func (h *Home) scanMirrorKeys(fn func(key string)) error {
	path := h.Opts.Home.SessionsJSON()
	err := sessionsjson.EachKeyOfFile(path, sessionsjson.MaxSessionsJSONBytes, h.Rules, fn)
	var format *sessionsjson.FormatError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.As(err, &format):
		return fmt.Errorf("%s: %w", path, err)
	case err != nil:
		return failure.Mark(failure.Data, readError(path, err))
	}
	return nil
}

// EachEntryRow calls emit with the row of each entry q selects, in order, and returns how
// many q selects in all. With q.Limit, only the q.Limit most recently updated are emitted
// (still in order, once all are read: a page of the newest, as sessions list's). The entries of a home opened for List on a
// db-primary home are read page by page (entryPage entries and their state.db rows at a
// time); any other home's are those loaded.
func (h *Home) EachEntryRow(ctx context.Context, q EntryQuery, emit func(EntryRow) error) (int, error) {
	sel := &entrySelection{h: h, q: q, now: h.Opts.Clock.NaiveLocalMicros(time.Local), emit: emit}
	if h.Routing.stream == nil {
		err := sel.page(ctx, h.Routing.Entries)
		if err == nil {
			err = sel.flush(ctx)
		}
		return sel.total, err
	}
	legacy, replaced, err := h.streamedLegacy()
	if err != nil {
		return 0, err
	}
	h.Routing.Legacy = legacyKeys(legacy)
	err = h.eachRoutingPage(ctx, func(entries []*sessionsjson.Entry) error {
		kept := entries[:0]
		for _, e := range entries {
			if !replaced[e.Key] {
				kept = append(kept, e)
			}
		}
		return sel.page(ctx, kept)
	})
	if err == nil {
		err = sel.page(ctx, legacy)
	}
	if err == nil {
		err = sel.flush(ctx)
	}
	return sel.total, err
}

// streamedLegacy returns the legacy entries of a streamed home and the keys whose rows they
// replace. Only when sessions.json has a key no row has, or one whose row the runtime skips,
// is the mirror decoded, to take them as Read does.
func (h *Home) streamedLegacy() ([]*sessionsjson.Entry, map[string]bool, error) {
	if !h.Routing.stream.legacy {
		return nil, nil, nil
	}
	data, err := h.readMirror()
	if err == nil && data != nil {
		err = h.decodeMirror(data)
	}
	if err != nil {
		return nil, nil, err
	}
	keys := h.mirrorKeys()
	h.Mirror.Doc = nil
	return h.legacyEntries(keys, h.Routing.stream.rowLoads)
}

// eachRoutingPage calls fn with the decoded entries of the home's gateway_routing rows, in
// the loaded index's order, entryPage at a time (fn may reuse the slice). A row whose
// entry_json is not JSON is a skipped entry, as the runtime's load skips it.
func (h *Home) eachRoutingPage(ctx context.Context, fn func([]*sessionsjson.Entry) error) error {
	entries := make([]*sessionsjson.Entry, 0, entryPage)
	var after *statedb.RoutingCursor
	for {
		entries = entries[:0]
		next, err := h.DB.RoutingPage(ctx, h.Routing.Scope, after, entryPage, func(key string, entryJSON []byte) error {
			entries = append(entries, sessionsjson.DecodeRow(key, entryJSON, h.Rules))
			return nil
		})
		if err != nil {
			return fmt.Errorf("state.db: %w", err)
		}
		if next == nil {
			return nil
		}
		if err := fn(entries); err != nil {
			return err
		}
		after = next
	}
}

// entrySelection selects entries page by page and emits their rows.
type entrySelection struct {
	h     *Home
	q     EntryQuery
	now   int64
	emit  func(EntryRow) error
	total int // entries selected so far
	shown int // rows emitted so far
	// newest are the q.Limit most recently updated entries selected so far, with their
	// selection order and staleness.
	newest []pick
}

// pick is an entry kept for a limited list.
type pick struct {
	e     *sessionsjson.Entry
	seq   int
	stale bool
}

// keep keeps e among the q.Limit newest, replacing the oldest kept when e is newer.
func (s *entrySelection) keep(e *sessionsjson.Entry, stale bool) {
	p := pick{e, s.total, stale}
	if len(s.newest) < s.q.Limit {
		s.newest = append(s.newest, p)
		return
	}
	oldest := 0
	for i, k := range s.newest {
		if k.e.UpdatedAt.WallMicros() < s.newest[oldest].e.UpdatedAt.WallMicros() {
			oldest = i
		}
	}
	if e.UpdatedAt.WallMicros() > s.newest[oldest].e.UpdatedAt.WallMicros() {
		s.newest[oldest] = p
	}
}

// flush emits the rows of the kept newest entries, in their selection order.
func (s *entrySelection) flush(ctx context.Context) error {
	slices.SortFunc(s.newest, func(a, b pick) int { return a.seq - b.seq })
	entries, stale := make([]*sessionsjson.Entry, len(s.newest)), make([]bool, len(s.newest))
	for i, p := range s.newest {
		entries[i], stale[i] = p.e, p.stale
	}
	return s.emitRows(ctx, entries, stale)
}

// page emits the rows of the entries of one page that q selects, reading the state.db rows
// of those it emits.
func (s *entrySelection) page(ctx context.Context, entries []*sessionsjson.Entry) error {
	var picked []*sessionsjson.Entry
	var stale []bool
	for _, e := range entries {
		isStale, ok := s.q.selects(e, s.now)
		if !ok {
			continue
		}
		s.total++
		if s.q.Limit > 0 {
			s.keep(e, isStale)
			continue
		}
		picked, stale = append(picked, e), append(stale, isStale)
	}
	return s.emitRows(ctx, picked, stale)
}

// emitRows emits the rows of picked, reading their state.db rows.
func (s *entrySelection) emitRows(ctx context.Context, picked []*sessionsjson.Entry, stale []bool) error {
	if len(picked) == 0 {
		return nil
	}
	rows, err := s.h.rowsOf(ctx, picked)
	if err != nil {
		return err
	}
	for i, e := range picked {
		if err := s.emit(s.h.entryRow(rows, e, stale[i])); err != nil {
			return err
		}
	}
	s.shown += len(picked)
	return nil
}
