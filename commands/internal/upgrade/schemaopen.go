package upgrade

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// The FTS objects every layout names: the two virtual tables and their six triggers
// (_FTS_TRIGGERS), the v23 trigram source view, and r0817's optional CJK update trigger.
const (
	ftsBase         = "messages_fts"
	ftsTrigram      = "messages_fts_trigram"
	ftsTrigramView  = "messages_fts_trigram_src"
	ftsCJKUpdate    = "messages_fts_cjk_update"
	ftsNameLeader   = "messages_fts"
	ftsTriggerCount = 6
)

// ftsTriggers are the six triggers whose count decides a trigger repair (_FTS_TRIGGERS).
var ftsTriggers = []string{
	"messages_fts_insert", "messages_fts_delete", "messages_fts_update",
	"messages_fts_trigram_insert", "messages_fts_trigram_delete", "messages_fts_trigram_update",
}

// ftsCJKTriggers are dropped with the others when FTS is stale (r0817).
var ftsCJKTriggers = []string{"messages_fts_cjk_insert", "messages_fts_cjk_delete", ftsCJKUpdate}

// simulation is a scratch database holding a copy of the home's schema (no rows), on which
// runtime opens are replayed.
type simulation struct {
	db *statedb.Scratch
}

// newSimulation recreates objs (the home's sqlite_master) in a scratch database.
func newSimulation(ctx context.Context, objs []statedb.Object) (*simulation, error) {
	db, err := statedb.NewScratch(ctx)
	if err != nil {
		return nil, errorf("scratch database", err)
	}
	if err := db.Replay(ctx, objs); err != nil {
		_ = db.Close()
		return nil, errorf("replay the home's schema", err)
	}
	return &simulation{db: db}, nil
}

// Close releases the scratch database.
func (s *simulation) Close() {
	_ = s.db.Close()
}

// runtimeRef is a runtime's own schema, read back from a scratch database its DDL ran in.
type runtimeRef struct {
	version int
	objects []statedb.Object            // creation order, SQLite's own objects left out
	columns map[string][]statedb.Column // declared columns of every ordinary table
}

// loadRuntimeRef runs the runtime schema of gen in a scratch database and reads it back.
func loadRuntimeRef(ctx context.Context, gen sessionsjson.Generation) (runtimeRef, error) {
	rs, err := statedb.RuntimeSchemaFor(string(gen))
	if err != nil {
		return runtimeRef{}, errorf("runtime schema", err)
	}
	db, err := statedb.NewScratch(ctx)
	if err != nil {
		return runtimeRef{}, errorf("scratch database", err)
	}
	defer db.Close()
	if err := db.Exec(ctx, rs.DDL); err != nil {
		return runtimeRef{}, errorf("run the runtime schema of "+string(gen), err)
	}
	all, err := db.Objects(ctx)
	if err != nil {
		return runtimeRef{}, errorf("read the runtime schema", err)
	}
	ref := runtimeRef{version: rs.Version, columns: map[string][]statedb.Column{}}
	for _, o := range all {
		if statedb.Internal(o, all) {
			continue
		}
		ref.objects = append(ref.objects, o)
		if isPlainTable(o) {
			if ref.columns[o.Name], err = db.Columns(ctx, o.Name); err != nil {
				return runtimeRef{}, errorf("read the runtime schema", err)
			}
		}
	}
	return ref, nil
}

// isPlainTable reports whether o is an ordinary table (not virtual).
func isPlainTable(o statedb.Object) bool {
	return o.Type == "table" && !o.Virtual()
}

// isFTS reports whether o belongs to an FTS layout: a virtual table, view or trigger whose
// name starts with messages_fts.
func isFTS(o statedb.Object) bool {
	return strings.HasPrefix(o.Name, ftsNameLeader) && (o.Virtual() || o.Type == "view" || o.Type == "trigger")
}

// ftsObjects returns the FTS objects of objs, in creation order.
func ftsObjects(objs []statedb.Object) []statedb.Object {
	var out []statedb.Object
	for _, o := range objs {
		if isFTS(o) {
			out = append(out, o)
		}
	}
	return out
}

