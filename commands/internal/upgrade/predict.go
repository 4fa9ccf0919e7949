package upgrade

import (
	"context"
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
)

// LongRebuildSeconds is the estimated FTS rebuild time from which the rebuild is a warning:
// the target's first open holds the write lock for it (the gateway starts that much later).
const LongRebuildSeconds = 60

// Check predicts what the runtime of generation to does to the home (opened for
// home.Inspect) on its first open and start, and words what it finds as upgrade.* findings:
// data lost is an error, rewrites and long rebuilds warnings, the rest information.
func Check(ctx context.Context, h *home.Home, to Target) (Report, []check.Finding, error) {
	rep := Report{
		From: Side{Generation: string(h.Gen), Schema: h.Schema.Version},
		To:   Side{Generation: string(to.Gen), Schema: max(to.Schema, h.Schema.Version)},
	}
	if h.DB != nil {
		var err error
		if rep.SchemaSteps, rep.FTSRebuild, rep.Downgrade, err = Schema(ctx, h, to); err != nil {
			return rep, nil, err
		}
		if rep.DataBackfills, err = Backfills(ctx, h, to); err != nil {
			return rep, nil, err
		}
	}
	var err error
	if rep.Routing, rep.StartMaintenance, err = Start(ctx, h, to); err != nil {
		return rep, nil, err
	}
	rollback(h, to, &rep)
	out := findings(rep)
	if h.DB != nil && to.Schema < h.Schema.Version {
		out = append([]check.Finding{{Check: check.UpgradeSchema, Severity: check.Info, Subject: "state.db",
			Message: fmt.Sprintf("a downgrade: %s writes schema v%d, and no runtime lowers schema_version: the file stays v%d, %s adds only columns it lacks and reads the rest by its own rules", to.Gen, to.Schema, h.Schema.Version, to.Gen)}}, out...)
	}
	return rep, out, nil
}

// rollback fills what the home's own generation loads when started again on the upgraded
// home (testdata/upgrade: each pair's downgrade): the index holds what the target's load kept
// less its first-hour prune, or is untouched when that load failed or kept nothing; an
// r0418–r0525 loader reads no entry from a sessions.json that starts with "_README" (a
// TypeError aborts the load), which a target that writes one leaves behind.
func rollback(h *home.Home, to Target, rep *Report) {
	d := rep.Downgrade
	if d == nil {
		return
	}
	r := rep.Routing
	d.EntriesInIndex = r.EntriesBefore
	readme := h.Mirror.Doc != nil && h.Mirror.Doc.HasREADME()
	if r.LoadError == "" && r.Kept > 0 {
		d.EntriesInIndex = r.Kept - rep.StartMaintenance.EntriesPrune.WouldDrop
		readme = readme || to.Rules.README != ""
	}
	d.EntriesLoaded = d.EntriesInIndex
	if readme && h.Rules.TypeErrorAborts {
		d.EntriesLoaded = 0
	}
}

// findings words the report.
func findings(r Report) []check.Finding {
	to := r.To.Generation
	out := append(schemaFindings(r), droppedFindings(r)...)
	for _, c := range r.Routing.Changed {
		out = append(out, check.Finding{Check: check.UpgradeEntriesRewritten, Severity: check.Warn, Subject: c.Key,
			Message: fmt.Sprintf("%s's loader rewrites it (%s: %s)", to, c.Reason, strings.Join(c.Fields, ", "))})
	}
	if r.Routing.Imported > 0 {
		out = append(out, check.Finding{Check: check.UpgradeEntriesImported, Severity: check.Info, Subject: "gateway_routing",
			Message: fmt.Sprintf("%d entries imported from sessions.json into gateway_routing (the routing index moves into state.db; sessions.json becomes its mirror)", r.Routing.Imported)})
	}
	out = append(out, maintenanceFindings(to, r.StartMaintenance)...)
	return append(out, rollbackFindings(r)...)
}

