// Package home opens a Hermes home once for a command: its paths, generation and rules, the
// gateway verdict, the routing index (sessions.json or gateway_routing), state.db and the
// restart counts. What is opened depends on the purpose of the run.
package home

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Options are what every run of the engine is given: the home, the clock, the command name
// (journals and messages carry it) and where warnings go.
type Options struct {
	Home    sessionsjson.Home
	Clock   sessionsjson.Clock
	Command string
	// LockWait is how long a write waits for sessionctl's lock while another sessionctl
	// holds it (--wait); 0 refuses at once.
	LockWait time.Duration
	// AssumeStopped: the operator says no gateway runs and no other process holds the home's
	// database (--force). A write that needs the database alone goes ahead on it where this
	// platform cannot tell (no gateway probe on Windows, no /proc holders scan off Linux); a
	// gateway or holder that is seen still refuses it.
	AssumeStopped bool
	// Warn receives one-line warnings that never stop the run (nil: dropped).
	Warn func(format string, a ...any)
	// Progress receives the progress of long work (nil: dropped): what is under way, and done
	// of total units (total 0: not known). The face may draw it; the engine never prints.
	Progress func(what string, done, total int64)
}

// Report passes progress on.
func (o *Options) Report(what string, done, total int64) {
	if o.Progress != nil {
		o.Progress(what, done, total)
	}
}

// Warnf passes a warning on.
func (o *Options) Warnf(format string, a ...any) {
	if o.Warn != nil {
		o.Warn(format, a...)
	}
}

// Rel returns path relative to the home directory when it lies below it.
func (o *Options) Rel(path string) string {
	if rel, err := filepath.Rel(o.Home.Dir, path); err == nil {
		return rel
	}
	return path
}

// Storage is where the runtime keeps the routing index.
type Storage int

// Storage models.
const (
	// StorageJSON: sessions/sessions.json is the routing index.
	StorageJSON Storage = iota
	// StorageDB: the gateway_routing table of state.db is (schema v19+); sessions.json mirrors it.
	StorageDB
)

func (s Storage) String() string {
	if s == StorageDB {
		return "db-primary"
	}
	return "json-primary"
}

// Source is where the routing entries of this home were read from.
type Source int

// Routing sources.
const (
	// SourceJSON: sessions.json, the primary index of a json-primary home.
	SourceJSON Source = iota
	// SourceNotImported: sessions.json on a db-primary home whose gateway_routing has no rows
	// yet; the next gateway start imports it.
	SourceNotImported
	// SourceForeignOnly: none; every gateway_routing row belongs to another scope.
	SourceForeignOnly
	// SourceGatewayRouting: the gateway_routing rows of this home's scope.
	SourceGatewayRouting
)

func (s Source) String() string {
	switch s {
	case SourceNotImported:
		return "sessions.json (no gateway_routing rows yet: imported at the next gateway start)"
	case SourceForeignOnly:
		return "none for this home (gateway_routing rows belong to another scope)"
	case SourceGatewayRouting:
		return "gateway_routing"
	}
	return "sessions.json"
}

// Store names the store a routing edit lands in.
func (s Source) Store() string {
	if s == SourceGatewayRouting {
		return StoreGatewayRouting
	}
	return StoreSessionsJSON
}

// Stores of routing entries, as journals and change lists name them.
const (
	StoreSessionsJSON   = "sessions.json"
	StoreGatewayRouting = "gateway_routing"
	// StoreStateDB names, in change lists, a state.db change that is not a routing row.
	StoreStateDB = "state.db"
)

// Purpose decides what Open reads and how strictly.
type Purpose int

// Purposes.
const (
	// Read: the routing index and state.db; an unreadable sessions.json fails the run.
	Read Purpose = iota
	// Inspect (check): as Read, but an unreadable sessions.json or counts file is recorded,
	// and the mirror of a db-primary home is compared with gateway_routing while loading.
	Inspect
	// Survey (maintain's steps and summary): tolerant like Inspect, the mirror not kept.
	Survey
	// Restore (undo): as Read, keeping the decoded mirror to compare and restore its entries.
	Restore
	// Database (state.db repairs): the gateway verdict and state.db only.
	Database
	// List (entries list): as Read, except that the entries of a db-primary home are not
	// loaded but streamed by EachEntryRow, and sessions.json is read for its keys only.
	List
)

