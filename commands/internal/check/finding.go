// Package check runs sessionctl's read-only health checks over an opened home and previews
// what the next gateway start will do. Every finding carries a typed check id; docs/checks.md
// lists exactly the ids in All.
package check

import "fmt"

// ID names a check. IDs are stable: scripts match on them.
type ID string

// Severity of a finding.
type Severity string

// Severities, from worst to mildest.
const (
	Error Severity = "error"
	Warn  Severity = "warn"
	Info  Severity = "info"
)

// Finding is one health-check result (the contract's {check, severity, subject, message}).
type Finding struct {
	Check    ID       `json:"check"`
	Severity Severity `json:"severity"`
	Subject  string   `json:"subject"`
	Message  string   `json:"message"`
}

// Check ids of the health checks (docs/checks.md, one table per family).
const (
	SessionsJSONUnreadable    ID = "sessions-json.unreadable"
	SessionsJSONLeftoverTmp   ID = "sessions-json.leftover-tmp"
	SessionsJSONNewer         ID = "sessions-json.newer"
	EntrySkipped              ID = "entry.skipped"
	EntryPathUnsafe           ID = "entry.path-unsafe"
	EntryUnreadable           ID = "entry.unreadable"
	EntryAwareTimestamp       ID = "entry.aware-timestamp"
	EntryFutureTimestamp      ID = "entry.future-timestamp"
	EntryKeyMismatch          ID = "entry.key-mismatch"
	EntrySharedSession        ID = "entry.shared-session"
	EntrySuspendedPending     ID = "entry.suspended-and-pending"
	EntryStaleResume          ID = "entry.stale-resume"
	EntryUnknownReason        ID = "entry.unknown-resume-reason"
	EntryUnknownPlatform      ID = "entry.unknown-platform"
	EntryUnknownFields        ID = "entry.unknown-fields"
	EntryRowMissing           ID = "entry.row-missing"
	EntryRepointable          ID = "entry.repointable"
	EntryRowEnded             ID = "entry.row-ended"
	EntrySourceMismatch       ID = "entry.source-mismatch"
	EntryRowKeyMismatch       ID = "entry.row-key-mismatch"
	RoutingForeignScope       ID = "routing.foreign-scope"
	RoutingMirrorMissing      ID = "routing.mirror-missing"
	RoutingMirrorOnly         ID = "routing.mirror-only"
	RoutingMirrorDiffers      ID = "routing.mirror-differs"
	CountsUnparseable         ID = "counts.unparseable"
	CountsNotInteger          ID = "counts.not-integer"
	CountsOrphanKey           ID = "counts.orphan-key"
	CountsStuck               ID = "counts.stuck"
	DBMissing                 ID = "db.missing"
	DBCorrupt                 ID = "db.corrupt"
	DBSchemaUnknown           ID = "db.schema-unknown"
	SchemaIntermediate        ID = "schema.intermediate"
	DBLegacyPrimaryKey        ID = "db.legacy-primary-key"
	DBFTSOptimizable          ID = "db.fts-optimizable"
	DBFTSStale                ID = "db.fts-stale"
	DBFTSRebuildInterrupted   ID = "db.fts-rebuild-interrupted"
	EntryTurnMarker           ID = "entry.turn-marker"
	EntryStartTarget          ID = "entry.start-target"
	PreviewResetPolicy        ID = "preview.reset-policy"
	UpgradeSchema             ID = "upgrade.schema"
	UpgradeEntriesDropped     ID = "upgrade.entries-dropped"
	UpgradeEntriesRewritten   ID = "upgrade.entries-rewritten"
	UpgradeEntriesImported    ID = "upgrade.entries-imported"
	UpgradeGhostPrune         ID = "upgrade.ghost-prune"
	UpgradeOrphanFinalize     ID = "upgrade.orphan-finalize"
	UpgradeAutoPrune          ID = "upgrade.auto-prune"
	UpgradeEntriesPruned      ID = "upgrade.entries-pruned"
	UpgradeFTSRebuild         ID = "upgrade.fts-rebuild"
	UpgradeRollback           ID = "upgrade.rollback"
	DBSchemaVersionMissing    ID = "db.schema-version-missing"
	DBIntegrity               ID = "db.integrity"
	DBOrphanedContinuation    ID = "db.orphaned-continuation"
	DBTUIGhost                ID = "db.tui-ghost"
	DBExpiredLock             ID = "db.expired-compression-lock"
	DBWALLarge                ID = "db.wal-large"
	DBFreelist                ID = "db.freelist"
	DBWALResetBug             ID = "db.sqlite-wal-reset-bug"
	DBFTSOutOfStep            ID = "db.fts-out-of-step"
	SessionsStrayTranscript   ID = "sessions.stray-transcript"
	SessionsTranscriptMissing ID = "sessions.transcript-missing"
	DBBadModelConfig          ID = "db.malformed-model-config"
	DBOddValue                ID = "db.odd-value"
	DBDeletedHolder           ID = "db.deleted-holder"
	JournalOrphanRowStore     ID = "journal.orphan-row-store"
	JournalOrphanStash        ID = "journal.orphan-stash"
	JournalTorn               ID = "journal.torn"
	JournalLeftoverTmp        ID = "journal.leftover-tmp"
	DBInterrupted             ID = "db.interrupted"
	GatewayRunning            ID = "gateway.running"
	StartPreviewUnknown       ID = "start.preview-unknown"
	MaintainRoutingSkipped    ID = "maintain.routing-skipped"
	MaintainWritesRefused     ID = "maintain.writes-refused"
	MaintainStepRefused       ID = "maintain.step-refused"
	MaintainCompactSkipped    ID = "maintain.compact-skipped"
)

