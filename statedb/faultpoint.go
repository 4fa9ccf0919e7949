package statedb

import "github.com/sessionctl/sessionctl/sessionsjson"

// The fault points of a write transaction (WithImmediateTx, and so every repair, routing
// update and restore), selected by sessionsjson.FaultPointEnv. Unset, they do nothing.
// See docs/decisions.md, "Fault points".
const (
	FaultBeforeCommit = "tx.before-commit" // fn (and its CommitHook) done, COMMIT not yet run
	FaultAfterCommit  = "tx.after-commit"  // COMMIT returned, the caller not yet told
	// FaultRowStoreBeforeCommit: a row store filled, its transaction not committed (its
	// SQLite rollback journal beside it), no journal written, state.db not yet changed.
	FaultRowStoreBeforeCommit = "rowstore.before-commit"
	// FaultAfterRowStore: a row store committed (CaptureRows), its journal not yet written,
	// state.db not yet changed.
	FaultAfterRowStore = "rowstore.after-commit"
)

func faultPoint(name string) { sessionsjson.FaultPoint(name) }
