package upgrade

import (
	"context"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/statedb"
)

// openFTS replays what the runtime's open does to the FTS tables and triggers.
func (r *openRun) openFTS(ctx context.Context) error {
	switch r.rules.fts {
	case ftsCreateMissing:
		return r.ftsCreateMissing(ctx)
	case ftsInline, ftsInlineRepair:
		return r.ftsInline(ctx)
	default:
		return r.ftsOptIn(ctx)
	}
}

// ftsCreateMissing (r0418): FTS_SQL runs only when messages_fts cannot be read; the new
// index stays empty.
func (r *openRun) ftsCreateMissing(ctx context.Context) error {
	_, ok, err := r.object(ctx, ftsBase)
	if err != nil || ok {
		return err
	}
	return r.ensure(ctx, ftsObjects(r.ref.objects), r.rules.commit)
}

// ftsInline (r0506 … r0715): the v11 rewrite on a file below v11; otherwise r0506/r0525
// create a missing FTS table (unfilled) and r0703+ repair missing triggers with a rebuild.
func (r *openRun) ftsInline(ctx context.Context) error {
	layout := ftsObjects(r.ref.objects)
	if r.before.row && r.before.version < 11 {
		return r.rewriteV11(ctx, layout)
	}
	if r.rules.fts == ftsInline {
		return r.createMissingFTSTables(ctx, layout)
	}
	return r.repairTriggers(ctx, layout)
}

// rewriteV11 is the v11 step (commitV11FTS): the six triggers and both tables dropped, the
// runtime's FTS DDL run, both tables filled from every message. (The v10 step before it, a
// trigram table filled from messages, is thrown away by this one in the same open.)
func (r *openRun) rewriteV11(ctx context.Context, layout []statedb.Object) error {
	if err := r.drop(ctx, "TRIGGER", ftsTriggers...); err != nil {
		return err
	}
	if err := r.drop(ctx, "TABLE", ftsBase, ftsTrigram); err != nil {
		return err
	}
	r.markReplaced(layout, commitV11FTS)
	r.ftsRebuilt = []string{ftsBase, ftsTrigram}
	return r.ensure(ctx, layout, commitV11FTS)
}

// createMissingFTSTables (r0506, r0525): FTS_SQL when messages_fts is missing,
// FTS_TRIGRAM_SQL when messages_fts_trigram is; neither is filled.
func (r *openRun) createMissingFTSTables(ctx context.Context, layout []statedb.Object) error {
	for _, table := range []string{ftsBase, ftsTrigram} {
		_, ok, err := r.object(ctx, table)
		if err != nil {
			return err
		}
		if !ok {
			if err := r.ensure(ctx, ftsScript(layout, table), r.rules.commit); err != nil {
				return err
			}
		}
	}
	return nil
}

// ftsScript returns the objects of layout that the DDL script of table creates: the trigram
// table's (its name as prefix: table, view, triggers) or the base table's (the rest).
func ftsScript(layout []statedb.Object, table string) []statedb.Object {
	var out []statedb.Object
	for _, o := range layout {
		if strings.HasPrefix(o.Name, ftsTrigram) == (table == ftsTrigram) {
			out = append(out, o)
		}
	}
	return out
}

// repairTriggers runs the layout's DDL (IF NOT EXISTS) and, when fewer than the six FTS
// triggers existed, rebuilds both indexes from messages (commitTriggerRepair).
func (r *openRun) repairTriggers(ctx context.Context, layout []statedb.Object) error {
	n, err := r.countTriggers(ctx)
	if err != nil {
		return err
	}
	commit := r.rules.commit
	if n < ftsTriggerCount {
		commit, r.ftsRebuilt = commitTriggerRepair, []string{ftsBase, ftsTrigram}
	}
	return r.ensure(ctx, layout, commit)
}

// ftsOptIn (r0817): fts_stale drops every FTS trigger and recovers the layout; the v23 step
// only flags a legacy layout for the opt-in optimize; the legacy layout is kept with the
// legacy DDL, any other file gets the v23 one; then broad UPDATE triggers are narrowed.
func (r *openRun) ftsOptIn(ctx context.Context) error {
	if r.before.ftsStale {
		if err := r.drop(ctx, "TRIGGER", slices.Concat(ftsTriggers, ftsCJKTriggers)...); err != nil {
			return err
		}
	}
	legacy, err := r.legacyLayout(ctx)
	if err != nil {
		return err
	}
	r.setsOptimizeFlag = legacy && r.before.row && r.before.version < 23
	layout, err := r.optInLayout(ctx, legacy)
	if err != nil {
		return err
	}
	if r.before.ftsStale {
		err = r.recoverStale(ctx, layout)
	} else {
		err = r.repairTriggers(ctx, layout)
	}
	if err != nil {
		return err
	}
	return r.narrowUpdateTriggers(ctx, layout, legacy)
}