// tolerant reports whether an unreadable sessions.json is recorded instead of failing.
func (p Purpose) tolerant() bool { return p == Inspect || p == Survey }

// dropsMirror reports whether the decoded mirror of a db-primary home is let go once the
// routing rows are loaded (Inspect compares it first, Restore keeps it).
func (p Purpose) dropsMirror() bool { return p != Inspect && p != Restore }

// Mirror is the sessions.json file as read: the decoded document (nil when absent, unreadable
// or let go) and what was wrong with it.
type Mirror struct {
	Doc       *sessionsjson.Document
	Err       error // set instead of failing under a tolerant purpose
	ASCIIOnly bool  // the file escapes every non-ASCII character (kept on rewrite)
	// Diffs is the comparison with gateway_routing made while loading (Inspect).
	Diffs    []MirrorDiff
	Compared bool
	// Read identifies the file as it was when read (size, modification time, inode), so that
	// a rewrite can tell that another writer replaced it since (Unchanged).
	Read os.FileInfo
}

// ErrMirrorChanged refuses a rewrite of sessions.json that another writer replaced since it
// was read.
var ErrMirrorChanged = errors.New("sessions.json changed since it was read (another writer: a gateway sessionctl cannot see?)")

// Unchanged returns ErrMirrorChanged when the sessions.json at path is no longer the file read.
func (m *Mirror) Unchanged(path string) error {
	now, err := os.Stat(path)
	if m.Read == nil || err != nil || os.SameFile(now, m.Read) && now.Size() == m.Read.Size() && now.ModTime().Equal(m.Read.ModTime()) {
		return nil
	}
	return ErrMirrorChanged
}

// Counts is the .restart_failure_counts file as read.
type Counts struct {
	Present bool
	Data    []byte
	Parsed  *sessionsjson.Counts // nil when absent or unparseable
	Err     error
}

// Routing is the primary routing index of the home.
type Routing struct {
	Source  Source
	Scope   string                // resolved sessions dir: the gateway_routing scope of this home
	Entries []*sessionsjson.Entry // in order
	Foreign map[string]int        // db-primary: rows per other scope
	// Legacy holds the keys of the legacy entries among Entries (SourceGatewayRouting): keys
	// only sessions.json has, or whose gateway_routing row the runtime skips while the
	// sessions.json entry loads. The runtime imports them at load (gateway/session.py
	// _ensure_loaded_locked, c2a3b9ce5: "only fills keys the DB didn't provide") and acts on
	// them; its next save writes them into the table, and so does a sessionctl write of one
	// (with the sessions.json mirror).
	Legacy map[string]bool
	// Rows holds, by key, the gateway_routing rows the runtime skips whose keys are legacy
	// (their sessions.json entries load instead): the row a write of the legacy entry
	// replaces. A legacy key without one has no row.
	Rows   map[string]*sessionsjson.Entry
	byKey  map[string]*sessionsjson.Entry
	stream *entryStream // set instead of Entries on a db-primary home opened for List
}

// IsLegacy reports whether key names a legacy entry (see Routing.Legacy).
func (h *Home) IsLegacy(key string) bool {
	return h.Routing.Legacy[key]
}

// Home is one opened home, read-only.
type Home struct {
	Opts    Options
	Gateway sessionsjson.GatewayStatus
	DB      *statedb.DB // nil when the home has no state.db, or (DBErr) an unreadable one
	// DBErr is why state.db could not be opened, recorded instead of failing under a tolerant
	// purpose (check reports it as db.corrupt and runs the other checks).
	DBErr   error
	Schema  statedb.Schema
	Gen     sessionsjson.Generation
	Rules   sessionsjson.Rules
	Storage Storage
	Routing Routing
	Mirror  Mirror
	Counts  Counts
	// CleanShutdown: the .clean_shutdown marker is present.
	CleanShutdown bool
	// prev is an earlier read of sessions.json that LoadMirror keeps when the file still
	// holds its bytes (Reopen).
	prev *Mirror
}

// Open opens the home for purpose. Close it when done.
func Open(ctx context.Context, o Options, purpose Purpose) (*Home, error) {
	return open(ctx, o, purpose, nil)
}

// Reopen opens the home again for purpose, as Open does (the gateway, state.db, the routing
// index and the counts file are all read again), except that the sessions.json document
// decoded by an earlier open (prev, the earlier home's Mirror) is kept instead of decoded
// again when the file still holds exactly the bytes it was decoded from, under the same
// rules, and nothing edited it: the routing repairs plan on the home as read, lock, and plan
// again on what the home holds then, and the second decode of a 20,000-entry file was two
// thirds of their CPU (issue 30).
func Reopen(ctx context.Context, o Options, purpose Purpose, prev Mirror) (*Home, error) {
	return open(ctx, o, purpose, &prev)
}

