package sessionsjson

import (
	"os"
	"syscall"
)

// FaultPointEnv names the environment variable that selects a fault point: a named place in
// a write path where the process SIGKILLs itself, so that crash tests can stop it exactly
// there (no deferred cleanup runs: like a power loss, for this process). It is read once at
// start-up; unset or naming no point, every fault point does nothing. statedb reads the same
// variable for its own points. See docs/decisions.md, "Fault points".
const FaultPointEnv = "SESSIONCTL_FAULTPOINT"

// The fault points of WriteFileAtomic and WriteFileAtomicFrom.
const (
	FaultAfterTempWrite = "atomic.after-temp-write" // temp file written, not yet fsynced
	FaultAfterTempSync  = "atomic.after-temp-fsync" // temp file fsynced and closed, not yet renamed
	FaultAfterRename    = "atomic.after-rename"     // renamed over the target, directory not yet fsynced
)

// faultPointSelected is the fault point named by FaultPointEnv, read once.
var faultPointSelected = os.Getenv(FaultPointEnv)

// faultPoint kills the process with SIGKILL when name is the selected fault point.
func faultPoint(name string) {
	if name == faultPointSelected {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
}
