// Command sessionctl inspects and repairs the session state of a Hermes Agent gateway:
// the routing index (sessions/sessions.json or the gateway_routing table) and state.db.
package main

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/sessionctl/sessionctl/commands"
)

// memoryLimit is a soft limit for the Go heap: on large homes the collector runs more often
// instead of letting garbage double the resident size.
const memoryLimit = 64 << 20

func main() {
	debug.SetMemoryLimit(memoryLimit)
	ctx, stop := commands.NotifyContext(context.Background())
	code := commands.Run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
