package statedb

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
)

// The full-text tables whose documents sessionctl compares with messages and rebuilds: the
// word index and the trigram index (the CJK index of r0817 needs a tokenizer sessionctl cannot
// load, and is left to the runtime).
var ftsIndexTables = []string{"messages_fts", "messages_fts_trigram"}

// FTSIndex is one full-text index and how far its documents are out of step with what its
// layout indexes: the rows of its external content source (messages, or r0817's trigram view
// of the non-tool messages), or every messages row for the inline layout (what the v11
// rewrite and the triggers index).
type FTSIndex struct {
	Table  string `json:"table"`
	Source string `json:"source"` // the table or view whose rows it indexes
	// External: an external-content table (content=…), which FTS5's 'rebuild' refills from
	// its source; else an inline table, refilled by DELETE and INSERT … SELECT from messages.
	External bool   `json:"external"`
	Docs     int64  `json:"docs"`    // documents in the index (rows of <table>_docsize)
	Missing  int64  `json:"missing"` // source rows the index lacks
	Extra    int64  `json:"extra"`   // documents whose source row is gone
	key      string // the source's column that is the documents' rowid
}

// OutOfStep reports whether the index's documents differ from its source's rows.
func (x FTSIndex) OutOfStep() bool { return x.Missing > 0 || x.Extra > 0 }

// ftsContent reads content= and content_rowid= of an FTS5 declaration.
var (
	ftsContent      = regexp.MustCompile(`(?i)\bcontent\s*=\s*['"]?([A-Za-z_][A-Za-z0-9_]*)`)
	ftsContentRowid = regexp.MustCompile(`(?i)\bcontent_rowid\s*=\s*['"]?([A-Za-z_][A-Za-z0-9_]*)`)
)

// FTSIndexes compares every word and trigram index the file has (with its docsize shadow
// table) with its source, by document ids: two anti-joins on rowids, streaming.
func (db *DB) FTSIndexes(ctx context.Context) ([]FTSIndex, error) {
	var out []FTSIndex
	for _, t := range ftsIndexTables {
		x, ok, err := db.ftsIndex(ctx, t)
		if err != nil {
			return nil, classify("compare "+t+" with messages", err, false)
		}
		if ok {
			out = append(out, x)
		}
	}
	return out, nil
}

// ftsIndex compares one index with its source (ok false when the table or its docsize table
// is missing).
func (db *DB) ftsIndex(ctx context.Context, table string) (FTSIndex, bool, error) {
	var ddl string
	err := db.sql.QueryRowContext(ctx, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", table).Scan(&ddl)
	if errors.Is(err, sql.ErrNoRows) || !db.schema.Tables[table+"_docsize"] {
		return FTSIndex{}, false, nil
	}
	if err != nil {
		return FTSIndex{}, false, err
	}
	x := FTSIndex{Table: table, Source: "messages", key: "id"}
	rowid := "id"
	if m := ftsContent.FindStringSubmatch(ddl); m != nil && m[1] != "" {
		x.Source, x.External, rowid = m[1], true, "rowid"
		if r := ftsContentRowid.FindStringSubmatch(ddl); r != nil {
			rowid = r[1]
		}
		x.key = rowid
	}
	src, docs, key := quoteIdent(x.Source), quoteIdent(table+"_docsize"), quoteIdent(rowid)
	err = db.sql.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM `+docs+`),
		(SELECT COUNT(*) FROM `+src+` s WHERE NOT EXISTS (SELECT 1 FROM `+docs+` d WHERE d.id = s.`+key+`)),
		(SELECT COUNT(*) FROM `+docs+` d WHERE NOT EXISTS (SELECT 1 FROM `+src+` s WHERE s.`+key+` = d.id))`).
		Scan(&x.Docs, &x.Missing, &x.Extra)
	return x, true, err
}

// inlineFill is what the inline layout indexes of a message (an expression on its row):
// content, tool_name and tool_calls joined by spaces — the v11 rewrite's fill (8d76d69d4), the trigger repair's
// _rebuild_fts_indexes (355af2c20) and r0817's _rebuild_legacy_fts_indexes (481156139) all
// refill the index with it.
const inlineFill = `COALESCE(content, '') || ' ' || COALESCE(tool_name, '') || ' ' || COALESCE(tool_calls, '')`
