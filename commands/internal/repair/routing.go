package repair

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// FieldEdit sets one field of a routing entry.
type FieldEdit struct {
	Field string
	Value any // bool, string or nil
}

// EntryEdit is the set of field edits for one key, or its removal (Remove: the runtime's
// store drops the entry, and its save writes no such key).
type EntryEdit struct {
	Key    string
	Fields []FieldEdit
	Remove bool
}

// RoutingPlan is what a routing repair wants to change.
type RoutingPlan struct {
	Edits    []EntryEdit
	Removals []string // keys whose entries go (entries rm)
	Findings []check.Finding
	Counts   *journal.FileImage // the .restart_failure_counts file before/after, when it changes
}

// plannedEntry is an edit resolved against the current entry. before is nil for an entry
// added back (undo of a removal), after nil for one removed.
type plannedEntry struct {
	key    string
	before *sessionsjson.Entry
	after  *sessionsjson.Entry
	saved  []string // members written in the runtime's save form as well (Entry.Saved)
	prev   string   // sessions.json: the key of the member before it (journal.EntryImage.Prev)
	at     *float64 // gateway_routing: the updated_at to write (an undo's), nil: the run's time
	// legacy: a legacy entry of a db-primary home, whose gateway_routing row (row: the one
	// the runtime's load skipped, nil: none) is not before
	legacy bool
	row    *sessionsjson.Entry
}

// rowBefore is the gateway_routing row a primary edit replaces, nil when there is none.
func (pe plannedEntry) rowBefore() *sessionsjson.Entry {
	if pe.legacy {
		return pe.row
	}
	return pe.before
}

// resolveEdits applies the edits to copies of the entries, dropping edits that change nothing.
// An entry that changes is written as the runtime's save would write it (Entry.Saved: the
// platform as the member's value, no origin the runtime did not load); that alone never
// makes a write.
func resolveEdits(entries func(string) *sessionsjson.Entry, edits []EntryEdit) ([]plannedEntry, error) {
	var out []plannedEntry
	for _, ed := range edits {
		before := entries(ed.Key)
		if before == nil {
			continue
		}
		if ed.Remove {
			out = append(out, plannedEntry{key: ed.Key, before: before})
			continue
		}
		after := before
		for _, f := range ed.Fields {
			next, err := after.Set(f.Field, f.Value)
			if err != nil {
				return nil, fmt.Errorf("entry %q: set %s: %w", ed.Key, f.Field, err)
			}
			after = next
		}
		if !bytes.Equal(before.Raw(), after.Raw()) {
			after, saved := after.Saved()
			out = append(out, plannedEntry{key: ed.Key, before: before, after: after, saved: saved})
		}
	}
	return out, nil
}

// fieldChanges lists one Change per changed field.
func fieldChanges(store string, planned []plannedEntry, edits []EntryEdit) []Change {
	byKey := map[string]EntryEdit{}
	for _, e := range edits {
		byKey[e.Key] = e
	}
	var out []Change
	for _, p := range planned {
		if p.after == nil {
			out = append(out, Change{Store: store, Target: p.key, Op: "remove entry", Before: rawOrNil(p.before.Raw())})
			continue
		}
		for _, f := range byKey[p.key].Fields {
			before, _ := p.before.Get(f.Field)
			after, _ := p.after.Get(f.Field)
			if bytes.Equal(before, after) {
				continue
			}
			out = append(out, Change{Store: store, Target: p.key + "/" + f.Field, Op: "set", Before: rawOrNil(before), After: rawOrNil(after)})
		}
		for _, name := range p.saved {
			before, _ := sessionsjson.MemberPath(p.before.Text(), name)
			after, ok := sessionsjson.MemberPath(p.after.Text(), name)
			op := "set"
			if !ok {
				op = "remove"
			}
			out = append(out, Change{Store: store, Target: p.key + "/" + name, Op: op, Before: rawOrNil(before), After: rawOrNil(after)})
		}
	}
	return out
}