// droppedFindings words the dropped entries: one finding per ended session, one for all the
// entries a failed load drops (the same cause).
func droppedFindings(r Report) []check.Finding {
	var out []check.Finding
	var failed []Dropped
	for _, d := range r.Routing.Dropped {
		if d.Reason != "session_ended" {
			failed = append(failed, d)
			continue
		}
		sev, why := check.Warn, "the current runtime's next start drops it too"
		if d.LoadedByFrom {
			sev, why = check.Error, "the current runtime keeps it: this routing is lost"
		}
		out = append(out, check.Finding{Check: check.UpgradeEntriesDropped, Severity: sev, Subject: d.Key,
			Message: fmt.Sprintf("%s's loader drops this entry (its session ended %s); %s", r.To.Generation, d.EndReason, why)})
	}
	if len(failed) == 0 {
		return out
	}
	lost := 0
	for _, d := range failed {
		if d.LoadedByFrom {
			lost++
		}
	}
	sev := check.Warn
	if lost > 0 {
		sev = check.Error
	}
	return append(out, check.Finding{Check: check.UpgradeEntriesDropped, Severity: sev, Subject: "sessions.json",
		Message: fmt.Sprintf("%s's loader reads %d entries it cannot load (%s); %d of them the current runtime loads", r.To.Generation, len(failed), failed[0].Message, lost)})
}

// schemaFindings words the schema steps and the FTS rebuild.
func schemaFindings(r Report) []check.Finding {
	var out []check.Finding
	if len(r.SchemaSteps) > 0 {
		out = append(out, check.Finding{Check: check.UpgradeSchema, Severity: check.Info, Subject: "state.db",
			Message: fmt.Sprintf("schema v%d → v%d in %d steps on the first open (see data.upgrade.schema_steps)", r.From.Schema, r.To.Schema, len(r.SchemaSteps))})
	}
	if f := r.FTSRebuild; f.Triggered {
		sev := check.Info
		if f.EstimateSeconds >= LongRebuildSeconds {
			sev = check.Warn
		}
		out = append(out, check.Finding{Check: check.UpgradeFTSRebuild, Severity: sev, Subject: strings.Join(f.Tables, ", "),
			Message: fmt.Sprintf("the first open rebuilds the full-text index from %d messages (about %.1f s, with the write lock held: the gateway starts that much later)", f.Rows, f.EstimateSeconds)})
	}
	return out
}

// maintenanceFindings words the start-up maintenance.
func maintenanceFindings(to string, m StartMaintenance) []check.Finding {
	var out []check.Finding
	if n := m.GhostPrune.WouldChange; n > 0 {
		out = append(out, check.Finding{Check: check.UpgradeGhostPrune, Severity: check.Info, Subject: "sessions",
			Message: fmt.Sprintf("the first CLI start deletes %d empty TUI ghost sessions (latched once: ghost_session_prune_v1)", n)})
	}
	if n := m.OrphanFinalize.WouldChange; n > 0 {
		out = append(out, check.Finding{Check: check.UpgradeOrphanFinalize, Severity: check.Info, Subject: "sessions",
			Message: fmt.Sprintf("the first CLI start ends %d open compression continuations older than 7 days (orphaned_compression; latched once; messages kept)", n)})
	}
	if a := m.AutoPrune; a.Enabled && a.WouldDelete > 0 {
		sev, who := check.Warn, "as config.yaml asks"
		if !a.Configured {
			sev, who = check.Error, to+"'s default, which config.yaml never set"
		}
		vacuum := ""
		if a.Vacuum {
			vacuum = ", then VACUUM"
		}
		out = append(out, check.Finding{Check: check.UpgradeAutoPrune, Severity: sev, Subject: "sessions",
			Message: fmt.Sprintf("auto-prune deletes %d ended sessions older than %g days with their messages%s (%s)", a.WouldDelete, a.RetentionDays, vacuum, who)})
	}
	if e := m.EntriesPrune; e.WouldDrop > 0 {
		out = append(out, check.Finding{Check: check.UpgradeEntriesPruned, Severity: check.Warn, Subject: strings.Join(e.Keys, ", "),
			Message: fmt.Sprintf("the gateway's first-hour housekeeping drops %d routing entries idle for more than %g days", e.WouldDrop, e.MaxAgeDays)})
	}
	return out
}

// rollbackFindings says what starting the home's own generation again would load.
func rollbackFindings(r Report) []check.Finding {
	d := r.Downgrade
	if d == nil {
		return nil
	}
	switch {
	case !d.DBOpens:
		return []check.Finding{{Check: check.UpgradeRollback, Severity: check.Warn, Subject: d.Generation,
			Message: fmt.Sprintf("after the upgrade, %s no longer opens state.db: a rollback needs a backup", d.Generation)}}
	case d.EntriesLoaded < d.EntriesInIndex:
		return []check.Finding{{Check: check.UpgradeRollback, Severity: check.Warn, Subject: d.Generation,
			Message: fmt.Sprintf("after the upgrade, a rollback to %s loads %d of %d routing entries: keep a backup of sessions.json", d.Generation, d.EntriesLoaded, d.EntriesInIndex)}}
	}
	return nil
}
