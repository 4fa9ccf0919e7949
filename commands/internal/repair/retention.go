package repair

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// retentionWrite: prune --older-than deletes sessions rows and messages rows (the FTS
// triggers run).
var retentionWrite = dbWrite{deletes: true, messages: true}

// RetentionOptions are prune's arguments: --older-than (seconds) and --source ("" for all),
// or --never-active (r0817's prune_never_active_keyed_sessions, OlderThan its age).
type RetentionOptions struct {
	OlderThan   float64
	Source      string
	NeverActive bool
	// Filters are the runtime's _prune_filter_where keyword filters given (a time given as
	// an age is resolved at the run's clock).
	Filters []statedb.FilterArg
}

// RetentionSummary is data.prune: what the prune selects (the plan) or deleted (applied).
type RetentionSummary struct {
	OlderThan float64 `json:"older_than_seconds"`
	// Cutoff is null when a filter replaces the age bound (started_before, last_active_before).
	Cutoff       *float64 `json:"cutoff"`
	AgeRule      string   `json:"age_rule"` // started_at, or last_activity (r0817)
	Source       *string  `json:"source"`
	RemovesFiles bool     `json:"removes_files"` // the generation's prune removes transcript files
	Sessions     int      `json:"sessions"`
	Messages     int64    `json:"messages"`
	MessageBytes int64    `json:"message_bytes"`
	Files        int      `json:"files"`
	FileBytes    int64    `json:"file_bytes"`
	Orphaned     int      `json:"orphaned"`
	Oldest       *float64 `json:"oldest"` // the oldest age (the time the rule measures) among them
	Newest       *float64 `json:"newest"`
	Skipped      int      `json:"skipped"`
	// NeverActive: the run is prune --never-active; Routing counts the gateway_routing rows
	// naming its sessions, which go with them.
	NeverActive bool `json:"never_active"`
	Routing     int  `json:"routing_rows"`
	// Filters are the keyword filters given, by the runtime's name, with the value bound
	// (an instant for a time; null for archived=any).
	Filters    map[string]any `json:"filters"`
	filterText string
}

// Retention plans, and when applying performs, prune --older-than D [--source S]: the
// runtime's SessionDB.prune_sessions of the home's generation (statedb.PruneSessions), in
// batches sized by their cost (retentionSizer), each with its journal and row store; the
// transcript files go into the journal's stash where the generation's prune removes them.
func Retention(ctx context.Context, r *Run, o RetentionOptions) (Outcome, RetentionSummary, error) {
	if err := r.H.NeedDB(); err != nil {
		return Outcome{}, RetentionSummary{}, err
	}
	rules := r.H.Rules.Maintenance
	ret := statedb.Retention{Cutoff: r.H.Opts.Clock.Unix - o.OlderThan, Age: rules.Age, Source: o.Source, NeverActive: o.NeverActive, FilterSet: rules.PruneFilters}
	sum := RetentionSummary{OlderThan: o.OlderThan, AgeRule: ageRule(rules.Age), RemovesFiles: rules.PruneFiles, NeverActive: o.NeverActive}
	if o.Source != "" {
		sum.Source = &o.Source
	}
	if o.NeverActive {
		sum.AgeRule = ageRule(sessionsjson.PruneByStart)
	}
	filters, err := resolveFilters(r.H, o.Filters)
	if err != nil {
		return Outcome{}, sum, err
	}
	ret.Filters, sum.Filters, sum.filterText = filters.args, filters.values, filters.text
	if !ret.AgeReplaced() {
		sum.Cutoff = &ret.Cutoff
	}
	if err := r.checkRetention(ctx, o); err != nil {
		return Outcome{}, sum, err
	}
	var notes []check.Finding
	if r.Apply {
		if notes, err = r.removeOrphanRowStores(ctx); err != nil {
			return Outcome{}, sum, err
		}
	}
	cands, err := r.H.DB.RetentionCandidates(ctx, r.H.Opts.Clock.Unix, ret)
	if err != nil {
		return Outcome{}, sum, failure.Mark(failure.Data, fmt.Errorf("prune: %w", err))
	}
	var deletable []string
	for _, c := range cands {
		if !c.Skipped() {
			deletable = append(deletable, c.ID)
		}
	}
	files, err := r.retentionFiles(deletable)
	if err != nil {
		return Outcome{}, sum, err
	}
	files, kept := r.movable(files)
	sizes := fileSizes(files)
	res := Outcome{Findings: append(append(notes, skippedFindings(cands)...), kept...)}
	if !r.Apply || len(deletable) == 0 {
		orphaned, err := r.H.DB.ChildrenLeft(ctx, deletable)
		if err != nil {
			return Outcome{}, sum, failure.Mark(failure.Data, fmt.Errorf("prune: %w", err))
		}
		res.add(retentionReport(cands, deletable, orphaned, files))
		routing, err := r.H.DB.RoutingNaming(ctx, neverActive(o, deletable))
		if err != nil {
			return Outcome{}, sum, failure.Mark(failure.Data, fmt.Errorf("prune: %w", err))
		}
		res.Changes = append(res.Changes, routingRowChanges(routing)...)
		sum.fill(cands, deletable, orphaned, files, sizes)
		sum.Routing = len(routing)
		return res, sum, nil
	}
	res, orphaned, err := r.applyRetention(ctx, ret, deletable, r.retentionSizer(cands), files, res)
	sum.fill(cands, changedSessions(res.Changes), orphaned, files, sizes)
	for _, c := range res.Changes {
		if c.Store == home.StoreGatewayRouting {
			sum.Routing++
		}
	}
	return res, sum, err
}

