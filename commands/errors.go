package commands

import (
	"errors"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// errGatewayRunning refuses routing-index writes while a gateway holds the home.
var errGatewayRunning = errors.New("a gateway is running; it rewrites the routing index from memory and would undo this change (stop it first, or pass --force)")

// classify maps a domain error to the contract's exit code.
func classify(err error) int {
	switch {
	case errors.Is(err, sessionsjson.ErrInvalid):
		return ExitUsage
	case errors.Is(err, sessionsjson.ErrLocked), errors.Is(err, errGatewayRunning),
		errors.Is(err, statedb.ErrConflict):
		return ExitRefused
	default:
		return ExitData
	}
}
