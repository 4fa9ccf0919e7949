package check

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/startup"
)

// startMaintenance is status's data.start_maintenance: what the home's own generation's next
// start and the gateway's first hour do to storage (startup.Next, the prediction
// upgrade-check makes for another generation), or why it is not predicted: a newer
// generation's rules are unknown, or state.db does not open.
func startMaintenance(ctx context.Context, h *home.Home) (*startup.StartMaintenance, string, error) {
	if why := PreviewUnknown(h); why != "" {
		return nil, why, nil
	}
	m, err := startup.Next(ctx, h)
	if errors.Is(err, startup.ErrNoDatabase) {
		return nil, "state.db does not open: " + oneLine(h.DBErr), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("start maintenance: %w", err)
	}
	return &m, "", nil
}

// StartMaintenanceText is status's lines on what the next start does to storage: the
// auto-prune (with its count, so that an operator learns before the start how many sessions
// it deletes), the latched repairs not yet latched, the first-hour entries prune.
// r0418's runtime has neither the auto-prune nor the latched repairs.
func StartMaintenanceText(h *home.Home, d StatusData) []string {
	m := d.StartMaintenance
	if m == nil {
		return []string{"not predicted: " + d.StartMaintenanceUnknown}
	}
	if !h.Rules.Maintenance.AutoPrune {
		return []string{"auto-prune  none in generation " + string(h.Gen), entriesPruneText(m.EntriesPrune)}
	}
	return []string{autoPruneText(m.AutoPrune), latchedText("ghost prune (ghost_session_prune_v1)", "deletes", m.GhostPrune),
		latchedText("orphan finalize (orphaned_compression_finalize_v1)", "ends", m.OrphanFinalize), entriesPruneText(m.EntriesPrune)}
}

// autoPruneText words maybe_auto_prune_and_vacuum at the next start.
func autoPruneText(a startup.AutoPrune) string {
	switch {
	case a.Raises != "":
		return "auto-prune  does not run: " + a.Raises
	case !a.Enabled:
		return "auto-prune  off (sessions.auto_prune)"
	case a.Throttled:
		return fmt.Sprintf("auto-prune  on, but ran within %g h (last_auto_prune): skipped", a.MinIntervalHours)
	}
	s := fmt.Sprintf("auto-prune  DELETES %d ended session(s) older than %g days with their messages", a.WouldDelete, a.RetentionDays)
	if a.Vacuum {
		s += ", then VACUUM"
	}
	return s
}

// latchedText words a one-time repair.
func latchedText(name, verb string, l startup.Latched) string {
	switch {
	case l.Latched:
		return "latched     " + name + ": done before"
	case l.Raises != "":
		return "latched     " + name + ": raises (" + l.Raises + "), retried at every CLI start"
	}
	return fmt.Sprintf("latched     %s: the next CLI start %s %d session(s)", name, verb, l.WouldChange)
}

// entriesPruneText words the gateway's first-hour prune_old_entries.
func entriesPruneText(p startup.EntriesPrune) string {
	if p.Raises != "" {
		return "entries     first hour: prune_old_entries raises (" + p.Raises + "): drops nothing"
	}
	s := fmt.Sprintf("entries     first hour: prune_old_entries drops %d routing entr%s not updated for %g days", p.WouldDrop, plural(p.WouldDrop, "y", "ies"), p.MaxAgeDays)
	if len(p.Keys) > 0 && len(p.Keys) <= 3 {
		s += " (" + strings.Join(p.Keys, ", ") + ")"
	}
	return s
}

// plural picks the singular or plural ending of a count.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
