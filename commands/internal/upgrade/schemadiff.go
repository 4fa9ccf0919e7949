package upgrade

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/statedb"
)

// Schema step kinds (testdata/upgrade/README.md, summary.json).
const (
	KindCreateTable         = "create_table"
	KindAddColumn           = "add_column"
	KindRebuildTable        = "rebuild_table"
	KindCreateIndex         = "create_index"
	KindDropIndex           = "drop_index"
	KindReplaceIndex        = "replace_index"
	KindCreateTrigger       = "create_trigger"
	KindDropTrigger         = "drop_trigger"
	KindReplaceTrigger      = "replace_trigger"
	KindCreateView          = "create_view"
	KindCreateVirtualTable  = "create_virtual_table"
	KindReplaceVirtualTable = "replace_virtual_table"
	KindDropVirtualTable    = "drop_virtual_table"
	KindSetSchemaVersion    = "set_schema_version"
)

// rebuildNote explains a rebuild_table step.
const rebuildNote = "table recreated to change its PRIMARY KEY (rows copied)"

// schemaSnap is a schema as the comparison sees it: objects by name, the columns of ordinary
// tables, the descriptions of indexes.
type schemaSnap struct {
	objects map[string]statedb.Object
	columns map[string][]statedb.Column
	indexes map[string]statedb.IndexInfo
}

// snapshot reads the scratch database's schema.
func (s *simulation) snapshot(ctx context.Context) (schemaSnap, error) {
	snap := schemaSnap{objects: map[string]statedb.Object{}, columns: map[string][]statedb.Column{},
		indexes: map[string]statedb.IndexInfo{}}
	all, err := s.db.Objects(ctx)
	if err != nil {
		return snap, errorf("read the scratch schema", err)
	}
	for _, o := range all {
		if statedb.Internal(o, all) {
			continue
		}
		snap.objects[o.Name] = o
		switch {
		case isPlainTable(o):
			snap.columns[o.Name], err = s.db.Columns(ctx, o.Name)
		case o.Type == "index":
			snap.indexes[o.Name], err = s.db.Index(ctx, o.Table, o.Name)
		}
		if err != nil {
			return snap, errorf("read the scratch schema", err)
		}
	}
	return snap, nil
}

// objectGroup orders the steps: ordinary tables, virtual tables, views, indexes, triggers.
type objectGroup int

const (
	groupTable objectGroup = iota
	groupVirtual
	groupView
	groupIndex
	groupTrigger
)

// groupOf returns the group of o.
func groupOf(o statedb.Object) objectGroup {
	switch {
	case o.Virtual():
		return groupVirtual
	case o.Type == "table":
		return groupTable
	case o.Type == "view":
		return groupView
	case o.Type == "index":
		return groupIndex
	}
	return groupTrigger
}

// diffSchemas lists the steps from before to after: per group, objects in name order (bytes),
// then schema_version.
func diffSchemas(before, after schemaSnap, run *openRun) []SchemaStep {
	d := differ{before: before, after: after, run: run}
	var steps []SchemaStep
	for g := groupTable; g <= groupTrigger; g++ {
		for _, name := range d.names(g) {
			steps = append(steps, d.objectSteps(g, name)...)
		}
	}
	if st, ok := versionStep(run); ok {
		steps = append(steps, st)
	}
	return steps
}

// differ compares one object at a time.
type differ struct {
	before, after schemaSnap
	run           *openRun
}

