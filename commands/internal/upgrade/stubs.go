package upgrade

import (
	"context"

	"github.com/sessionctl/sessionctl/commands/internal/home"
)

// Schema is a stub until the schema worker's branch lands.
func Schema(ctx context.Context, h *home.Home, to Target) ([]SchemaStep, FTSRebuild, *Downgrade, error) {
	return nil, FTSRebuild{}, nil, nil
}

// Start is a stub until the routing worker's branch lands.
func Start(ctx context.Context, h *home.Home, to Target) (Routing, StartMaintenance, error) {
	return Routing{}, StartMaintenance{}, nil
}