func open(ctx context.Context, o Options, purpose Purpose, prev *Mirror) (*Home, error) {
	if err := o.Home.Validate(); err != nil {
		return nil, fmt.Errorf("home %s: %w", o.Home.Dir, err)
	}
	h := &Home{Opts: o, Gateway: sessionsjson.DetectGateway(o.Home)}
	if prev != nil && prev.Doc != nil && !prev.Doc.Edited() {
		h.prev = prev
	}
	if purpose == Database {
		return h, h.openDatabaseOnly(ctx)
	}
	scope, err := sessionsjson.ResolvedSessionsDir(o.Home)
	if err != nil {
		return nil, fmt.Errorf("resolve sessions dir: %w", err)
	}
	h.Routing.Scope = scope
	if err := h.openDB(ctx); err != nil {
		if !purpose.tolerant() {
			return nil, err
		}
		h.DBErr, h.Gen = err, sessionsjson.GenUnknown
	}
	if purpose == List {
		if streamed, err := h.streamRouting(ctx); err != nil || streamed {
			return h.finishOpen(err, purpose)
		}
	}
	if h.DB != nil && h.Schema.HasGatewayRouting && purpose.dropsMirror() {
		h.settleRules(nil)
		return h.finishOpen(h.loadRoutingFirst(ctx, purpose, h.LoadMirror), purpose)
	}
	if err := h.LoadMirror(); err != nil {
		if !purpose.tolerant() {
			h.Close()
			return nil, err
		}
		h.Mirror.Err = err
	}
	return h.finishOpen(h.loadRouting(ctx, purpose), purpose)
}

// loadRoutingFirst is loadRouting for a purpose that lets the mirror of a db-primary home go
// once the rows are loaded: sessions.json is scanned for its keys only (checked as a decode
// checks it, never held whole: issue 30), and decoded (by loadMirror) only where it is the
// routing index (no rows were imported) or a key of it may be a legacy entry (legacyEntries
// reads it then). Under a tolerant purpose a file that cannot be read is recorded.
func (h *Home) loadRoutingFirst(ctx context.Context, purpose Purpose, loadMirror func() error) error {
	keys, mirrorErr := h.scanLegacyKeys()
	scopes, err := h.DB.RoutingScopes(ctx)
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	if mirrorErr == nil && h.notImported(scopes) {
		mirrorErr = loadMirror()
	}
	if mirrorErr != nil {
		if !purpose.tolerant() {
			return mirrorErr
		}
		h.Mirror.Err, keys = mirrorErr, nil
	}
	return h.routingOf(ctx, purpose, scopes, keys)
}

// scanLegacyKeys lists the keys of sessions.json in the order the runtime's dict holds them
// (a duplicate key where it first appears), each taken as one whose entry loads: whether it
// does is decided only for the keys legacyEntries takes, by decoding the file then.
func (h *Home) scanLegacyKeys() ([]mirrorKey, error) {
	var keys []mirrorKey
	seen := map[string]bool{}
	err := h.scanMirrorKeys(func(key string) {
		if !seen[key] {
			seen[key] = true
			keys = append(keys, mirrorKey{key, true})
		}
	})
	return keys, err
}

// finishOpen ends Open once the routing index is read (err: it could not be): the counts
// file and the clean-shutdown marker.
func (h *Home) finishOpen(err error, purpose Purpose) (*Home, error) {
	if err == nil {
		if err = h.loadCounts(); err != nil && purpose.tolerant() {
			err = nil
		}
	}
	if err != nil {
		h.Close()
		return nil, err
	}
	h.CleanShutdown = fileExists(h.Opts.Home.CleanShutdownFile())
	return h, nil
}

// openDatabaseOnly opens what the state.db repairs need: state.db, not the routing index
// (which can be tens of megabytes).
func (h *Home) openDatabaseOnly(ctx context.Context) error {
	if err := h.openDB(ctx); err != nil {
		return err
	}
	if h.DB == nil {
		h.Gen = readmeGeneration(h.Opts.Home.SessionsJSON())
	}
	h.settleRules(nil)
	if h.DB != nil && h.Schema.HasGatewayRouting {
		h.Storage = StorageDB
	}
	return nil
}

