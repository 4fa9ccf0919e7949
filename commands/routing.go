package commands

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// fieldEdit sets one field of a routing entry.
type fieldEdit struct {
	Field string
	Value any // bool, string or nil
}

// entryEdit is the set of field edits for one key.
type entryEdit struct {
	Key    string
	Fields []fieldEdit
}

// routingPlan is what a routing repair wants to change.
type routingPlan struct {
	edits    []entryEdit
	findings []Finding
	counts   *fileImage // the .restart_failure_counts file before/after, when it changes
}

// plannedEntry is an edit resolved against the current entry.
type plannedEntry struct {
	key    string
	before *sessionsjson.Entry
	after  *sessionsjson.Entry
}

// resolveEdits applies the edits to copies of the entries, dropping edits that change nothing.
func resolveEdits(entries func(string) *sessionsjson.Entry, edits []entryEdit) ([]plannedEntry, error) {
	var out []plannedEntry
	for _, ed := range edits {
		before := entries(ed.Key)
		if before == nil {
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
			out = append(out, plannedEntry{key: ed.Key, before: before, after: after})
		}
	}
	return out, nil
}

// fieldChanges lists one Change per changed field.
func fieldChanges(store string, planned []plannedEntry, edits []entryEdit) []Change {
	byKey := map[string]entryEdit{}
	for _, e := range edits {
		byKey[e.Key] = e
	}
	var out []Change
	for _, p := range planned {
		for _, f := range byKey[p.key].Fields {
			before, _ := p.before.Get(f.Field)
			after, _ := p.after.Get(f.Field)
			if bytes.Equal(before, after) {
				continue
			}
			out = append(out, Change{Store: store, Target: p.key + "/" + f.Field, Op: "set", Before: rawOrNil(before), After: rawOrNil(after)})
		}
	}
	return out
}

func rawOrNil(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return raw
}

// routingApplier writes resolved edits to where the runtime reads them.
type routingApplier struct {
	r       *repairRun
	primary []plannedEntry // against v.routing
	mirror  []plannedEntry // db-primary: against the sessions.json mirror
}

// planRouting resolves a plan into primary (and mirror) edits and the change list.
func planRouting(r *repairRun, p routingPlan) (*routingApplier, []Change, error) {
	v := r.v
	primary, err := resolveEdits(v.entry, p.edits)
	if err != nil {
		return nil, nil, err
	}
	a := &routingApplier{r: r, primary: primary}
	store := "sessions.json"
	if v.routingSrc == "gateway_routing" {
		store = "gateway_routing"
		if a.mirror, err = planMirror(v, p.edits); err != nil {
			return nil, nil, err
		}
	}
	changes := fieldChanges(store, primary, p.edits)
	changes = append(changes, fieldChanges("sessions.json (mirror)", a.mirror, p.edits)...)
	if p.counts != nil {
		changes = append(changes, Change{Store: ".restart_failure_counts", Target: relToHome(r.o, p.counts.Path), Op: countsOp(p.counts),
			Before: bytesOrNil(p.counts.Before), After: bytesOrNil(p.counts.After)})
	}
	return a, changes, nil
}

// planMirror resolves the edits against the sessions.json mirror of a db-primary home. A
// view loaded for a repair dropped the decoded mirror (one copy of a large routing index in
// memory, not two): the decoded gateway_routing rows are released here, the plan against
// them being made, and the mirror is decoded again.
func planMirror(v *homeView, edits []entryEdit) ([]plannedEntry, error) {
	if v.doc == nil && v.docErr == nil { // docErr: an unreadable mirror check reports, left alone
		v.releaseRouting()
		if err := v.loadSessionsJSON(); err != nil {
			return nil, err
		}
	}
	if v.doc == nil {
		return nil, nil // no mirror file (none is created), or an unreadable one
	}
	return resolveEdits(v.doc.Entry, edits)
}