// names returns the names of group g's objects on either side, sorted.
func (d differ) names(g objectGroup) []string {
	var out []string
	for _, snap := range []schemaSnap{d.before, d.after} {
		for name, o := range snap.objects {
			if groupOf(o) == g && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// objectSteps returns the steps of the object name of group g.
func (d differ) objectSteps(g objectGroup, name string) []SchemaStep {
	b, inBefore := d.before.objects[name]
	a, inAfter := d.after.objects[name]
	switch {
	case g == groupTable && inAfter:
		return d.tableSteps(name, inBefore)
	case !inBefore && inAfter:
		return []SchemaStep{d.created(g, a)}
	case inBefore && !inAfter:
		return d.dropped(g, b)
	case inBefore && inAfter && g != groupView && (a.SQL != b.SQL || d.run.replaced[name] != ""):
		return []SchemaStep{d.replaced(g, a)}
	}
	return nil
}

// tableSteps: a created table, or the columns added to an existing one and its rebuild.
func (d differ) tableSteps(name string, existed bool) []SchemaStep {
	cols := d.after.columns[name]
	if !existed {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		return []SchemaStep{{Kind: KindCreateTable, Object: name, Columns: names, Commit: d.run.commits[name]}}
	}
	var steps []SchemaStep
	for _, c := range cols {
		if !hasColumn(d.before.columns[name], c.Name) {
			steps = append(steps, SchemaStep{Kind: KindAddColumn, Object: name + "." + c.Name, Table: name,
				Column: c.Name, Type: c.Type, NotNull: c.NotNull, Default: c.Default, Commit: d.run.commits[name+"."+c.Name]})
		}
	}
	if commit, ok := d.run.rebuilt[name]; ok {
		steps = append(steps, SchemaStep{Kind: KindRebuildTable, Object: name, Note: rebuildNote, Commit: commit})
	}
	return steps
}

// created is the step creating o.
func (d differ) created(g objectGroup, o statedb.Object) SchemaStep {
	st := SchemaStep{Object: o.Name, Commit: d.run.commits[o.Name]}
	switch g {
	case groupVirtual:
		st.Kind, st.Module, st.SQL = KindCreateVirtualTable, virtualModule(o.SQL), o.SQL
	case groupView:
		st.Kind = KindCreateView
	case groupIndex:
		st.Kind = KindCreateIndex
		d.describeIndex(&st, o, d.after)
	default:
		st.Kind, st.Table, st.Event = KindCreateTrigger, o.Table, triggerEvent(o.SQL)
	}
	return st
}

// replaced is the step replacing an object by o (dropped and created again).
func (d differ) replaced(g objectGroup, o statedb.Object) SchemaStep {
	st := SchemaStep{Object: o.Name, Commit: d.commitOf(o.Name)}
	switch g {
	case groupVirtual:
		st.Kind, st.Module, st.SQL = KindReplaceVirtualTable, virtualModule(o.SQL), o.SQL
	case groupIndex:
		st.Kind = KindReplaceIndex
		d.describeIndex(&st, o, d.after)
	default:
		st.Kind, st.Table, st.Event = KindReplaceTrigger, o.Table, triggerEvent(o.SQL)
	}
	return st
}

// dropped is the step dropping o (none for kinds the contract does not name).
func (d differ) dropped(g objectGroup, o statedb.Object) []SchemaStep {
	st := SchemaStep{Object: o.Name, Commit: d.run.replaced[o.Name]}
	switch g {
	case groupVirtual:
		st.Kind, st.Module = KindDropVirtualTable, virtualModule(o.SQL)
	case groupIndex:
		st.Kind = KindDropIndex
		d.describeIndex(&st, o, d.before)
	case groupTrigger:
		st.Kind, st.Table, st.Event = KindDropTrigger, o.Table, triggerEvent(o.SQL)
	default:
		return nil
	}
	return []SchemaStep{st}
}

// commitOf returns the rule that replaced or created name.
func (d differ) commitOf(name string) string {
	if c := d.run.replaced[name]; c != "" {
		return c
	}
	return d.run.commits[name]
}

// describeIndex fills an index step from snap.
func (d differ) describeIndex(st *SchemaStep, o statedb.Object, snap schemaSnap) {
	ix := snap.indexes[o.Name]
	st.Table, st.Columns, st.Unique, st.Partial = o.Table, ix.Columns, ix.Unique, ix.Partial
}

// versionStep is set_schema_version when the open inserts or raises the version.
func versionStep(run *openRun) (SchemaStep, bool) {
	if run.before.row && run.before.version == run.after.version {
		return SchemaStep{}, false
	}
	st := SchemaStep{Kind: KindSetSchemaVersion, Object: "schema_version", After: run.after.version, Commit: run.rules.commit}
	if run.before.row {
		st.Before = run.before.version
	}
	return st, true
}

// triggerTiming finds a trigger's timing and operation.
var triggerTiming = regexp.MustCompile(`(?is)\b(BEFORE|AFTER|INSTEAD\s+OF)\s+(INSERT|UPDATE|DELETE)\b`)

// triggerEvent returns "AFTER UPDATE" and the like from a CREATE TRIGGER statement.
func triggerEvent(sql string) string {
	m := triggerTiming.FindStringSubmatch(sql)
	if m == nil {
		return ""
	}
	return strings.ToUpper(strings.Join(strings.Fields(m[1]), " ") + " " + m[2])
}

// usingModule finds the module of a CREATE VIRTUAL TABLE statement.
var usingModule = regexp.MustCompile(`(?i)\bUSING\s+(\w+)`)

// virtualModule returns the module of a virtual table ("fts5").
func virtualModule(sql string) string {
	if m := usingModule.FindStringSubmatch(sql); m != nil {
		return strings.ToLower(m[1])
	}
	return ""
}

// MarshalJSON writes the step with the fields of its kind, as summary.json does: add_column
// with table, column, type, notnull and default (null without one); create_table with
// columns; indexes with table, columns, unique and partial; triggers with table and event;
// virtual tables with module and sql; set_schema_version with before (null when the file had
// no row) and after; note and commit when set.
func (s SchemaStep) MarshalJSON() ([]byte, error) {
	m := map[string]any{"kind": s.Kind, "object": s.Object}
	switch s.Kind {
	case KindAddColumn:
		m["table"], m["column"], m["type"], m["notnull"], m["default"] = s.Table, s.Column, s.Type, s.NotNull, s.Default
	case KindCreateTable:
		m["columns"] = s.Columns
	case KindCreateIndex, KindDropIndex, KindReplaceIndex:
		m["table"], m["columns"], m["unique"], m["partial"] = s.Table, s.Columns, s.Unique, s.Partial
	case KindCreateTrigger, KindDropTrigger, KindReplaceTrigger:
		m["table"], m["event"] = s.Table, s.Event
	case KindCreateVirtualTable, KindReplaceVirtualTable, KindDropVirtualTable:
		m["module"] = s.Module
		if s.SQL != "" {
			m["sql"] = s.SQL
		}
	case KindSetSchemaVersion:
		m["before"], m["after"] = s.Before, s.After
	}
	if s.Note != "" {
		m["note"] = s.Note
	}
	if s.Commit != "" {
		m["commit"] = s.Commit
	}
	return json.Marshal(m)
}
