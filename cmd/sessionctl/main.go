// Command sessionctl inspects and repairs the session state of a Hermes Agent gateway:
// the routing index (sessions/sessions.json or the gateway_routing table) and state.db.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/sessionctl/sessionctl/commands"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := commands.Run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