// rawOrNil is a field's raw value for a change list: nil when absent, its text when it is not
// standard JSON (NaN, Infinity). It is a copy: a slice of the document would keep the whole
// file's bytes alive for as long as the change list (maintain keeps every step's).
func rawOrNil(raw json.RawMessage) any {
	return home.JSONSafe(bytes.Clone(raw))
}

// routingApplier writes resolved edits to where the runtime reads them.
type routingApplier struct {
	r       *Run
	primary []plannedEntry // against the routing index
	mirror  []plannedEntry // db-primary: against the sessions.json mirror
	// read: the primary's before-images are the gateway_routing rows as read (a plan's), which
	// the write checks are still there (an undo's are the journal's, checked by undo itself)
	read bool
}

// planRouting resolves a plan into primary (and mirror) edits and the change list.
func planRouting(r *Run, p RoutingPlan) (*routingApplier, []Change, error) {
	h := r.H
	primary, err := resolveEdits(h.Entry, p.Edits)
	if err != nil {
		return nil, nil, err
	}
	primary = append(primary, removals(h.Entry, p.Removals)...)
	a := &routingApplier{r: r, primary: primary, read: true}
	if h.Routing.Source != home.SourceGatewayRouting {
		placeRemoved(h.Mirror.Doc, a.primary)
	}
	if h.Routing.Source == home.SourceGatewayRouting {
		// a legacy entry (imported from sessions.json by the runtime's load) is written as
		// the runtime's save writes it: a gateway_routing row, replacing the row the load
		// skipped (or none), and the mirror's copy
		for i, pe := range a.primary {
			if h.IsLegacy(pe.key) {
				a.primary[i].legacy, a.primary[i].row = true, h.Routing.Rows[pe.key]
			}
		}
		if a.mirror, err = planMirror(h, p); err != nil {
			return nil, nil, err
		}
	}
	changes := fieldChanges(h.Routing.Source.Store(), a.primary, p.Edits)
	changes = append(changes, fieldChanges("sessions.json (mirror)", a.mirror, p.Edits)...)
	if p.Counts != nil {
		changes = append(changes, Change{Store: ".restart_failure_counts", Target: h.Opts.Rel(p.Counts.Path), Op: countsOp(p.Counts),
			Before: bytesOrNil(p.Counts.Before), After: bytesOrNil(p.Counts.After)})
	}
	return a, changes, nil
}

// planMirror resolves the edits against the sessions.json mirror of a db-primary home. A
// home opened for a repair dropped the decoded mirror (one copy of a large routing index in
// memory, not two): the decoded gateway_routing rows are released here, the plan against
// them being made, and the mirror is decoded again.
func planMirror(h *home.Home, p RoutingPlan) ([]plannedEntry, error) {
	if h.Mirror.Doc == nil && h.Mirror.Err == nil { // Err: an unreadable mirror check reports, left alone
		h.ReleaseRouting()
		// Collect the released rows before the mirror's bytes arrive: otherwise the heap
		// holds both at once and the run peaked at 103–107 MB on a 20,000-entry home.
		runtime.GC()
		if err := h.LoadMirror(); err != nil {
			return nil, err
		}
	}
	if h.Mirror.Doc == nil {
		return nil, nil // no mirror file (none is created), or an unreadable one
	}
	planned, err := resolveEdits(h.Mirror.Doc.Entry, p.Edits)
	planned = append(planned, removals(h.Mirror.Doc.Entry, p.Removals)...)
	placeRemoved(h.Mirror.Doc, planned)
	return planned, err
}

// removals plans the removal of each key that entries has.
func removals(entries func(string) *sessionsjson.Entry, keys []string) []plannedEntry {
	var out []plannedEntry
	for _, key := range keys {
		if e := entries(key); e != nil {
			out = append(out, plannedEntry{key: key, before: e})
		}
	}
	return out
}

// placeRemoved records, for each entry of sessions.json (doc) planned for removal, the key
// of the member before it: where an undo puts it back.
func placeRemoved(doc *sessionsjson.Document, planned []plannedEntry) {
	for i := range planned {
		if planned[i].after == nil && doc != nil {
			planned[i].prev = doc.PrevKey(planned[i].key)
		}
	}
}