// Close releases the database handle.
func (h *Home) Close() {
	if h.DB != nil {
		_ = h.DB.Close()
	}
}

func (h *Home) openDB(ctx context.Context) error {
	path := h.Opts.Home.StateDB()
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		h.Gen = sessionsjson.GenUnknown
		return nil
	}
	db, err := statedb.OpenReadOnly(ctx, path)
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	h.DB = db
	h.Schema = db.Schema()
	h.Gen = sessionsjson.GenerationForSchema(h.Schema.Version)
	return nil
}

// LoadMirror reads and decodes sessions.json (again, when a plan let it go).
func (h *Home) LoadMirror() error {
	if ok, err := h.keepPrev(); ok || err != nil {
		return err
	}
	data, err := h.readMirror()
	h.settleRules(data)
	if err != nil || data == nil {
		return err
	}
	return h.decodeMirror(data)
}

// keepPrev keeps the earlier read of sessions.json (Reopen) when the file still holds
// exactly the bytes it was decoded from and the rules they were decoded under are the rules
// now: the document is then the one a decode would give. The file is compared as it is read,
// without a second copy of its bytes.
func (h *Home) keepPrev() (bool, error) {
	prev := h.prev
	if prev == nil {
		return false, nil
	}
	path := h.Opts.Home.SessionsJSON()
	read, _ := os.Stat(path) // before the comparison, as readMirror's
	same, err := sessionsjson.FileHolds(path, prev.Doc.Bytes())
	if err != nil || !same {
		return false, nil // readMirror reads it and reports what it finds
	}
	h.settleRules(prev.Doc.Bytes())
	if !reflect.DeepEqual(h.Rules, prev.Doc.Rules()) {
		return false, nil
	}
	h.Mirror = Mirror{Doc: prev.Doc, ASCIIOnly: prev.ASCIIOnly, Read: read}
	return true, nil
}

// readMirror reads sessions.json: nil without error when it does not exist.
func (h *Home) readMirror() ([]byte, error) {
	path := h.Opts.Home.SessionsJSON()
	h.Mirror.Read, _ = os.Stat(path) // before the read: a change while reading shows as one
	data, err := sessionsjson.ReadRegularFile(path, sessionsjson.MaxSessionsJSONBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, failure.Mark(failure.Data, readError(path, err))
	}
	return data, nil
}

// decodeMirror decodes sessions.json under h.Rules into h.Mirror.
func (h *Home) decodeMirror(data []byte) error {
	h.Mirror.ASCIIOnly = sessionsjson.DetectASCIIOnly(data)
	doc, err := sessionsjson.Decode(data, h.Rules)
	if err != nil {
		return fmt.Errorf("%s: %w", h.Opts.Home.SessionsJSON(), err)
	}
	h.Mirror.Doc = doc
	return nil
}

// settleRules picks the generation's rules; without a state.db the _README text decides.
func (h *Home) settleRules(data []byte) {
	if h.DB != nil {
		h.Rules = sessionsjson.RulesForSchema(h.Schema.Version)
		return
	}
	if h.Gen == sessionsjson.GenUnknown && data != nil {
		h.Gen = sessionsjson.GenerationFromREADME(readmeText(data))
	}
	h.Rules = sessionsjson.RulesFor(h.Gen)
}

// loadRouting loads the routing index once the mirror is read: the decoded mirror's
// entries, or on a db-primary home the rows of its scope (routingOf).
func (h *Home) loadRouting(ctx context.Context, purpose Purpose) error {
	if h.DB == nil || !h.Schema.HasGatewayRouting {
		if h.Mirror.Doc != nil {
			h.Routing.Entries = h.Mirror.Doc.Entries()
		}
		return nil
	}
	scopes, err := h.DB.RoutingScopes(ctx)
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	return h.routingOf(ctx, purpose, scopes, h.mirrorKeys())
}

// notImported reports whether gateway_routing holds no rows at all (scopes: the row counts
// by scope): sessions.json is then the routing index.
func (h *Home) notImported(scopes map[string]int) bool {
	return scopes[h.Routing.Scope] == 0 && len(foreignScopes(scopes, h.Routing.Scope)) == 0
}