// Ids of the notes repairs add to their findings (docs/checks.md, "Repair notes").
const (
	ResumeSuspended   ID = "resume.suspended"
	ResumeNotPending  ID = "resume.not-pending"
	OrphanLocked      ID = "orphan.locked"
	OrphanLeased      ID = "orphan.leased"
	GhostLeased       ID = "ghost.leased"
	GhostHasChildren  ID = "ghost.has-children"
	GhostUnsafeID     ID = "ghost.unsafe-id"
	GhostGlobID       ID = "ghost.glob-id"
	RepairBatches     ID = "repair.batches"
	TranscriptsKept   ID = "repair.transcripts-kept"
	PruneLocked       ID = "prune.locked"
	PruneLeased       ID = "prune.leased"
	PruneUnsafeID     ID = "prune.unsafe-id"
	CompactFTSSkipped ID = "compact.fts-skipped"
	BackupManifest    ID = "backup.manifest"
	BackupFile        ID = "backup.file"
	BackupIntegrity   ID = "backup.integrity"
	BackupOtherHome   ID = "backup.other-home"
	BackupKept        ID = "backup.kept"
	RestoreStale      ID = "restore.stale-sidecar"
)

// All lists every check id sessionctl can emit.
var All = []ID{
	SessionsJSONUnreadable, SessionsJSONLeftoverTmp, EntrySkipped, EntryPathUnsafe, EntryAwareTimestamp,
	EntryFutureTimestamp, EntryKeyMismatch, EntrySharedSession, EntrySuspendedPending, EntryStaleResume,
	EntryUnknownReason, EntryUnknownPlatform, EntryUnknownFields, EntryRowMissing, EntryRepointable,
	EntryRowEnded, EntrySourceMismatch, EntryRowKeyMismatch, RoutingForeignScope, RoutingMirrorMissing,
	RoutingMirrorOnly, RoutingMirrorDiffers, CountsUnparseable, CountsNotInteger, CountsOrphanKey,
	CountsStuck, DBMissing, DBCorrupt, DBSchemaUnknown, SchemaIntermediate, DBLegacyPrimaryKey, DBFTSOptimizable, DBFTSStale, DBFTSRebuildInterrupted,
	EntryTurnMarker, EntryStartTarget, PreviewResetPolicy,
	UpgradeSchema, UpgradeEntriesDropped, UpgradeEntriesRewritten, UpgradeEntriesImported, UpgradeGhostPrune,
	UpgradeOrphanFinalize, UpgradeAutoPrune, UpgradeEntriesPruned, UpgradeFTSRebuild, UpgradeRollback, DBSchemaVersionMissing, DBIntegrity, DBOrphanedContinuation, DBTUIGhost,
	DBExpiredLock, DBWALLarge, DBFreelist, DBWALResetBug, DBFTSOutOfStep, SessionsStrayTranscript, SessionsTranscriptMissing, DBBadModelConfig, DBOddValue, GatewayRunning, MaintainRoutingSkipped,
	MaintainWritesRefused, MaintainStepRefused, MaintainCompactSkipped, SessionsJSONNewer, EntryUnreadable, StartPreviewUnknown,
	ResumeSuspended, ResumeNotPending, OrphanLocked, OrphanLeased, GhostLeased, GhostHasChildren, GhostUnsafeID, GhostGlobID, RepairBatches, TranscriptsKept,
	PruneLocked, PruneLeased, PruneUnsafeID,
	DBDeletedHolder, JournalOrphanRowStore, JournalOrphanStash, JournalTorn, JournalLeftoverTmp, DBInterrupted, CompactFTSSkipped, BackupManifest, BackupFile, BackupIntegrity, BackupOtherHome, BackupKept, RestoreStale,
}

// FailOn is the level of findings that fails a run.
type FailOn string

// Levels of --fail-on.
const (
	FailOnError FailOn = "error"
	FailOnWarn  FailOn = "warn"
	FailNever   FailOn = "never"
)

// ParseFailOn reads a --fail-on value.
func ParseFailOn(s string) (FailOn, error) {
	switch f := FailOn(s); f {
	case FailOnError, FailOnWarn, FailNever:
		return f, nil
	}
	return "", fmt.Errorf("--fail-on must be error, warn or never")
}

// Fails reports whether a finding is at or above the level.
func (l FailOn) Fails(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == Error && l != FailNever {
			return true
		}
		if f.Severity == Warn && l == FailOnWarn {
			return true
		}
	}
	return false
}

// Summarise counts findings by severity in one line.
func Summarise(findings []Finding) string {
	n := map[Severity]int{}
	for _, f := range findings {
		n[f.Severity]++
	}
	return fmt.Sprintf("%d error(s), %d warning(s), %d info", n[Error], n[Warn], n[Info])
}

// CountProblems counts the findings above info.
func CountProblems(findings []Finding) int {
	n := 0
	for _, f := range findings {
		if f.Severity != Info {
			n++
		}
	}
	return n
}