// rowRaw is the journal image of a gateway_routing row the runtime skips: its bytes as
// stored, nil when there is no row.
func rowRaw(e *sessionsjson.Entry) json.RawMessage {
	if e == nil {
		return nil
	}
	return bytes.Clone(e.Stored())
}

// entryRaw is an entry's journal image, nil when it is absent.
func entryRaw(e *sessionsjson.Entry) json.RawMessage {
	if e == nil {
		return nil
	}
	return e.Raw()
}

func countsOp(f *journal.FileImage) string {
	if f.After == nil {
		return "remove file"
	}
	return "rewrite file"
}

func bytesOrNil(b *[]byte) any {
	if b == nil {
		return nil
	}
	return string(*b)
}

// journal builds the before/after images of the plan.
func (a *routingApplier) journal(p RoutingPlan) *journal.Journal {
	h := a.r.H
	j := a.r.newJournal()
	j.Scope = h.Routing.Scope
	store := h.Routing.Source.Store()
	for _, pe := range a.primary {
		img := journal.EntryImage{Store: store, Key: pe.key, Before: entryRaw(pe.before), After: entryRaw(pe.after), Prev: pe.prev}
		if pe.legacy {
			img.Before, img.BeforeExact = rowRaw(pe.row), true
		}
		j.Routing = append(j.Routing, img)
	}
	for _, pe := range a.mirror {
		j.Routing = append(j.Routing, journal.EntryImage{Store: home.StoreSessionsJSON, Key: pe.key, Before: entryRaw(pe.before), After: entryRaw(pe.after), Prev: pe.prev})
	}
	if p.Counts != nil {
		j.Files = append(j.Files, *p.Counts)
	}
	return j
}

// apply writes the plan: sessions.json (json-primary) or gateway_routing plus the mirror
// (db-primary) as one step, then the counts file. On a failure it restores what it can and
// reports whether the home still differs from before (changed): a committed gateway_routing
// row, a file replaced but not synced, or a restore that failed.
func (a *routingApplier) apply(ctx context.Context, counts *journal.FileImage) (changed bool, err error) {
	if a.r.H.Routing.Source == home.SourceGatewayRouting {
		changed, err = a.applyDB(ctx)
	} else {
		changed, err = a.applyJSON(a.primary)
	}
	if errors.Is(err, statedb.ErrConflict) || errors.Is(err, home.ErrMirrorChanged) { // another writer's is left as it is: nothing changed
		return changed, failure.Mark(failure.Refused, err)
	}
	if err != nil {
		return changed, failure.Mark(failure.Write, err)
	}
	if counts == nil {
		return changed, nil
	}
	if err := writeImage(counts.Path, counts.After, a.r.tempPattern()); err != nil {
		changed = errors.Is(err, sessionsjson.ErrNotDurable) || a.r.H.Routing.Source == home.SourceGatewayRouting || !a.restoreJSON()
		return changed, failure.Mark(failure.Write, fmt.Errorf("%w (the routing change was not kept)", err))
	}
	return changed, nil
}

// applyJSON rewrites sessions.json with the planned entries spliced in. changed reports
// whether the file was replaced (a failure to sync its directory comes after that).
func (a *routingApplier) applyJSON(planned []plannedEntry) (changed bool, err error) {
	doc, err := a.spliced(planned)
	if doc == nil || err != nil {
		return false, err
	}
	return a.writeJSON(doc)
}

// spliced records the planned entries in the decoded sessions.json and returns it, nil when
// there is nothing to write. It is done once per run: a document already spliced must not
// be spliced again (its removed keys are gone, its insertions would be added twice).
func (a *routingApplier) spliced(planned []plannedEntry) (*sessionsjson.Document, error) {
	doc := a.r.H.Mirror.Doc
	if len(planned) == 0 || doc == nil {
		return nil, nil
	}
	for _, pe := range planned {
		if err := spliceEntry(doc, pe); err != nil {
			return nil, fmt.Errorf("write sessions.json: %w", err)
		}
	}
	return doc, nil
}

