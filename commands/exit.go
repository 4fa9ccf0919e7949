package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Exit codes of the CLI contract.
const (
	ExitOK       = 0 // success; for check/maintain: nothing at or above --fail-on
	ExitFindings = 1 // check/maintain found problems at or above --fail-on
	ExitUsage    = 2 // usage error
	ExitRefused  = 3 // refused: gateway running, lock held, undo conflict
	ExitData     = 4 // environment or data error: missing, unreadable, corrupt, unsupported
	ExitWrite    = 5 // a write failed and was rolled back; nothing changed (verified)
	ExitPartial  = 6 // a write failed part-way: what changed is journaled and named
	// ExitInterrupted is SIGINT's code (130); SIGTERM's is 143: 128 + the signal's number.
	ExitInterrupted = 130
)

// exitCode maps a run's error to the contract's exit code: the one place that does. A run
// stopped by a signal exits 128 + the signal; one that changed the home before it stopped
// (repair.Incomplete) exits 6. Otherwise an error marked with a failure class (the outermost
// mark wins) has that class's code; the domain's sentinel errors decide the rest, and anything
// else is a data or environment error.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	if code := interruptExit(ctx); code != 0 {
		return code
	}
	var inc *repair.Incomplete
	switch {
	case errors.As(err, &inc):
		return ExitPartial
	case errors.Is(err, errFindings):
		return ExitFindings
	}
	if class, ok := failure.ClassOf(err); ok {
		return classCodes[class]
	}
	switch {
	case errors.Is(err, sessionsjson.ErrInvalid):
		return ExitUsage
	case errors.Is(err, sessionsjson.ErrLocked), errors.Is(err, repair.ErrGatewayRunning), errors.Is(err, statedb.ErrRepairInProgress),
		errors.Is(err, statedb.ErrConflict), errors.Is(err, repair.ErrUndoConflict):
		return ExitRefused
	}
	return ExitData
}

// errorKind names an exit code in the envelope's error.kind.
func errorKind(code int) string {
	if kind, ok := exitKinds[code]; ok {
		return kind
	}
	return "interrupted"
}

var exitKinds = map[int]string{ExitFindings: "findings", ExitUsage: "usage", ExitRefused: "refused",
	ExitData: "data", ExitWrite: "write", ExitPartial: "partial"}

var classCodes = map[failure.Class]int{
	failure.Usage:   ExitUsage,
	failure.Refused: ExitRefused,
	failure.Data:    ExitData,
	failure.Write:   ExitWrite,
}

// errFindings ends a check or maintain whose findings reach --fail-on (exit 1); the findings
// were printed.
var errFindings = errors.New("findings at or above --fail-on")

// errReported marks an error whose message was already printed (in the output itself): Run
// only turns it into an exit code.
var errReported = errors.New("reported")

func isReported(err error) bool {
	return errors.Is(err, errReported) || errors.Is(err, errFindings)
}

// usage marks err as a usage error (exit 2).
func usage(err error) error {
	return failure.Mark(failure.Usage, err)
}

// usagef builds a usage error (exit 2).
func usagef(format string, a ...any) error {
	return usage(fmt.Errorf(format, a...))
}