func countsOp(f *fileImage) string {
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
func (a *routingApplier) journal(p routingPlan) *journal {
	v := a.r.v
	j := &journal{Storage: v.storage, Generation: string(v.gen), Scope: v.scope}
	store := "sessions.json"
	if v.routingSrc == "gateway_routing" {
		store = "gateway_routing"
	}
	for _, pe := range a.primary {
		j.Routing = append(j.Routing, entryImage{Store: store, Key: pe.key, Before: pe.before.Raw(), After: pe.after.Raw()})
	}
	for _, pe := range a.mirror {
		j.Routing = append(j.Routing, entryImage{Store: "sessions.json", Key: pe.key, Before: pe.before.Raw(), After: pe.after.Raw()})
	}
	if p.counts != nil {
		j.Files = append(j.Files, *p.counts)
	}
	return j
}

// apply writes the plan: sessions.json (json-primary) or gateway_routing plus the mirror
// (db-primary) as one step, then the counts file; a failure restores what was written.
func (a *routingApplier) apply(ctx context.Context, p routingPlan) error {
	v := a.r.v
	var err error
	if v.routingSrc == "gateway_routing" {
		err = a.applyDB(ctx)
	} else {
		err = a.applyJSON(a.primary)
	}
	if err != nil {
		return withCode(ExitWrite, err)
	}
	if p.counts != nil {
		if err := writeImage(p.counts.Path, p.counts.After); err != nil {
			a.restoreJSONAfterFailure()
			return withCode(ExitWrite, fmt.Errorf("%w (the routing change was not kept)", err))
		}
	}
	return nil
}

// applyJSON rewrites sessions.json with the planned entries spliced in.
func (a *routingApplier) applyJSON(planned []plannedEntry) error {
	v := a.r.v
	if len(planned) == 0 || v.doc == nil {
		return nil
	}
	for _, pe := range planned {
		v.doc.Replace(pe.key, pe.after)
	}
	err := sessionsjson.WriteFileAtomicFrom(v.opts.home.SessionsJSON(), ".sessions_*.tmp", func(w io.Writer) error {
		return v.doc.EncodeTo(w, v.asciiOnly)
	})
	if err != nil {
		return fmt.Errorf("write sessions.json: %w", err)
	}
	return nil
}

// restoreJSONAfterFailure puts the original sessions.json bytes back.
func (a *routingApplier) restoreJSONAfterFailure() {
	v := a.r.v
	if v.doc == nil || (len(a.primary) == 0 && len(a.mirror) == 0) {
		return
	}
	if err := sessionsjson.WriteFileAtomic(v.opts.home.SessionsJSON(), v.doc.Bytes(), ".sessions_*.tmp"); err != nil {
		v.opts.warn("could not restore sessions.json after a failed write: %v", err)
	}
}

// applyDB updates gateway_routing and, inside the same transaction, the mirror: if the
// mirror write fails the transaction rolls back; if the commit fails the mirror is restored.
func (a *routingApplier) applyDB(ctx context.Context) error {
	v := a.r.v
	db, err := statedb.OpenWrite(ctx, v.opts.home.StateDB())
	if err != nil {
		return fmt.Errorf("open state.db for writing: %w", err)
	}
	defer db.Close()
	updates := make(map[string]string, len(a.primary))
	for _, pe := range a.primary {
		updates[pe.key] = string(sessionsjson.EncodeEntryJSON(pe.after, true))
	}
	mirrorWritten := false
	_, err = db.WithImmediateTx(ctx, func(tx *sql.Tx) error {
		if err := statedb.UpdateRoutingTx(ctx, tx, v.scope, updates, v.opts.clock.Unix); err != nil {
			return err
		}
		if err := a.applyJSON(a.mirror); err != nil {
			return err
		}
		mirrorWritten = len(a.mirror) > 0
		return nil
	})
	if err != nil && mirrorWritten {
		a.restoreJSONAfterFailure()
	}
	if err != nil {
		return fmt.Errorf("update gateway_routing: %w", err)
	}
	return nil
}

// writeImage writes or removes a small file atomically.
func writeImage(path string, content *[]byte) error {
	if content == nil {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		return nil
	}
	if err := sessionsjson.WriteFileAtomic(path, *content, ".restart_failure_counts_*.tmp"); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// runRoutingRepair is the common body of every routing-index repair command.
func runRoutingRepair(r *repairRun, p routingPlan) error {
	defer r.finish()
	res, err := executeRouting(context.Background(), r, p)
	if err != nil {
		return err
	}
	return r.report(res)
}

// executeRouting plans, and with --apply refuses-or-journals-and-writes, a routing change.
func executeRouting(ctx context.Context, r *repairRun, p routingPlan) (result, error) {
	a, changes, err := planRouting(r, p)
	if err != nil {
		return result{}, err
	}
	res := result{findings: p.findings, changes: changes}
	if !r.apply || len(changes) == 0 {
		return res, nil
	}
	if err := r.checkRoutingWritable(); err != nil {
		return res, err
	}
	path, err := writeJournal(r.o, a.journal(p))
	if err != nil {
		return res, withCode(ExitWrite, err)
	}
	if err := a.apply(ctx, p); err != nil {
		_ = os.Remove(path) // nothing changed: the journal would describe a change that never happened
		return res, err
	}
	res.applied, res.journal = true, path
	return res, nil
}