// writeJSON replaces sessions.json with doc encoded. changed reports whether the file was
// replaced (a failure to sync its directory comes after that). Writing the same doc again
// writes the same bytes.
func (a *routingApplier) writeJSON(doc *sessionsjson.Document) (changed bool, err error) {
	p, err := a.prepareJSON(doc)
	if err != nil {
		return false, fmt.Errorf("write sessions.json: %w", err)
	}
	return a.commitJSON(p)
}

// prepareJSON writes and syncs the temp file of sessions.json's replacement by doc.
func (a *routingApplier) prepareJSON(doc *sessionsjson.Document) (*sessionsjson.PendingWrite, error) {
	h := a.r.H
	return sessionsjson.PrepareAtomic(h.Opts.Home.SessionsJSON(), a.r.tempPattern(), func(w io.Writer) error {
		return doc.EncodeTo(w, h.Mirror.ASCIIOnly)
	})
}

// commitJSON renames a prepared replacement over sessions.json, unless another writer
// replaced the file since it was read (then its file is kept); as writeJSON's end.
func (a *routingApplier) commitJSON(p *sessionsjson.PendingWrite) (changed bool, err error) {
	h := a.r.H
	path := h.Opts.Home.SessionsJSON()
	err = p.Commit(func() error { return h.Mirror.Unchanged(path) }) // just before the rename: another writer's file is kept
	h.Mirror.Read, _ = os.Stat(h.Opts.Home.SessionsJSON())           // the file as this run left it
	if err != nil {
		return errors.Is(err, sessionsjson.ErrNotDurable), fmt.Errorf("write sessions.json: %w", err)
	}
	return true, nil
}

// spliceEntry records one planned entry in doc: replaced, removed, or added back after the
// member it followed.
func spliceEntry(doc *sessionsjson.Document, pe plannedEntry) error {
	switch {
	case pe.after == nil:
		return doc.Remove(pe.key)
	case pe.before == nil:
		return doc.Insert(pe.key, pe.after.Raw(), pe.prev)
	}
	return doc.Replace(pe.key, pe.after)
}

// restoreJSON puts the original sessions.json bytes back after a failed step and reports
// whether the file is as it was (true when nothing had been written).
func (a *routingApplier) restoreJSON() bool {
	h := a.r.H
	if h.Mirror.Doc == nil || (len(a.primary) == 0 && len(a.mirror) == 0) {
		return true
	}
	err := sessionsjson.WriteFileAtomic(h.Opts.Home.SessionsJSON(), h.Mirror.Doc.Bytes(), a.r.tempPattern())
	if errors.Is(err, sessionsjson.ErrNotDurable) && sameBytes(h.Opts.Home.SessionsJSON(), h.Mirror.Doc.Bytes()) {
		// the original bytes are back in place (verified); only its directory's sync failed, as
		// the failed write's did: nothing is left changed
		h.Opts.Warnf("sessions.json was put back as it was, but its directory could not be synced: %v", err)
		return true
	}
	if err != nil {
		h.Opts.Warnf("could not restore sessions.json after a failed write: %v", err)
		return false
	}
	return true
}

// sameBytes reports whether the file at path holds exactly want.
func sameBytes(path string, want []byte) bool {
	got, err := os.ReadFile(path)
	return err == nil && bytes.Equal(got, want)
}

