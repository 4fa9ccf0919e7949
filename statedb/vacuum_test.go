package statedb

import (
	"context"
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestVacuumCheckpointThenFails: vacuum()'s TRUNCATE checkpoint copies the WAL's frames into
// the database before its VACUUM fails (another connection holds the write lock): the result
// says the files changed (Checkpointed), not vacuumed. With an empty WAL the checkpoint
// changes nothing. (The fixture is in WAL mode already.)
func TestVacuumCheckpointThenFails(t *testing.T) {
	for _, frames := range []bool{true, false} {
		path := copyDB(t, "r0525-3914089d5")
		raw := rawDB(t, path)
		mustExec(t, raw, "PRAGMA wal_autocheckpoint=0")
		if frames {
			mustExec(t, raw, "UPDATE sessions SET title = title || ''")
		}
		mustExec(t, raw, "BEGIN IMMEDIATE") // another writer: VACUUM cannot run, a checkpoint copies what it can
		res, err := Vacuum(context.Background(), path, sessionsjson.VacuumCheckpointFirst, nil)
		mustExec(t, raw, "ROLLBACK")
		if err == nil || res.Vacuumed {
			t.Fatalf("frames %v: VACUUM under another writer: %+v, %v; want it to fail", frames, res, err)
		}
		if res.Checkpointed != frames {
			t.Errorf("frames in the WAL %v: Checkpointed %v", frames, res.Checkpointed)
		}
	}
}