// routingOf loads the routing index of a db-primary home from the rows of its scope (scopes:
// the row counts by scope) and the legacy entries the mirror's keys name, or from the
// decoded mirror when no rows were imported. Inspect compares the mirror with the rows
// first; the decoded mirror is let go before the rows are loaded unless purpose keeps it.
func (h *Home) routingOf(ctx context.Context, purpose Purpose, scopes map[string]int, keys []mirrorKey) error {
	r := &h.Routing
	h.Storage, r.Foreign = StorageDB, foreignScopes(scopes, r.Scope)
	if h.notImported(scopes) {
		r.Source = SourceNotImported
		if h.Mirror.Doc != nil {
			r.Entries = h.Mirror.Doc.Entries()
		}
		return nil
	}
	r.Entries = nil
	if _, ok := scopes[r.Scope]; !ok {
		r.Source = SourceForeignOnly
		h.dropMirror(purpose)
		return nil
	}
	if purpose == Inspect && h.Mirror.Doc != nil {
		var err error
		if h.Mirror.Diffs, err = h.CompareMirror(ctx); err != nil {
			return err
		}
		h.Mirror.Compared = true
	}
	h.dropMirror(purpose)
	if err := h.loadRoutingRows(ctx, scopes[r.Scope]); err != nil {
		return err
	}
	return h.addLegacy(keys)
}

// foreignScopes returns the row counts of the scopes other than scope.
func foreignScopes(scopes map[string]int, scope string) map[string]int {
	out := map[string]int{}
	for s, n := range scopes {
		if s != scope {
			out[s] = n
		}
	}
	return out
}

// mirrorKey is a key of the sessions.json mirror and whether the runtime loads its entry.
type mirrorKey struct {
	key   string
	loads bool
}

// mirrorKeys lists the keys of the decoded mirror in its order, before the mirror is let go:
// enough to tell, once the rows are loaded, whether the runtime's legacy import takes any
// entry (rarely: the mirror is then read again).
func (h *Home) mirrorKeys() []mirrorKey {
	if h.Mirror.Doc == nil {
		return nil
	}
	entries := h.Mirror.Doc.Entries()
	out := make([]mirrorKey, len(entries))
	for i, e := range entries {
		out[i] = mirrorKey{e.Key, e.Skip == ""}
	}
	return out
}

// addLegacy adds the legacy entries after the rows, in mirror order, as the runtime's dict
// has them: the keys no row has, and the keys whose row the runtime skips while their mirror
// entry loads (that row is then left out: the runtime acts on the imported entry, and its next
// save replaces the row). Their entries are copied from the mirror, read again when the
// purpose let it go.
func (h *Home) addLegacy(keys []mirrorKey) error {
	r := &h.Routing
	rowLoads := make(map[string]bool, len(r.Entries))
	for _, e := range r.Entries {
		rowLoads[e.Key] = e.Skip == ""
	}
	legacy, replaced, err := h.legacyEntries(keys, rowLoads)
	if err != nil || len(legacy) == 0 {
		return err
	}
	r.Rows = make(map[string]*sessionsjson.Entry, len(replaced))
	r.Entries = slices.DeleteFunc(r.Entries, func(e *sessionsjson.Entry) bool {
		if replaced[e.Key] {
			r.Rows[e.Key] = e
		}
		return replaced[e.Key]
	})
	r.Entries = append(r.Entries, legacy...)
	r.Legacy = legacyKeys(legacy)
	return nil
}

// legacyKeys returns the set of the keys of legacy.
func legacyKeys(legacy []*sessionsjson.Entry) map[string]bool {
	out := make(map[string]bool, len(legacy))
	for _, e := range legacy {
		out[e.Key] = true
	}
	return out
}

// legacyEntries returns the legacy entries of a db-primary home whose mirror has keys and
// whose rows load as rowLoads says (key → the runtime loads the row), in mirror order, and
// the keys whose rows they replace.
func (h *Home) legacyEntries(keys []mirrorKey, rowLoads map[string]bool) ([]*sessionsjson.Entry, map[string]bool, error) {
	var take []string
	replaced := map[string]bool{}
	for _, k := range keys {
		loads, row := rowLoads[k.key]
		switch {
		case !row:
			take = append(take, k.key)
		case !loads && k.loads:
			take, replaced[k.key] = append(take, k.key), true
		}
	}
	if len(take) == 0 {
		return nil, nil, nil
	}
	doc := h.Mirror.Doc
	if doc == nil {
		data, err := h.readMirror()
		if err == nil && data != nil {
			err = h.decodeMirror(data)
		}
		if err != nil {
			return nil, nil, err
		}
		doc, h.Mirror.Doc = h.Mirror.Doc, nil
	}
	legacy := make([]*sessionsjson.Entry, 0, len(take))
	for _, key := range take {
		m := doc.Entry(key)
		if m == nil || replaced[key] && m.Skip != "" { // the file changed since it was first read
			delete(replaced, key)
			continue
		}
		c, err := sessionsjson.DecodeEntry(key, bytes.Clone(m.Text()), h.Rules)
		if err != nil {
			return nil, nil, err
		}
		legacy = append(legacy, c)
	}
	return legacy, replaced, nil
}