// legacyLayout ports _db_has_legacy_inline_fts: messages_fts exists and its DDL has no
// tool_name column (the v1–v10 and v11–v22 shapes).
func (r *openRun) legacyLayout(ctx context.Context) (bool, error) {
	o, ok, err := r.object(ctx, ftsBase)
	return ok && o.Type == "table" && !strings.Contains(o.SQL, "tool_name"), err
}

// optInLayout returns the FTS DDL r0817 ensures: on a legacy file the inline layout of
// rules.legacyFTS with its UPDATE triggers narrowed (LEGACY_FTS_SQL), else its own.
func (r *openRun) optInLayout(ctx context.Context, legacy bool) ([]statedb.Object, error) {
	if !legacy {
		return ftsObjects(r.ref.objects), nil
	}
	old, err := loadRuntimeRef(ctx, r.rules.legacyFTS)
	if err != nil {
		return nil, err
	}
	layout := ftsObjects(old.objects)
	for i, o := range layout {
		if o.Type == "trigger" && isBroadUpdateTrigger(o.SQL) {
			layout[i].SQL = broadUpdate.ReplaceAllString(o.SQL, narrowedUpdate)
		}
	}
	return layout, nil
}

// recoverStale is _recover_stale_fts (commitStaleFTS): triggers, tables and view dropped,
// the layout created again and rebuilt from messages.
func (r *openRun) recoverStale(ctx context.Context, layout []statedb.Object) error {
	if err := r.drop(ctx, "TABLE", ftsTrigram); err != nil {
		return err
	}
	if err := r.drop(ctx, "VIEW", ftsTrigramView); err != nil {
		return err
	}
	if err := r.drop(ctx, "TABLE", ftsBase); err != nil {
		return err
	}
	r.markReplaced(layout, commitStaleFTS)
	r.ftsRebuilt = []string{ftsBase, ftsTrigram}
	return r.ensure(ctx, layout, commitStaleFTS)
}

// narrowUpdateTriggers is _migrate_broad_fts_update_triggers (commitNarrowTriggers): every
// broad UPDATE trigger is dropped and the layout's DDL run again, without a rebuild. The CJK
// update trigger (v23 layout only) is dropped too; sessionctl cannot tell whether its
// tokenizer loads, so it is not predicted back.
func (r *openRun) narrowUpdateTriggers(ctx context.Context, layout []statedb.Object, legacy bool) error {
	names := []string{"messages_fts_update", "messages_fts_trigram_update"}
	if !legacy {
		names = append(names, ftsCJKUpdate)
	}
	var broad []string
	for _, name := range names {
		o, ok, err := r.object(ctx, name)
		if err != nil {
			return err
		}
		if ok && o.Type == "trigger" && isBroadUpdateTrigger(o.SQL) {
			broad = append(broad, name)
		}
	}
	if len(broad) == 0 {
		return nil
	}
	if err := r.drop(ctx, "TRIGGER", broad...); err != nil {
		return err
	}
	for _, name := range broad {
		r.replaced[name] = commitNarrowTriggers
	}
	return r.ensure(ctx, layout, commitNarrowTriggers)
}

// ensure creates the objects of layout that do not exist (the runtime's IF NOT EXISTS).
func (r *openRun) ensure(ctx context.Context, layout []statedb.Object, commit string) error {
	for _, o := range layout {
		if err := r.create(ctx, o, commit); err != nil {
			return err
		}
	}
	return nil
}

// drop runs DROP <kind> IF EXISTS for every name.
func (r *openRun) drop(ctx context.Context, kind string, names ...string) error {
	for _, name := range names {
		if err := r.db.Exec(ctx, "DROP "+kind+" IF EXISTS "+quoteIdent(name)); err != nil {
			return errorf("drop "+name, err)
		}
	}
	return nil
}

// markReplaced records that every object of layout is dropped and created again by commit.
func (r *openRun) markReplaced(layout []statedb.Object, commit string) {
	for _, o := range layout {
		r.replaced[o.Name] = commit
	}
}

// countTriggers counts the six FTS triggers that exist (_fts_trigger_count).
func (r *openRun) countTriggers(ctx context.Context) (int, error) {
	n := 0
	for _, name := range ftsTriggers {
		o, ok, err := r.object(ctx, name)
		if err != nil {
			return 0, err
		}
		if ok && o.Type == "trigger" {
			n++
		}
	}
	return n, nil
}