// checkRetention refuses a never-active prune on a generation without
// prune_never_active_keyed_sessions and, when applying, what the runtime's guards and
// sessionctl's refusals forbid: a never-active prune also deletes gateway_routing rows, a
// routing-index write (refused while a gateway runs, which rewrites its rows from memory).
func (r *Run) checkRetention(ctx context.Context, o RetentionOptions) error {
	h := r.H
	if o.NeverActive && !h.Rules.Maintenance.NeverActivePrune {
		return failure.Mark(failure.Data, fmt.Errorf("prune --never-active: generation %s (schema v%d) has no prune_never_active_keyed_sessions (it arrived with 174ce8770, r0817): nothing deleted", h.Gen, h.Schema.Version))
	}
	if !r.Apply {
		return nil
	}
	if o.NeverActive && h.Schema.HasGatewayRouting {
		if err := r.checkRoutingWritable(ctx); err != nil {
			return err
		}
	}
	return r.checkDBWrite(ctx, retentionWrite)
}

// neverActive returns ids for a never-active prune (whose routing rows go with them), else
// none.
func neverActive(o RetentionOptions, ids []string) []string {
	if !o.NeverActive {
		return nil
	}
	return ids
}

// routingRowChanges lists the gateway_routing rows deleted (or to delete), by scope and key.
func routingRowChanges(rows []statedb.RoutingRow) []Change {
	var out []Change
	for _, row := range rows {
		out = append(out, Change{Store: home.StoreGatewayRouting, Target: row.Scope + " " + row.Key, Op: "delete"})
	}
	return out
}

// removeOrphanRowStores has the row stores no journal names (check's
// journal.orphan-row-store: a prune stopped between a batch's row store and its journal,
// nothing in the home changed) removed: it takes sessionctl's lock when there is any, whose
// settling (LockHome: journal.Settle) removes them, as every write's does, and reports each in
// a note — a warning for one still there. One a journal names by then (another prune's,
// between its store and its journal when they were listed) is not reported.
func (r *Run) removeOrphanRowStores(ctx context.Context) ([]check.Finding, error) {
	home := r.H.Opts.Home
	stores, err := journal.OrphanRowStores(home)
	if err == nil && len(stores) == 0 {
		return nil, nil
	}
	if _, err := r.lock(ctx); err != nil {
		return nil, err
	}
	left, err := journal.OrphanRowStores(home)
	if err != nil {
		return []check.Finding{{Check: check.JournalOrphanRowStore, Severity: check.Warn, Subject: r.H.Opts.Rel(home.JournalDir()),
			Message: "cannot look for row stores no journal names: " + err.Error()}}, nil
	}
	var out []check.Finding
	for _, s := range stores {
		f := check.Finding{Check: check.JournalOrphanRowStore, Severity: check.Info, Subject: r.H.Opts.Rel(s), Message: check.OrphanRowStoreNote + ": removed"}
		if slices.Contains(left, s) {
			f.Severity, f.Message = check.Warn, check.OrphanRowStoreNote+": not removed (the warning says why)"
		} else if _, err := os.Lstat(s); err == nil {
			continue // named by a journal now
		}
		out = append(out, f)
	}
	return out, nil
}

// fileSizes returns the size of each file (read before the files move).
func fileSizes(files map[string][]string) map[string]int64 {
	out := map[string]int64{}
	for _, fs := range files {
		for _, f := range fs {
			if st, err := os.Stat(f); err == nil {
				out[f] = st.Size()
			}
		}
	}
	return out
}

