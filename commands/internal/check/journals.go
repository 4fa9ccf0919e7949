package check

import (
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
)

// OrphanRowStoreNote is what a row store no journal names is: the next write of any kind
// removes it (journal.Settle, under sessionctl's lock).
const OrphanRowStoreNote = "a row store no journal names: a prune stopped after copying a batch's rows and before writing its journal, and nothing in the home changed (the rows are still in state.db)"

// orphanRowStores reports each row store in the journal directory that no journal names
// (info: it only takes space).
func orphanRowStores(h *home.Home) []Finding {
	stores, err := journal.OrphanRowStores(h.Opts.Home)
	if err != nil {
		return nil // the journal directory is not the home's data: nothing to report on
	}
	var out []Finding
	for _, s := range stores {
		out = append(out, Finding{JournalOrphanRowStore, Info, h.Opts.Rel(s),
			OrphanRowStoreNote + "; the next sessionctl write (`sessionctl prune --apply`, which takes the lock for it, or any other) removes it (or rm it)"})
	}
	return out
}

// orphanStashes reports each stash directory no journal names and each temporary file a
// journal rewrite left (info: they only take space).
func orphanStashes(h *home.Home) []Finding {
	leftovers, err := journal.OrphanStashes(h.Opts.Home, nil)
	if err != nil {
		return nil // as orphanRowStores
	}
	var out []Finding
	for _, l := range leftovers {
		out = append(out, Finding{JournalOrphanStash, Info, h.Opts.Rel(l),
			"no journal names it (a run stopped part-way left it, or its journal was removed): a stash of moved files or saved state, or a journal rewrite's temporary file; nothing in the home depends on it: `sessionctl journal prune --older-than D --apply` removes it once older than D (or rm -r it)"})
	}
	return out
}

// interrupted reports what a crashed sessionctl run left that the next write settles
// (journal.Settle): torn journals (warn: undo --last stops at one) and sessionctl's own
// temporary files beside sessions.json and the counts file (info: they only take space;
// never the runtime's sessions-json.leftover-tmp).
func interrupted(h *home.Home) []Finding {
	var out []Finding
	for _, p := range journal.TornJournals(h.Opts.Home) {
		out = append(out, Finding{JournalTorn, Warn, h.Opts.Rel(p),
			"a journal cut short by a crash while it was written: it names a change that never started (journals are written whole before their change), nothing to undo; `sessionctl undo " + h.Opts.Rel(p) + " --apply` (or the next sessionctl write) moves it aside as .torn"})
	}
	temps, journals := journal.OwnTemps(h.Opts.Home)
	for _, t := range temps {
		out = append(out, Finding{JournalLeftoverTmp, Info, h.Opts.Rel(t),
			"sessionctl's own temporary file from an interrupted rewrite of sessions.json or of the counts file (named by journal " + h.Opts.Rel(journals[t]) + "); the runtime never reads it: `sessionctl undo` of that journal, or the next sessionctl write, removes it"})
	}
	return out
}
