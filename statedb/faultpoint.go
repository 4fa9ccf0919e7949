package statedb

import (
	"os"
	"syscall"
)

// The fault points of a write transaction (WithImmediateTx, and so every repair, routing
// update and restore). SESSIONCTL_FAULTPOINT (sessionsjson.FaultPointEnv, read once at
// start-up) selects one; the process then SIGKILLs itself there. Unset, they do nothing.
// See docs/decisions.md, "Fault points".
const (
	FaultBeforeCommit = "tx.before-commit" // fn (and its CommitHook) done, COMMIT not yet run
	FaultAfterCommit  = "tx.after-commit"  // COMMIT returned, the caller not yet told
)

// faultPointSelected is the fault point named by SESSIONCTL_FAULTPOINT.
var faultPointSelected = os.Getenv("SESSIONCTL_FAULTPOINT")

func faultPoint(name string) {
	if name == faultPointSelected {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}