// openRun is one replayed open: the rules it ran under and what it did that a schema
// comparison alone does not show.
type openRun struct {
	db     *statedb.Scratch
	rules  openRules
	ref    runtimeRef
	before fileVersion
	after  fileVersion
	// commits names the rule that created or added an object ("table.column" for a
	// column); declarative creations cite rules.commit.
	commits map[string]string
	// rebuilt: tables recreated in place (a primary key healed); replaced: FTS objects
	// dropped and created again; each with the commit of its rule.
	rebuilt, replaced map[string]string
	// ftsRebuilt lists the FTS tables the open fills from messages.
	ftsRebuilt []string
	// setsOptimizeFlag: the v23 step sets state_meta.fts_optimize_available = '1'.
	setsOptimizeFlag bool
	// failed holds the declared objects whose creation failed: the runtime's open raises.
	failed []error
}

// open replays the open of gen's runtime on the scratch database, whose schema_version row
// and FTS markers are file's.
func (s *simulation) open(ctx context.Context, gen sessionsjson.Generation, file fileVersion) (*openRun, error) {
	rules, ok := generationOpenRules[gen]
	if !ok {
		return nil, errorf(string(gen), ErrNoOpenRules)
	}
	ref, err := loadRuntimeRef(ctx, gen)
	if err != nil {
		return nil, err
	}
	run := &openRun{db: s.db, rules: rules, ref: ref, before: file,
		commits: map[string]string{}, rebuilt: map[string]string{}, replaced: map[string]string{}}
	for _, step := range []func(context.Context) error{
		run.createTables, run.addColumns, run.healKeys, run.createIndexes, run.openFTS,
	} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	run.after = run.versionAfter()
	return run, nil
}

// object returns the scratch database's object called name.
func (r *openRun) object(ctx context.Context, name string) (statedb.Object, bool, error) {
	objs, err := r.db.Objects(ctx)
	if err != nil {
		return statedb.Object{}, false, errorf("read the scratch schema", err)
	}
	for _, o := range objs {
		if o.Name == name {
			return o, true, nil
		}
	}
	return statedb.Object{}, false, nil
}

// create runs the CREATE statement of o unless an object of its name exists (the
// runtime's IF NOT EXISTS), citing commit. A failing statement is recorded in failed.
func (r *openRun) create(ctx context.Context, o statedb.Object, commit string) error {
	_, exists, err := r.object(ctx, o.Name)
	if err != nil || exists {
		return err
	}
	if err := r.db.Exec(ctx, o.SQL); err != nil {
		r.failed = append(r.failed, errorf(o.Type+" "+o.Name, err))
		return nil
	}
	r.commits[o.Name] = commit
	return nil
}

// createTables runs the CREATE TABLE statements of the runtime's SCHEMA_SQL.
func (r *openRun) createTables(ctx context.Context) error {
	for _, o := range r.ref.objects {
		if isPlainTable(o) {
			if err := r.create(ctx, o, r.rules.commit); err != nil {
				return err
			}
		}
	}
	return nil
}

// createIndexes creates the runtime's indexes the file lacks: SCHEMA_SQL's, the deferred
// ones that need reconciled columns, and the unique title index.
func (r *openRun) createIndexes(ctx context.Context) error {
	for _, o := range r.ref.objects {
		if o.Type == "index" {
			if err := r.create(ctx, o, r.rules.commit); err != nil {
				return err
			}
		}
	}
	return nil
}

// addColumns adds the declared columns the file's tables lack, by the runtime's rule.
func (r *openRun) addColumns(ctx context.Context) error {
	for _, o := range r.ref.objects {
		if !isPlainTable(o) {
			continue
		}
		live, err := r.db.Columns(ctx, o.Name)
		if err != nil {
			return errorf("read the scratch schema", err)
		}
		if len(live) == 0 {
			continue
		}
		for _, c := range r.ref.columns[o.Name] {
			commit, ok := r.columnRule(o.Name, c.Name)
			if ok && !hasColumn(live, c.Name) {
				r.addColumn(ctx, o.Name, c, commit)
			}
		}
	}
	return nil
}

// columnRule says whether the runtime adds column to table when it is missing, and under
// which commit.
func (r *openRun) columnRule(table, column string) (string, bool) {
	if r.rules.columns == columnsReconciled {
		return commitReconcile, true
	}
	for _, st := range r.rules.chain {
		if st.table == table && slices.Contains(st.columns, column) {
			return st.commit, r.before.row && r.before.version < st.version
		}
	}
	return "", false
}

