package upgrade

import (
	"context"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/startup"
	"github.com/sessionctl/sessionctl/statedb"
)

// Start predicts what the first start of the target generation does to the home
// (startup.Start), with the v18 backfill from sessions.json when the target's open runs it.
func Start(ctx context.Context, h *home.Home, to Target) (Routing, StartMaintenance, error) {
	var fills []statedb.PeerFill
	if h.DB != nil && h.DBErr == nil {
		if from := migratesFrom(h, to); from < statedb.PeerBackfillVersion && to.Schema >= statedb.PeerBackfillVersion {
			var err error
			if fills, err = peerFills(h); err != nil {
				return Routing{}, StartMaintenance{}, err
			}
		}
	}
	return startup.Start(ctx, h, to, fills)
}

// migratesFrom is the schema_version the target's migration starts from: the file's, or,
// without a schema_version row, the target's own (its open inserts it and migrates nothing).
func migratesFrom(h *home.Home, to Target) int {
	if h.Schema.VersionMissing {
		return to.Schema
	}
	return h.Schema.Version
}

// peerFills is what the v18 migration copies from sessions.json into the rows its entries
// point at that the recovery lookups read (session_key, chat_id, chat_type, thread_id;
// gatewayEntries has which entries and values, as the step's json.load and loop see them).
func peerFills(h *home.Home) ([]statedb.PeerFill, error) {
	entries, err := gatewayEntries(h)
	if err != nil {
		return nil, err
	}
	fills := make([]statedb.PeerFill, len(entries))
	for i, e := range entries {
		v := e.values
		fills[i] = statedb.PeerFill{ID: e.id, SessionKey: v["session_key"], ChatID: v["chat_id"], ChatType: v["chat_type"], ThreadID: v["thread_id"]}
	}
	return fills, nil
}