// dropMirror lets go of the decoded sessions.json mirror of a db-primary home unless the
// purpose keeps it: holding both copies of a large routing index would double the memory.
func (h *Home) dropMirror(purpose Purpose) {
	if purpose != Restore {
		h.Mirror.Doc = nil
	}
}

// loadRoutingRows decodes the n gateway_routing rows of this home's scope as they stream in.
func (h *Home) loadRoutingRows(ctx context.Context, n int) error {
	r := &h.Routing
	r.Entries = make([]*sessionsjson.Entry, 0, n)
	err := h.DB.EachRoutingEntry(ctx, r.Scope, func(key string, entryJSON []byte) error {
		r.Entries = append(r.Entries, sessionsjson.DecodeRow(key, entryJSON, h.Rules)) // invalid JSON: skipped, as the runtime's load skips the row
		return nil
	})
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	r.Source = SourceGatewayRouting
	return nil
}

// loadCounts reads the counts file; what is wrong with it is recorded in Counts.Err. A named
// pipe, a device or a file over the limit is also returned (as a data error): the runtime's
// start-up read of a pipe or a device never finishes, so only a tolerant purpose goes on
// without it. A directory is only recorded (the runtime's read raises, and it goes on).
func (h *Home) loadCounts() error {
	path := h.Opts.Home.CountsFile()
	data, err := sessionsjson.ReadRegularFile(path, sessionsjson.MaxCountsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	c := &h.Counts
	c.Present = true
	if err != nil {
		c.Err = err
		if sessionsjson.ReadNeverEnds(err) || errors.Is(err, sessionsjson.ErrTooLarge) {
			return failure.Mark(failure.Data, c.Err)
		}
		return nil
	}
	c.Data = data
	c.Parsed, c.Err = sessionsjson.DecodeCounts(data)
	return nil
}

// Entry returns the primary routing entry for key, or nil.
func (h *Home) Entry(key string) *sessionsjson.Entry {
	r := &h.Routing
	if r.byKey == nil {
		r.byKey = make(map[string]*sessionsjson.Entry, len(r.Entries))
		for _, e := range r.Entries {
			r.byKey[e.Key] = e
		}
	}
	return r.byKey[key]
}

// ForeignRowsOnly reports a db-primary home whose gateway_routing rows all belong to another
// scope (a copied home): its routing index must not be written.
func (h *Home) ForeignRowsOnly() bool {
	return h.Storage == StorageDB && h.Routing.Source != SourceGatewayRouting && len(h.Routing.Foreign) > 0
}

// ReleaseRouting lets go of the decoded routing index once a plan against it is made.
func (h *Home) ReleaseRouting() {
	h.Routing.Entries, h.Routing.byKey = nil, nil
}

// Loaded returns the routing entries the runtime would load (skipped ones excluded).
func (h *Home) Loaded() []*sessionsjson.Entry {
	out := make([]*sessionsjson.Entry, 0, len(h.Routing.Entries))
	for _, e := range h.Routing.Entries {
		if e.Skip == "" {
			out = append(out, e)
		}
	}
	return out
}

// NeedDB fails (data) when the home has no state.db.
func (h *Home) NeedDB() error {
	if h.DB == nil {
		return failure.Mark(failure.Data, fmt.Errorf("no state.db at %s", h.Opts.Home.StateDB()))
	}
	return nil
}

// readError words a failed read of path: a file of the wrong type or size names itself.
func readError(path string, err error) error {
	if errors.Is(err, sessionsjson.ErrNotRegular) || errors.Is(err, sessionsjson.ErrTooLarge) {
		return err
	}
	return fmt.Errorf("read %s: %w", path, err)
}

// fileExists reports whether path exists (following symlinks).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readmeText returns the "_README" string when it is the first member of a sessions.json
// document, reading only the first tokens.
// readmeGeneration is the generation a home without state.db is read by, as LoadMirror
// settles it, from the "_README" member at the head of sessions.json alone (the routing index
// after it can be tens of megabytes): GenUnknown when the file is absent or unreadable, so
// that a newer generation's home is known as one before anything is written to it.
func readmeGeneration(path string) sessionsjson.Generation {
	f, err := sessionsjson.OpenRegularFile(path)
	if err != nil {
		return sessionsjson.GenUnknown
	}
	defer f.Close()
	head := make([]byte, readmeHeadBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return sessionsjson.GenUnknown
	}
	return sessionsjson.GenerationFromREADME(readmeText(head[:n]))
}

// readmeHeadBytes is how much of sessions.json readmeGeneration reads: the runtime's _README
// texts are under 1 KiB.
const readmeHeadBytes = 64 << 10

func readmeText(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	if key, err := dec.Token(); err != nil || key != "_README" {
		return ""
	}
	var text string
	if err := dec.Decode(&text); err != nil {
		return ""
	}
	return text
}

// Lock takes sessionctl's advisory lock on o.Home and returns its release. While another
// sessionctl writes the home it waits up to o.LockWait for the lock, then fails with
// sessionsjson.ErrLocked naming the holder (at once without LockWait); a ctx done while it
// waits ends the wait with ctx's cause. A symbolic link (or a file of the wrong type) where
// sessionctl keeps its files under <home>/sessionctl/ is a refusal: nothing is written
// through it.
func Lock(ctx context.Context, o Options) (func() error, error) {
	if err := o.Home.Validate(); err != nil {
		return nil, fmt.Errorf("home %s: %w", o.Home.Dir, err)
	}
	release, err := acquireWaiting(ctx, o.Home, o.LockWait)
	if errors.Is(err, sessionsjson.ErrUnsafeToolPath) {
		return nil, failure.Mark(failure.Refused, fmt.Errorf("refusing to write this home: %w", err))
	}
	if errors.Is(err, sessionsjson.ErrLocked) {
		return nil, fmt.Errorf("another sessionctl is writing this home: %w", err)
	}
	return release, err
}

// lockPoll is how often a waiting Lock tries the lock again.
const lockPoll = 100 * time.Millisecond

// acquireWaiting takes the tool lock, trying again every lockPoll while another sessionctl
// holds it, until wait has passed or ctx is done. The lock stays sessionsjson's: the same
// file, flock and checks on every try.
func acquireWaiting(ctx context.Context, h sessionsjson.Home, wait time.Duration) (func() error, error) {
	deadline := time.Now().Add(wait)
	for {
		release, err := sessionsjson.AcquireToolLock(h)
		if !errors.Is(err, sessionsjson.ErrLocked) || wait <= 0 {
			return release, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("%w (waited %s)", err, wait)
		}
		t := time.NewTimer(min(lockPoll, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("waiting for the tool lock: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}

// RecoverInterrupted prepares a run that writes: a transaction an earlier write left half
// done in state.db's hot rollback journal (statedb.ErrInterrupted: that run exited 6) is
// rolled back first, by SQLite's own recovery, as the gateway's next start would do. Without
// it no sessionctl write, undo included, could open the home until something else opened it
// read-write. It is left alone where the run would be refused before reading the database —
// a gateway runs (it recovers the file itself), another sessionctl holds the lock, the schema
// is one sessionctl does not write, the runtime's guards refuse (statedb.Recover) — and a
// recovery that fails is left to the open that follows, which reports it.
func RecoverInterrupted(ctx context.Context, o Options) {
	// decided before the lock: a refused run creates nothing (CanRecover is cheap without a hot journal)
	if o.Home.Validate() != nil || !statedb.CanRecover(ctx, o.Home.StateDB()) || sessionsjson.DetectGateway(o.Home).Running {
		return
	}
	o.LockWait = 0 // a run that waits for the lock does so once, on its own
	release, err := Lock(ctx, o)
	if err != nil {
		return
	}
	defer release()
	if rolled, err := statedb.Recover(ctx, o.Home.StateDB()); rolled {
		o.Warnf("state.db held a transaction its writer never finished (a write that failed or was killed left its rollback journal): rolled it back, as SQLite's recovery at the gateway's next start would, before this run")
	} else if err != nil {
		o.Warnf("state.db was left mid-transaction and could not be rolled back: %v", err)
	}
}
