package upgrade

import (
	"context"

	"github.com/sessionctl/sessionctl/commands/internal/home"
)

// Start is a stub until the routing worker's branch lands.
func Start(ctx context.Context, h *home.Home, to Target) (Routing, StartMaintenance, error) {
	return Routing{}, StartMaintenance{}, nil
}
