package statedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
)

// Physical is how a state.db is laid out on disk: what compact reclaims and the space it
// needs.
type Physical struct {
	PageSize      int64 `json:"page_size"`
	PageCount     int64 `json:"page_count"`
	FreelistCount int64 `json:"freelist_count"`
	// LogicalBytes is page_count × page_size: the size of the file once the WAL is folded in
	// (the runtime's logical_size_bytes, 0b3a50f10).
	LogicalBytes int64 `json:"logical_bytes"`
	// FileBytes is the size of state.db on disk, WALBytes of state.db-wal (0 without one).
	FileBytes   int64  `json:"file_bytes"`
	WALBytes    int64  `json:"wal_bytes"`
	JournalMode string `json:"journal_mode"`
	// FTSSegments is the number of segments of each messages_fts* index that has a
	// structure record (FTS5's averages record, rowid 10 of <table>_data).
	FTSSegments map[string]int64 `json:"fts_segments"`
}

// FreeBytes is what the free pages take: freelist_count × page_size.
func (p Physical) FreeBytes() int64 { return p.FreelistCount * p.PageSize }

// UsedBytes is what the pages in use take: the size VACUUM copies.
func (p Physical) UsedBytes() int64 { return (p.PageCount - p.FreelistCount) * p.PageSize }

// Physical reads the layout of the database: the page pragmas, the file sizes (stat only,
// no file is opened) and the FTS5 segment counts.
func (db *DB) Physical(ctx context.Context) (Physical, error) {
	var p Physical
	for _, pr := range []struct {
		name string
		dst  *int64
	}{{"page_size", &p.PageSize}, {"page_count", &p.PageCount}, {"freelist_count", &p.FreelistCount}} {
		if err := db.sql.QueryRowContext(ctx, "PRAGMA "+pr.name).Scan(pr.dst); err != nil {
			return p, fmt.Errorf("PRAGMA %s: %w", pr.name, err)
		}
	}
	if err := db.sql.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&p.JournalMode); err != nil {
		return p, fmt.Errorf("PRAGMA journal_mode: %w", err)
	}
	if db.schema.JournalMode != "" {
		p.JournalMode = db.schema.JournalMode // an immutable open reports "delete" for a WAL file
	}
	p.LogicalBytes = p.PageCount * p.PageSize
	p.FileBytes, p.WALBytes = fileSize(db.path), fileSize(db.path+"-wal")
	var err error
	p.FTSSegments, err = ftsSegments(ctx, db.sql)
	return p, err
}

// fileSize is the size of path, 0 when it does not exist.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// ftsSegments counts the segments of each messages_fts* FTS5 table from its structure
// record: a 4-byte cookie, the bytes FF 00 00 01 in the v2 format, then the varints nLevel
// and nSegment.
func ftsSegments(ctx context.Context, db *sql.DB) (map[string]int64, error) {
	names, err := queryStrings(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'messages\_fts%' ESCAPE '\'
		AND sql LIKE 'CREATE VIRTUAL TABLE%' AND EXISTS (SELECT 1 FROM sqlite_master d WHERE d.type = 'table' AND d.name = sqlite_master.name || '_data') ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list FTS tables: %w", err)
	}
	out := map[string]int64{}
	for _, name := range names {
		var block []byte
		err := db.QueryRowContext(ctx, "SELECT block FROM "+quoteIdent(name+"_data")+" WHERE id = 10").Scan(&block)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s structure: %w", name, err)
		}
		if n, ok := StructureSegments(block); ok {
			out[name] = n
		}
	}
	return out, nil
}

// StructureSegments reads nSegment from an FTS5 structure record; ok is false when the record
// is too short to hold it.
func StructureSegments(block []byte) (int64, bool) {
	if len(block) < 4 {
		return 0, false
	}
	rest := block[4:]
	if len(rest) >= 4 && rest[0] == 0xFF && rest[1] == 0 && rest[2] == 0 && rest[3] == 1 {
		rest = rest[4:]
	}
	_, n := sqliteVarint(rest)
	if n == 0 {
		return 0, false
	}
	seg, m := sqliteVarint(rest[n:])
	return int64(seg), m > 0
}

// sqliteVarint decodes SQLite's big-endian varint (1–9 bytes, the ninth holding 8 bits) and
// returns its value and length, 0 when b ends first.
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v, 9
}