// Text is the plan's (or the run's) one-line summary.
func (s RetentionSummary) Text() string {
	span := ""
	if s.Oldest != nil {
		span = fmt.Sprintf(", oldest %s, newest %s", instant(*s.Oldest), instant(*s.Newest))
	}
	return fmt.Sprintf("prune (age by %s, %s%s): %d session(s), %d message(s) (%d bytes), %d transcript file(s) (%d bytes), %d child(ren) orphaned, %d skipped%s",
		s.AgeRule, cutoffText(s.Cutoff), s.filterText, s.Sessions, s.Messages, s.MessageBytes, s.Files, s.FileBytes, s.Orphaned, s.Skipped, span)
}

// cutoffText names the age bound, or says a filter replaced it.
func cutoffText(cutoff *float64) string {
	if cutoff == nil {
		return "no cutoff: a filter replaces it"
	}
	return "cutoff " + instant(*cutoff)
}

// instant writes Unix seconds as RFC 3339 UTC with microseconds.
func instant(unix float64) string {
	return time.UnixMicro(int64(math.Round(unix * 1e6))).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
}

// ageRule names the age rule for data.prune.
func ageRule(a sessionsjson.PruneAge) string {
	if a == sessionsjson.PruneByInactivity {
		return "last_activity"
	}
	return "started_at"
}

// retentionFiles lists, once, the transcript files of ids the generation's prune removes.
func (r *Run) retentionFiles(ids []string) (map[string][]string, error) {
	if !r.H.Rules.Maintenance.PruneFiles || len(ids) == 0 {
		return nil, nil
	}
	files, err := statedb.TranscriptFiles(r.H.Opts.Home.SessionsDir(), ids)
	if err != nil {
		return nil, failure.Mark(failure.Data, err)
	}
	return files, nil
}

// retentionSizer sizes a prune's batches by the messages they delete as well as the
// sessions: deleting the messages (and their full-text index entries, through the runtime's
// triggers) is most of what a batch holds the write lock for, so a candidate weighs one plus
// its messages.
func (r *Run) retentionSizer(cands []statedb.RetentionCandidate) *sizer {
	messages := make(map[string]int64, len(cands))
	for _, c := range cands {
		messages[c.ID] = c.Messages
	}
	return r.sizer(func(id string) float64 { return 1 + float64(messages[id]) })
}

// applyRetention deletes the sessions in transactions sized by size. The
// candidates are read first, without the write lock; each batch checks its share of them
// again under the lock. It returns the outcome and the children orphaned.
func (r *Run) applyRetention(ctx context.Context, ret statedb.Retention, ids []string, size *sizer, files map[string][]string, res Outcome) (Outcome, map[string]string, error) {
	orphaned := map[string]string{}
	now := r.H.Opts.Clock.Unix
	out, err := r.batches(ctx, ids, size, res, retentionWrite, func(db *statedb.DB, batch statedb.Batch) (batchStep, error) {
		path := r.journalPath()
		var stashed []journal.FileImage
		pr, err := db.PruneSessions(ctx, now, ret, batch, func(plan statedb.RetentionPlan) error {
			var err error
			stashed, err = r.journalRetention(ctx, db, path, plan, pick(files, plan.Deleted))
			return err
		})
		tx, err := r.settleRetention(path, pr, stashed, err)
		for child, parent := range pr.Orphaned {
			orphaned[child] = parent
		}
		report := retentionReport(nil, pr.Deleted, pr.Orphaned, pick(files, pr.Deleted))
		report.Changes = append(report.Changes, routingRowChanges(pr.Routing)...)
		report.Findings = append(report.Findings, skippedFindings(pr.Skipped)...)
		return batchStep{tx, report, pr.Remaining}, err
	})
	return out, orphaned, err
}

// journalRetention writes, under the write lock and before anything is deleted, the batch's
// row store (durable) and then its journal, which names the store and the files to stash.
// It runs again when the transaction is retried: the journal an earlier attempt wrote goes
// before its row store is replaced.
func (r *Run) journalRetention(ctx context.Context, db *statedb.DB, path string, plan statedb.RetentionPlan, files map[string][]string) ([]journal.FileImage, error) {
	if err := journal.DiscardAttempt(path); err != nil {
		return nil, err
	}
	store := journal.RowStorePath(path)
	dirs, err := journal.CreateRowStore(r.H.Opts.Home, store)
	if err != nil {
		return nil, err
	}
	if _, err := db.CaptureRows(ctx, store, plan); err != nil {
		return nil, err
	}
	if err := journal.SyncDirs(dirs...); err != nil {
		return nil, err
	}
	j := r.newJournal()
	j.RowStore, j.RowStoreOp = store, journal.RowStoreDeleted
	j.Files = journal.StashImages(flatten(files), journal.StashDir(path))
	return j.Files, journal.Write(path, j)
}