// applyDB updates gateway_routing and, inside the same transaction, the mirror: if the
// mirror write fails the transaction rolls back; if the commit fails the mirror is restored.
// changed reports whether anything differs from before when it returns.
//
// A busy transaction is run again from the start (statedb.DB.WithImmediateTx), after an
// earlier attempt may have replaced the mirror: the mirror is spliced once, before the first
// attempt, so that every attempt writes the same bytes, and once any attempt replaced it the
// mirror counts as written whatever a later attempt does, so that a failure restores it.
//
// The mirror's temp file is written and synced before BEGIN IMMEDIATE (issue 30 item 5: the
// encoding and fsync of a 20,000-entry file held state.db's write lock for most of a second);
// inside the transaction only the rows change and the file is renamed. A retried attempt
// writes its own temp file, inside. A kill before the transaction leaves that temp file,
// named in the journal's temp pattern, for the next write to settle.
func (a *routingApplier) applyDB(ctx context.Context) (changed bool, err error) {
	h := a.r.H
	mirror, err := a.spliced(a.mirror)
	if err != nil {
		return false, err
	}
	db, err := statedb.OpenWrite(ctx, h.Opts.Home.StateDB())
	if err != nil {
		return false, fmt.Errorf("open state.db for writing: %w", err)
	}
	defer db.Close()
	var pending *sessionsjson.PendingWrite
	if mirror != nil {
		if pending, err = a.prepareJSON(mirror); err != nil {
			return false, fmt.Errorf("write sessions.json: %w", err)
		}
		defer func() {
			if pending != nil {
				pending.Discard()
			}
		}()
	}
	updates, times, removed := a.routingRows()
	mirrorWritten := false
	_, err = db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		if err := a.checkRead(ctx, tx); err != nil {
			return err
		}
		if err := statedb.UpdateRoutingTx(ctx, tx, h.Routing.Scope, updates, times, h.Opts.Clock.Unix); err != nil {
			return err
		}
		if err := statedb.DeleteRoutingTx(ctx, tx, h.Routing.Scope, removed); err != nil {
			return err
		}
		if mirror == nil {
			return nil
		}
		var written bool
		if p := pending; p != nil {
			pending = nil
			written, err = a.commitJSON(p)
		} else {
			written, err = a.writeJSON(mirror)
		}
		mirrorWritten = mirrorWritten || written
		return err
	})
	if err != nil { // a commit that left a hot journal changed state.db's bytes (statedb.ErrInterrupted)
		restored := !mirrorWritten || a.restoreJSON()
		return !restored || errors.Is(err, statedb.ErrInterrupted), fmt.Errorf("update gateway_routing: %w", err)
	}
	return true, nil
}

// routingRows is the primary plan as gateway_routing writes: the entry_json of each key
// updated, the updated_at of those that carry one (an undo's), and the keys removed.
func (a *routingApplier) routingRows() (updates map[string]string, times map[string]float64, removed []string) {
	updates, times = make(map[string]string, len(a.primary)), map[string]float64{}
	for _, pe := range a.primary {
		if pe.after == nil {
			removed = append(removed, pe.key)
			continue
		}
		updates[pe.key] = string(sessionsjson.EncodeEntryJSON(pe.after, true))
		if pe.after.Skip != "" { // a row the runtime skips (an undo's) goes back byte for byte
			updates[pe.key] = string(pe.after.Stored())
		}
		if pe.at != nil {
			times[pe.key] = *pe.at
		}
	}
	return updates, times, removed
}

// checkRead verifies, in the write's transaction, that the rows a plan read are unchanged
// (statedb.CheckRoutingTx).
func (a *routingApplier) checkRead(ctx context.Context, tx *sql.Tx) error {
	if !a.read {
		return nil
	}
	return statedb.CheckRoutingTx(ctx, tx, a.r.H.Routing.Scope, a.readRows())
}

// readRows is the entry_json of each gateway_routing row the plan changes as it was read (nil:
// none).
func (a *routingApplier) readRows() map[string]*string {
	out := make(map[string]*string, len(a.primary))
	for _, pe := range a.primary {
		before := pe.rowBefore()
		if before == nil {
			out[pe.key] = nil
			continue
		}
		text := string(before.Stored()) // CheckRoutingTx compares the column as stored
		out[pe.key] = &text
	}
	return out
}

