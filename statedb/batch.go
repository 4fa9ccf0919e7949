package statedb

import "encoding/json"

// Batch bounds one repair transaction (FinalizeOrphans, PruneGhosts) and says where its
// candidates come from.
//
// With Among nil the transaction scans the table for candidates. Otherwise it evaluates the
// runtime's whole predicate again for (at most MaxRows of) the ids in Among only, looking each
// up by primary key: a caller reads the candidates first (FinalizeCandidates,
// GhostCandidates), without the write lock, then passes their ids as Among, and the
// Remaining of each result as the Among of the next batch until it is empty. The lock is
// then never held for a scan of the table.
type Batch struct {
	// MaxRows is the most rows the transaction changes; 0 means no bound.
	MaxRows int
	// Among, when not nil, limits the candidates to these session ids (oldest first, as
	// Remaining gives them); an id that no longer matches is dropped. A nil Among scans the
	// table, so a caller stops when Remaining is empty rather than passing it on.
	Among []string
}

// oldestFirst orders candidate sessions as the repairs take them.
const oldestFirst = " ORDER BY sessions.started_at, sessions.id"

// limit returns how many of n candidates, oldest first, this batch takes: at most MaxRows.
func (b Batch) limit(n int) int {
	if b.MaxRows > 0 && n > b.MaxRows {
		return b.MaxRows
	}
	return n
}

// take returns the ids of Among this batch evaluates and the rest (nil when none are left).
func (b Batch) take() (now, later []string) {
	k := b.limit(len(b.Among))
	if k == len(b.Among) {
		return b.Among, nil
	}
	return b.Among[:k], b.Among[k:]
}

// amongSource returns the FROM term that reads the sessions of a batch, and its arguments: the
// whole table when among is nil, else only the sessions whose ids are in among, passed as a
// JSON array. The ids drive the join (CROSS JOIN keeps that order), so each row is looked up
// by primary key whatever other index the predicate could use: with an IN list SQLite
// prefers idx_sessions_source and walks every tui row. An id JSON cannot carry unchanged
// (invalid UTF-8) matches no row, so that session is left alone.
func amongSource(among []string) (string, []any) {
	if among == nil {
		return "sessions", nil
	}
	ids, _ := json.Marshal(among) // a []string always encodes
	return "json_each(?) AS among CROSS JOIN sessions ON sessions.id = among.value", []any{string(ids)}
}

// remainingAfter joins the ids a batch left among its matches with the ids it did not
// evaluate, keeping the oldest-first order.
func remainingAfter(left, notEvaluated []string) []string {
	if len(left) == 0 {
		return notEvaluated
	}
	return append(append(make([]string, 0, len(left)+len(notEvaluated)), left...), notEvaluated...)
}

// imageIDs returns the id column of each sessions image.
func imageIDs(images []RowImage) []string {
	ids := make([]string, len(images))
	for i, img := range images {
		ids[i] = img.Key["id"].Text
	}
	return ids
}