// settleRetention ends one batch: a batch that failed or deleted nothing leaves no journal
// and no row store; one that committed has its files moved into the stash.
func (r *Run) settleRetention(path string, pr statedb.RetentionResult, files []journal.FileImage, err error) (*BatchRecord, error) {
	if errors.Is(err, statedb.ErrInterrupted) && len(pr.Deleted) > 0 {
		return newBatchRecord(path, pr.Stats), interruptedWrite(r.H.Opts.Command, err)
	}
	if err != nil || len(pr.Deleted) == 0 {
		_ = os.Remove(path)
		_ = journal.RemoveRowStore(journal.RowStorePath(path))
	}
	if err != nil {
		return nil, failure.Mark(failure.Write, fmt.Errorf("%s: %w (rolled back; nothing changed)", r.H.Opts.Command, err))
	}
	if len(pr.Deleted) == 0 {
		return nil, nil
	}
	r.stash(files)
	return newBatchRecord(path, pr.Stats), nil
}

// skippedFindings reports the candidates a live compression lock or turn lease keeps.
func skippedFindings(cands []statedb.RetentionCandidate) []check.Finding {
	var out []check.Finding
	for _, c := range cands {
		switch {
		case c.LiveLease != nil:
			out = append(out, leasedFinding(check.PruneLeased, c.ID, c.LiveLease))
		case c.LiveLock != nil:
			out = append(out, check.Finding{Check: check.PruneLocked, Severity: check.Info, Subject: c.ID,
				Message: "holds a live compression lock (" + c.LiveLock.Holder + "): skipped (the runtime's prune does not skip it)"})
		}
	}
	return out
}

// retentionReport lists the sessions deleted (or to delete) with their messages and files,
// and the children orphaned.
func retentionReport(cands []statedb.RetentionCandidate, deleted []string, orphaned map[string]string, files map[string][]string) Outcome {
	byID := map[string]statedb.RetentionCandidate{}
	for _, c := range cands {
		byID[c.ID] = c
	}
	var res Outcome
	for _, id := range deleted {
		var before any
		if c, ok := byID[id]; ok {
			before = map[string]any{"source": c.Source, "started_at": c.StartedAt, "messages": c.Messages}
			res.Findings = append(res.Findings, unsafeIDFinding(id)...)
		}
		res.Changes = append(res.Changes, Change{Store: home.StoreStateDB, Target: "sessions/" + id, Op: "delete", Before: before})
		for _, f := range files[id] {
			res.Changes = append(res.Changes, Change{Store: "sessions dir", Target: filepath.Base(f), Op: "remove file"})
		}
	}
	for _, child := range sortedKeys(toBoolSet(orphaned)) {
		res.Changes = append(res.Changes, Change{Store: home.StoreStateDB, Target: "sessions/" + child + "/parent_session_id", Op: "set", Before: orphaned[child]})
	}
	return res
}

// unsafeIDFinding warns of a session whose id is not a safe file name: its row goes, its
// files stay.
func unsafeIDFinding(id string) []check.Finding {
	why := statedb.UnsafeFileID(id)
	if why == "" {
		return nil
	}
	return []check.Finding{{Check: check.PruneUnsafeID, Severity: check.Warn, Subject: id,
		Message: fmt.Sprintf("id %q is not a safe file name (%s): the row is deleted as the runtime does; no transcript file is touched", id, why)}}
}

func toBoolSet(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// changedSessions returns the ids of the sessions the changes delete, in order.
func changedSessions(changes []Change) []string {
	var out []string
	for _, c := range changes {
		if id, ok := strings.CutPrefix(c.Target, "sessions/"); ok && c.Op == "delete" && c.Store == home.StoreStateDB {
			out = append(out, id)
		}
	}
	return out
}

// fill counts what ids (deleted or to delete) hold: messages, bytes, files, ages.
func (s *RetentionSummary) fill(cands []statedb.RetentionCandidate, ids []string, orphaned map[string]string, files map[string][]string, sizes map[string]int64) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, c := range cands {
		switch {
		case c.Skipped():
			s.Skipped++
		case want[c.ID]:
			s.Sessions++
			s.Messages += c.Messages
			s.MessageBytes += c.Bytes
			s.Oldest, s.Newest = minAge(s.Oldest, c.Age), maxAge(s.Newest, c.Age)
		}
	}
	s.Orphaned = len(orphaned)
	for _, id := range ids {
		for _, f := range files[id] {
			s.Files++
			s.FileBytes += sizes[f]
		}
	}
}

func minAge(cur *float64, v float64) *float64 {
	if cur == nil || v < *cur {
		return &v
	}
	return cur
}

func maxAge(cur *float64, v float64) *float64 {
	if cur == nil || v > *cur {
		return &v
	}
	return cur
}
