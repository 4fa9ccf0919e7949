package sessionsjson

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// FaultPointEnv names the environment variable that selects a fault point: a named place in
// a write path where tests stop or fail the process on purpose. It is read once at start-up;
// unset or naming no point, every fault point does nothing. Its value is the point's name,
// optionally with a mode:
//
//	NAME          the process SIGKILLs itself there (no deferred cleanup runs: like a power
//	              loss, for this process)
//	NAME:sigint   it sends itself SIGINT there, as an operator's Ctrl-C (then SIGTERM likewise)
//	NAME:sigterm
//	NAME:fail     FaultError(NAME) returns an injected error there (only where the path asks)
//	NAME:N        the process SIGKILLs itself the Nth time it gets there (N from 1): a point
//	              a run passes more than once (the counts file's rewrite after sessions.json's)
//
// or "fsync.trace:FILE" (FaultSyncTrace), which stops nothing and records every fsync.
//
// See docs/decisions.md, "Fault points".
const FaultPointEnv = "SESSIONCTL_FAULTPOINT"

// The fault points of WriteFileAtomic and WriteFileAtomicFrom.
const (
	FaultAfterTempWrite = "atomic.after-temp-write" // temp file written, not yet fsynced
	FaultAfterTempSync  = "atomic.after-temp-fsync" // temp file fsynced and closed, not yet renamed
	FaultAfterRename    = "atomic.after-rename"     // renamed over the target, directory not yet fsynced
)

// faultPointSelected is the fault point named by FaultPointEnv, read once.
var faultPointSelected = os.Getenv(FaultPointEnv)

// FaultSyncTrace, selected as "fsync.trace:FILE", stops nothing: every fsync a durable write
// makes (Fsync, SyncFile, SyncDir) appends a line to FILE once it succeeded, "file PATH" or
// "dir PATH", in the order they ran, so that tests can see that each write path syncs what
// it must before it goes on (see docs/decisions.md, "Fault points").
const FaultSyncTrace = "fsync.trace"

// syncTrace is the file FaultSyncTrace names ("" when not selected); syncTraceMu orders the
// lines of concurrent syncs.
var (
	syncTrace   = selectedSyncTrace()
	syncTraceMu sync.Mutex
)

func selectedSyncTrace() string {
	file, ok := strings.CutPrefix(faultPointSelected, FaultSyncTrace+":")
	if !ok {
		return ""
	}
	return file
}

// traceSync records one successful fsync of kind ("file" or "dir") when FaultSyncTrace is
// selected. A trace that cannot be written is left incomplete, which the test reading it sees.
func traceSync(kind, path string) {
	if syncTrace == "" {
		return
	}
	syncTraceMu.Lock()
	defer syncTraceMu.Unlock()
	f, err := os.OpenFile(syncTrace, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "%s %s\n", kind, path)
}

// FaultPoint stops the process at name when FaultPointEnv selects it: SIGKILL, or the
// signal its mode names (delivered before FaultPoint returns).
func FaultPoint(name string) {
	switch faultPointSelected {
	case name:
		raise(os.Kill)
	case name + ":" + faultNth:
		if faultPasses.Add(1) == faultNthPass {
			raise(os.Kill)
		}
	case name + ":sigint":
		raise(syscall.SIGINT)
	case name + ":sigterm":
		raise(syscall.SIGTERM)
	}
}

// faultNth is the N of a selected NAME:N (as written; "" when none is selected), and
// faultNthPass its value; faultPasses counts the passes through the selected point.
var (
	faultNth, faultNthPass = selectedNth()
	faultPasses            atomic.Int64
)

func selectedNth() (string, int64) {
	i := strings.LastIndexByte(faultPointSelected, ':')
	if i < 0 {
		return "", 0
	}
	n, err := strconv.ParseInt(faultPointSelected[i+1:], 10, 64)
	if err != nil || n < 1 {
		return "", 0
	}
	return faultPointSelected[i+1:], n
}

// raise sends sig to this process and gives its handler time to run (Windows can only
// kill: there the other signals do nothing).
func raise(sig os.Signal) {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Signal(sig)
	}
	time.Sleep(200 * time.Millisecond)
}

// FaultError returns an injected error at name when FaultPointEnv selects NAME:fail.
func FaultError(name string) error {
	if faultPointSelected == name+":fail" {
		return fmt.Errorf("injected failure at %s (%s)", name, FaultPointEnv)
	}
	return nil
}

// FaultSelected reports whether FaultPointEnv selects name in its plain mode: for a point
// that leaves something of its own (a file cut short) before it stops the process with
// FaultPoint.
func FaultSelected(name string) bool {
	return faultPointSelected == name
}
