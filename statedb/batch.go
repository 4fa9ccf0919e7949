package statedb

// Batch bounds one repair transaction (FinalizeOrphans, PruneGhosts).
//
// The first batch of a run scans the table for candidates; the ones it leaves (Remaining in
// its result) are passed as Among to the next batch, which evaluates the whole predicate
// again for those ids only instead of scanning the table again. A run therefore works
// through the candidate set chosen once, as the runtime's single statement does, and each
// later batch costs index lookups instead of a scan.
type Batch struct {
	// MaxRows is the most rows the transaction changes; 0 means no bound.
	MaxRows int
	// Among, when not nil, limits the candidates to these session ids (oldest first, as
	// Remaining gives them); an id that no longer matches is dropped.
	Among []string
}

// take returns the ids of Among this batch evaluates (at most MaxRows, and no more than one
// IN list holds) and the rest.
func (b Batch) take() (now, later []string) {
	n := maxInList
	if b.MaxRows > 0 {
		n = min(n, b.MaxRows)
	}
	if len(b.Among) <= n {
		return b.Among, nil
	}
	return b.Among[:n], b.Among[n:]
}

// cut splits the matching ids, oldest first, into the ones this batch changes (at most
// MaxRows) and the ids left for later.
func (b Batch) cut(ids []string) (now, later []string) {
	if b.MaxRows <= 0 || len(ids) <= b.MaxRows {
		return ids, nil
	}
	return ids[:b.MaxRows], ids[b.MaxRows:]
}

// amongClause returns the condition restricting sessions to ids ("" when ids is nil: the
// whole table) and its arguments.
func amongClause(ids []string) (string, []any) {
	if ids == nil {
		return "", nil
	}
	return " AND sessions.id IN (" + placeholders(len(ids)) + ")", stringArgs(ids)
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
