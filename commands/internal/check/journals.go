package check

import (
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
)

// OrphanRowStoreNote is what a row store no journal names is: the next prune --apply
// removes it.
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
			OrphanRowStoreNote + "; the next `sessionctl prune --apply` removes it (or rm it)"})
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