// addColumn runs the reconciler's ALTER TABLE: the declared type, NOT NULL unless the column
// is in the primary key, the default. SQLite refuses some (NOT NULL without a default); the
// runtime logs those and carries on, and so does the replay.
func (r *openRun) addColumn(ctx context.Context, table string, c statedb.Column, commit string) {
	parts := []string{"ALTER TABLE", quoteIdent(table), "ADD COLUMN", quoteIdent(c.Name)}
	if c.Type != "" {
		parts = append(parts, c.Type)
	}
	if c.NotNull && c.PK == 0 {
		parts = append(parts, "NOT NULL")
	}
	if c.Default != nil {
		parts = append(parts, "DEFAULT", *c.Default)
	}
	if r.db.Exec(ctx, strings.Join(parts, " ")) == nil {
		r.commits[table+"."+c.Name] = commit
	}
}

// keyHeals are the tables the r0817 runtime rebuilds when their primary key is older than
// its DDL's: gateway_routing without (scope, session_key), session_model_usage without task.
var keyHeals = []struct {
	table  string
	legacy func(pk []string) bool
	commit string
}{
	{"gateway_routing", func(pk []string) bool { return !slices.Equal(pk, []string{"scope", "session_key"}) }, commitHealRouting},
	{"session_model_usage", func(pk []string) bool { return !slices.Contains(pk, "task") }, commitHealUsage},
}

// healKeys rebuilds the tables whose primary key the runtime heals.
func (r *openRun) healKeys(ctx context.Context) error {
	if !r.rules.healsKeys {
		return nil
	}
	for _, h := range keyHeals {
		cols, err := r.db.Columns(ctx, h.table)
		if err != nil {
			return errorf("read the scratch schema", err)
		}
		if len(cols) == 0 || !h.legacy(primaryKey(cols)) {
			continue
		}
		if err := r.rebuildTable(ctx, h.table, h.commit); err != nil {
			return err
		}
	}
	return nil
}

// rebuildTable recreates table from the runtime's DDL (its indexes follow in createIndexes).
func (r *openRun) rebuildTable(ctx context.Context, table, commit string) error {
	i := slices.IndexFunc(r.ref.objects, func(o statedb.Object) bool { return o.Name == table })
	if i < 0 {
		return nil
	}
	if err := r.db.Exec(ctx, "DROP TABLE "+quoteIdent(table)); err != nil {
		return errorf("rebuild "+table, err)
	}
	if err := r.db.Exec(ctx, r.ref.objects[i].SQL); err != nil {
		return errorf("rebuild "+table, err)
	}
	r.rebuilt[table] = commit
	return nil
}

// versionAfter is the schema_version row after the open: the runtime's own version when the
// file had no row or an older one; never lowered.
func (r *openRun) versionAfter() fileVersion {
	after := r.before
	if !after.row || after.version < r.ref.version {
		after.version, after.row = r.ref.version, true
	}
	if len(r.replaced) > 0 && r.before.ftsStale {
		after.ftsStale = false
	}
	return after
}

// hasColumn reports whether cols has a column called name.
func hasColumn(cols []statedb.Column, name string) bool {
	return slices.ContainsFunc(cols, func(c statedb.Column) bool { return c.Name == name })
}

// primaryKey returns the primary-key columns in key order.
func primaryKey(cols []statedb.Column) []string {
	keyed := slices.Clone(cols)
	keyed = slices.DeleteFunc(keyed, func(c statedb.Column) bool { return c.PK == 0 })
	slices.SortFunc(keyed, func(a, b statedb.Column) int { return a.PK - b.PK })
	out := make([]string, len(keyed))
	for i, c := range keyed {
		out[i] = c.Name
	}
	return out
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// broadUpdate matches the UPDATE clause of a trigger that fires on any column.
var broadUpdate = regexp.MustCompile(`(?is)AFTER\s+UPDATE\s+ON\s+messages`)

// narrowedUpdate is the UPDATE clause r0817's legacy DDL declares (dab7c8860).
const narrowedUpdate = "AFTER UPDATE OF content, tool_name, tool_calls ON messages"

// isBroadUpdateTrigger ports _fts_update_trigger_needs_narrowing: whitespace collapsed and
// upper-cased, the SQL has "AFTER UPDATE ON " and no "AFTER UPDATE OF ".
func isBroadUpdateTrigger(sql string) bool {
	compact := strings.ToUpper(strings.Join(strings.Fields(sql), " "))
	return !strings.Contains(compact, "AFTER UPDATE OF ") && strings.Contains(compact, "AFTER UPDATE ON ")
}
