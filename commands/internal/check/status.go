package check

import (
	"context"
	"fmt"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/holders"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/startup"
	"github.com/sessionctl/sessionctl/statedb"
)

// StatusCounts is data.counts of `status --json`.
type StatusCounts struct {
	Entries       int   `json:"entries"`
	Skipped       int   `json:"skipped"`
	ResumePending int   `json:"resume_pending"`
	Suspended     int   `json:"suspended"`
	Stale         int   `json:"stale"`
	Sessions      int64 `json:"sessions"`
	OpenSessions  int64 `json:"open_sessions"`
	EndedSessions int64 `json:"ended_sessions"`
	Messages      int64 `json:"messages"`
}

// StatusData is data of `status --json`.
type StatusData struct {
	Counts        StatusCounts   `json:"counts"`
	RoutingSource string         `json:"routing_source"`
	ForeignScopes map[string]int `json:"foreign_scopes,omitempty"`
	RestartCounts map[string]any `json:"restart_failure_counts"`
	CleanShutdown bool           `json:"clean_shutdown"`
	JournalMode   string         `json:"journal_mode,omitempty"`
	NextStart     []StartAction  `json:"next_start"`
	// NextStartUnknown says why NextStart is null: the home's generation is newer than
	// sessionctl knows, and its start is not previewed ("" otherwise).
	NextStartUnknown string         `json:"next_start_unknown,omitempty"`
	Gateway          string         `json:"gateway_detail"`
	SQLiteVersion    string         `json:"sqlite_version,omitempty"`
	Schema           *SchemaSummary `json:"schema,omitempty"`
	// StartMaintenance is what the next start and the gateway's first hour do to storage
	// (the contract's data.start_maintenance); null when StartMaintenanceUnknown says why.
	StartMaintenance        *startup.StartMaintenance `json:"start_maintenance"`
	StartMaintenanceUnknown string                    `json:"start_maintenance_unknown,omitempty"`
	// Holders are the processes holding state.db, its -wal or -shm, or sessions.json open,
	// deleted generations included (null where the platform cannot tell).
	Holders *holders.Scan `json:"holders"`
}

// SchemaSummary is the state.db schema as status reports it.
type SchemaSummary struct {
	Version          int    `json:"version"`
	VersionMissing   bool   `json:"version_missing,omitempty"`
	Known            bool   `json:"known"`
	FTSLayout        string `json:"fts_layout"`
	CompressionLocks bool   `json:"compression_locks"`
	GatewayRouting   bool   `json:"gateway_routing"`
	StateMeta        bool   `json:"state_meta"`
	PageCount        int64  `json:"page_count"`
	FreelistCount    int64  `json:"freelist_count"`
}

// SchemaVersionText words the schema version for status: "v13", or "v13 (no schema_version
// row: read from the layout)".
func SchemaVersionText(s statedb.Schema) string {
	if s.VersionMissing {
		return fmt.Sprintf("v%d (no schema_version row: read from the layout)", s.Version)
	}
	return fmt.Sprintf("v%d", s.Version)
}

// summariseSchema is the schema as status reports it.
func summariseSchema(s statedb.Schema) *SchemaSummary {
	return &SchemaSummary{Version: s.Version, VersionMissing: s.VersionMissing, Known: s.Known, FTSLayout: s.FTSLayout, CompressionLocks: s.HasCompressionLocks,
		GatewayRouting: s.HasGatewayRouting, StateMeta: s.HasStateMeta, PageCount: s.PageCount, FreelistCount: s.FreelistCount}
}

// Status reads what `status` reports: counts, the restart counts, the schema and the preview
// of the next gateway start.
func Status(ctx context.Context, h *home.Home) (StatusData, error) {
	rows, err := h.Rows(ctx)
	if err != nil {
		return StatusData{}, err
	}
	d := StatusData{
		RoutingSource: h.Routing.Source.String(),
		ForeignScopes: h.Routing.Foreign,
		RestartCounts: countsMap(h),
		CleanShutdown: h.CleanShutdown,
		Gateway:       h.Gateway.Detail,
		Holders:       holdersStatus(h),
	}
	if d.NextStartUnknown = PreviewUnknown(h); d.NextStartUnknown == "" {
		rec, err := h.Recoveries(ctx, rows)
		if err != nil {
			return StatusData{}, err
		}
		d.NextStart = PreviewStart(h, rows, rec)
	}
	if d.StartMaintenance, d.StartMaintenanceUnknown, err = startMaintenance(ctx, h); err != nil {
		return StatusData{}, err
	}
	if d.Counts, err = Counts(ctx, h); err != nil {
		return d, err
	}
	if h.DB != nil {
		d.Schema = summariseSchema(h.Schema)
		d.JournalMode = h.Schema.JournalMode
		d.SQLiteVersion = h.Schema.SQLiteVersion
	}
	return d, nil
}

// Counts counts the routing entries by state and, when the home has a state.db, its
// sessions and messages (status' data.counts).
func Counts(ctx context.Context, h *home.Home) (StatusCounts, error) {
	c := routingCounts(h)
	if h.DB == nil {
		return c, nil
	}
	t, err := h.DB.Totals(ctx)
	if err != nil {
		return c, fmt.Errorf("state.db: %w", err)
	}
	c.Sessions, c.OpenSessions, c.EndedSessions, c.Messages = t.Sessions, t.Open, t.Ended, t.Messages
	return c, nil
}

// routingCounts counts the routing entries by state.
func routingCounts(h *home.Home) StatusCounts {
	now := h.Opts.Clock.NaiveLocalMicros(time.Local)
	var c StatusCounts
	for _, e := range h.Routing.Entries {
		if e.Skip != "" {
			c.Skipped++
			continue
		}
		c.Entries++
		if e.ResumePending {
			c.ResumePending++
			if e.StaleMarker(now) {
				c.Stale++
			}
		}
		if e.Suspended {
			c.Suspended++
		}
	}
	return c
}

// countsMap is the counts file as status reports it: numbers as numbers, anything else as
// its JSON text.
func countsMap(h *home.Home) map[string]any {
	counts := h.Counts.Parsed
	if counts == nil {
		return nil
	}
	out := make(map[string]any, len(counts.Keys))
	for _, k := range counts.Keys {
		if n, ok := counts.Int(k); ok {
			out[k] = n
		} else {
			out[k] = string(counts.Values[k])
		}
	}
	return out
}
