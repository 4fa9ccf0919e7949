package check

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/space"
	"github.com/sessionctl/sessionctl/statedb"
)

// WALLimitFactor is how many times the checkpoint limit (wal_autocheckpoint × page_size) the
// WAL may reach before db.wal-large: a WAL keeps the size of its largest burst between
// checkpoints, so a few times the limit is normal; 16 times (64 MiB at the defaults of 1000
// pages of 4 KiB) means checkpoints have not completed for a long time.
const WALLimitFactor = 16

// FreelistShare is the share of free pages over which db.freelist is reported.
const FreelistShare = 0.25

// sampleIDs bounds the ids a grouped finding names.
const sampleIDs = 5

// storage reports the file-level hygiene findings: the WAL, the free pages, the SQLite
// version, the full-text indexes (deep), and the transcript files.
func storage(ctx context.Context, h *home.Home, deep bool) ([]Finding, error) {
	p, err := h.DB.Pager(ctx)
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	out := walFindings(h, p)
	if walResetBug(h.Schema.SQLiteVersion) {
		out = append(out, Finding{DBWALResetBug, Info, "sqlite " + h.Schema.SQLiteVersion, "the SQLite linked into sessionctl has the WAL-reset bug (3.7.0–3.51.2): its writes stay short, but prefer a sessionctl built with SQLite ≥ 3.51.3"})
	}
	if deep {
		more, err := ftsFindings(ctx, h)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	more, err := transcriptFindings(ctx, h)
	return append(out, more...), err
}

// walFindings reports a WAL far over its checkpoint limit and free pages over a quarter of
// the file.
func walFindings(h *home.Home, p statedb.Pager) []Finding {
	var out []Finding
	limit := p.AutoCheckpoint * p.PageSize
	if st, err := os.Stat(h.Opts.Home.StateDB() + "-wal"); err == nil && limit > 0 && st.Size() > WALLimitFactor*limit {
		out = append(out, Finding{DBWALLarge, Warn, "state.db-wal", fmt.Sprintf("WAL is %s, %d times its checkpoint limit (wal_autocheckpoint %d pages × %d bytes = %s): a reader has held checkpoints back for a long time; restart long-running Hermes processes (sessionctl compact --apply checkpoints and truncates it)",
			space.Bytes(st.Size()), st.Size()/limit, p.AutoCheckpoint, p.PageSize, space.Bytes(limit))})
	}
	if p.PageCount > 0 && float64(p.FreelistCount)/float64(p.PageCount) > FreelistShare {
		out = append(out, Finding{DBFreelist, Info, "state.db", fmt.Sprintf("%d of %d pages free (%s): sessionctl compact --apply (or `hermes sessions optimize`) with every Hermes process stopped returns them to the file system",
			p.FreelistCount, p.PageCount, space.Bytes(p.FreelistCount*p.PageSize))})
	}
	return out
}

// ftsFindings compares each full-text index with the rows it indexes (check --deep). A file
// whose index the runtime has detached (db.fts-stale) or whose optimize-storage stopped
// part-way (db.fts-rebuild-interrupted) is left to those findings.
func ftsFindings(ctx context.Context, h *home.Home) ([]Finding, error) {
	state, err := h.DB.FTS(ctx)
	if err != nil {
		return nil, fmt.Errorf("FTS state: %w", err)
	}
	if len(state.Stale) > 0 || state.RebuildInterrupted {
		return nil, nil
	}
	idx, err := h.DB.FTSIndexes(ctx)
	if err != nil {
		return nil, fmt.Errorf("FTS check: %w", err)
	}
	var out []Finding
	for _, x := range idx {
		if x.OutOfStep() {
			out = append(out, Finding{DBFTSOutOfStep, Warn, x.Table, fmt.Sprintf("the full-text index is out of step with %s: %d row(s) not indexed, %d document(s) of deleted rows (search misses or returns them); sessionctl fts rebuild --apply refills it with the layout's own rebuild, with the gateway stopped",
				x.Source, x.Missing, x.Extra)})
		}
	}
	return out, nil
}

// transcriptFindings reports transcript files no session row owns, and, where the
// generation's gateway wrote a JSONL transcript for every gateway session
// (Rules.JSONLTranscripts), the sessions with messages that have none.
func transcriptFindings(ctx context.Context, h *home.Home) ([]Finding, error) {
	ids, gateway := map[string]bool{}, map[string]bool{}
	err := h.DB.EachSessionID(ctx, func(id string, hasMessages bool, source string) error {
		ids[id] = true
		gateway[id] = hasMessages && (h.Rules.Platforms.Builtin(source) || h.Rules.Platforms.Bundled(source))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("transcript check: %w", err)
	}
	var stray []string
	var strayBytes int64
	err = space.ScanTranscripts(h.Opts.Home.SessionsDir(), ids, func(f space.TranscriptFile) {
		switch {
		case f.Kind == space.KindOther:
		case f.Owner == "":
			stray, strayBytes = append(stray, f.Name), strayBytes+f.Size
		case f.Kind == space.KindJSONL:
			delete(gateway, f.Owner)
		}
	})
	if err != nil {
		return nil, err
	}
	var out []Finding
	if len(stray) > 0 {
		out = append(out, Finding{SessionsStrayTranscript, Info, "sessions/", fmt.Sprintf("%d transcript file(s), %s, belong to no session row (%s): no runtime removes them (a prune removes only the files of the rows it deletes); move them out of the sessions directory once nothing needs them",
			len(stray), space.Bytes(strayBytes), sample(stray))})
	}
	if missing := missingJSONL(h, gateway); len(missing) > 0 {
		out = append(out, Finding{SessionsTranscriptMissing, Info, "sessions/", fmt.Sprintf("%d gateway session(s) with messages have no <id>.jsonl transcript (%s): generation %s's gateway writes one next to state.db, which holds the messages (the file was removed by hand, or the session came from another runtime); nothing reads it back, no action needed",
			len(missing), sample(missing), h.Gen)})
	}
	return out, nil
}

// missingJSONL lists, sorted, the gateway sessions left without a JSONL transcript.
func missingJSONL(h *home.Home, gateway map[string]bool) []string {
	if !h.Rules.JSONLTranscripts {
		return nil
	}
	var out []string
	for id, want := range gateway {
		if want {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// sample names the first sampleIDs items and how many more there are.
func sample(items []string) string {
	slices.Sort(items)
	if len(items) <= sampleIDs {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:sampleIDs], ", "), len(items)-sampleIDs)
}