// stampRowTimes records in images, before a write, the updated_at of each gateway_routing row
// they change as it is now (BeforeTime), and with forward the time the write gives the rows
// it keeps (AfterTime: the run's; an undo's images carry the journal's own).
func stampRowTimes(ctx context.Context, h *home.Home, images []journal.EntryImage, forward bool) error {
	var keys []string
	for _, img := range images {
		if img.Store == home.StoreGatewayRouting {
			keys = append(keys, img.Key)
		}
	}
	if len(keys) == 0 || h.DB == nil {
		return nil
	}
	times, err := h.DB.RoutingTimes(ctx, h.Routing.Scope, keys)
	if err != nil {
		return failure.Mark(failure.Data, err)
	}
	now := h.Opts.Clock.Unix
	for i := range images {
		img := &images[i]
		if img.Store != home.StoreGatewayRouting {
			continue
		}
		if t, ok := times[img.Key]; ok && img.Before != nil {
			img.BeforeTime = &t
		}
		if forward && img.After != nil {
			img.AfterTime = &now
		}
	}
	return nil
}

// writeImage writes or removes a small file atomically, its temporary file named by
// tmpPattern (the run's: journal.TempPattern).
func writeImage(path string, content *[]byte, tmpPattern string) error {
	if content == nil {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		return nil
	}
	if err := sessionsjson.WriteFileAtomic(path, *content, tmpPattern); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// newJournal starts a journal of this run.
func (r *Run) newJournal() *journal.Journal {
	h := r.H
	return &journal.Journal{Command: h.Opts.Command, Home: h.Opts.Home.Dir, Storage: h.Storage.String(), Generation: string(h.Gen)}
}

// journalPath names a new journal of this run.
func (r *Run) journalPath() string {
	return journal.NewPath(r.H.Opts.Home.JournalDir(), r.H.Opts.Command)
}

// writeJournal stores j at a new journal path and returns the path. The journal names the
// temporary files a rewrite of sessions.json or of the counts file by this run creates
// (journal.Temps) before any is: undo and the next write remove what a crash leaves of them.
func (r *Run) writeJournal(j *journal.Journal) (string, error) {
	path := r.journalPath()
	j.Temps, r.temp = journal.Temps(r.H.Opts.Home, path), journal.TempPattern(path)
	return path, journal.Write(path, j)
}

// tempPattern is the pattern of this run's temporary files (beside sessions.json and the
// counts file): the one its journal names (writeJournal); sessionctl's name without a
// journal's before one is written (such a file is never proven sessionctl's, so never
// removed).
func (r *Run) tempPattern() string {
	if r.temp == "" {
		return journal.TempPattern("unjournaled")
	}
	return r.temp
}

// Routing plans, and when applying refuses-or-journals-and-writes, a routing change. A
// write that failed leaves no journal when nothing changed (a write error), and keeps and
// names it when something did (Incomplete).
func Routing(ctx context.Context, r *Run, plan Planner) (Outcome, error) {
	p, err := plan(ctx, r.H)
	if err != nil {
		return Outcome{}, err
	}
	a, changes, err := planRouting(r, p)
	if err != nil {
		return Outcome{}, err
	}
	res := Outcome{Findings: p.Findings, Changes: changes}
	if !r.Apply || len(changes) == 0 {
		return res, nil
	}
	if err := r.checkRoutingWritable(ctx); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if r.release == nil { // plan again under the lock, on what the home holds now
		p, a = RoutingPlan{}, nil // the first plan is garbage while the home is read again
		if _, err := r.lock(ctx); err != nil {
			return res, err
		}
		return Routing(ctx, r, plan)
	}
	j := a.journal(p)
	if err := stampRowTimes(ctx, r.H, j.Routing, true); err != nil {
		return res, err
	}
	path, err := r.writeJournal(j)
	if err != nil {
		return res, failure.Mark(failure.Write, err)
	}
	changed, err := a.apply(ctx, p.Counts)
	if err != nil && !changed {
		_ = os.Remove(path) // nothing changed: the journal would describe a change that never happened
		return res, err
	}
	res.Applied, res.Journals = true, []string{path}
	if err != nil {
		return res, &Incomplete{Outcome: res, Err: err}
	}
	return res, nil
}
