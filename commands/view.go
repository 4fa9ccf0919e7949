package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// Storage models of the routing index.
const (
	storageJSON = "json-primary"
	storageDB   = "db-primary"
)

// homeView is everything a command reads from one home, read-only.
type homeView struct {
	opts    *options
	gateway sessionsjson.GatewayStatus

	db     *statedb.DB // nil when the home has no state.db
	schema statedb.Schema

	gen     sessionsjson.Generation
	rules   sessionsjson.Rules
	storage string
	scope   string // resolved sessions dir: the gateway_routing scope of this home

	doc        *sessionsjson.Document // nil when sessions.json is absent, or a dropped mirror
	docErr     error                  // set instead of failing when loading tolerantly
	asciiOnly  bool
	routing    []*sessionsjson.Entry // the primary routing index, in order
	routingSrc string
	byKey      map[string]*sessionsjson.Entry // index of routing, built on first lookup
	foreign    map[string]int                 // db-primary: rows per other scope
	counts     *sessionsjson.Counts           // nil when absent or unparseable
	countsErr  error
	countsRaw  bool // the counts file exists
	countsData []byte
	cleanShut  bool

	mirrorCompared bool      // the mirror was compared with gateway_routing while loading
	mirrorFindings []Finding // the routing.mirror-* findings of that comparison
}

// mirrorNeed says what a command needs from sessions.json on a db-primary home, where the
// routing index is gateway_routing and the file is only its mirror. Holding both copies of a
// large routing index would double the memory of every command.
type mirrorNeed int

const (
	// mirrorKeep keeps the decoded mirror: routing writes update it and undo restores it.
	mirrorKeep mirrorNeed = iota
	// mirrorCompare compares the mirror with the gateway_routing rows (check), streaming the
	// rows, then drops it before the rows are decoded and held.
	mirrorCompare
	// mirrorDrop decodes the mirror only to report an unreadable file, then drops it (reads).
	mirrorDrop
)

// loadView opens the home read-only, keeping the sessions.json mirror of a db-primary home
// (what writers need). With tolerant set, an unreadable sessions.json or counts file is
// recorded on the view (for check) instead of failing the command.
func loadView(ctx context.Context, o *options, tolerant bool) (*homeView, error) {
	return loadViewFor(ctx, o, tolerant, mirrorKeep)
}

// loadViewFor is loadView with the mirror handled as mirror says. sessions.json is decoded
// in every case, so an unreadable file fails (or, tolerant, is reported) the same way.
func loadViewFor(ctx context.Context, o *options, tolerant bool, mirror mirrorNeed) (*homeView, error) {
	if err := o.home.Validate(); err != nil {
		return nil, fmt.Errorf("home %s: %w", o.home.Dir, err)
	}
	v := &homeView{opts: o, gateway: sessionsjson.DetectGateway(o.home)}
	scope, err := sessionsjson.ResolvedSessionsDir(o.home)
	if err != nil {
		return nil, fmt.Errorf("resolve sessions dir: %w", err)
	}
	v.scope = scope
	if err := v.openDB(ctx); err != nil {
		return nil, err
	}
	if err := v.loadSessionsJSON(); err != nil {
		if !tolerant {
			v.close()
			return nil, err
		}
		v.docErr = err
	}
	if err := v.loadRouting(ctx, mirror); err != nil {
		v.close()
		return nil, err
	}
	v.loadCounts()
	v.cleanShut = fileExists(o.home.CleanShutdownFile())
	return v, nil
}

// loadDBView opens only what the state.db repairs need: the gateway verdict and state.db,
// not the routing index (which can be tens of megabytes).
func loadDBView(ctx context.Context, o *options) (*homeView, error) {
	if err := o.home.Validate(); err != nil {
		return nil, fmt.Errorf("home %s: %w", o.home.Dir, err)
	}
	v := &homeView{opts: o, gateway: sessionsjson.DetectGateway(o.home)}
	if err := v.openDB(ctx); err != nil {
		return nil, err
	}
	v.rules = sessionsjson.RulesFor(v.gen)
	v.storage = storageJSON
	if v.db != nil && v.schema.HasGatewayRouting {
		v.storage = storageDB
	}
	return v, nil
}

func (v *homeView) close() {
	if v.db != nil {
		_ = v.db.Close()
	}
}

func (v *homeView) openDB(ctx context.Context) error {
	path := v.opts.home.StateDB()
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		v.gen = sessionsjson.GenUnknown
		return nil
	}
	db, err := statedb.OpenReadOnly(ctx, path)
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	v.db = db
	v.schema = db.Schema()
	v.gen = sessionsjson.GenerationForSchema(v.schema.Version)
	return nil
}

func (v *homeView) loadSessionsJSON() error {
	path := v.opts.home.SessionsJSON()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		v.settleRules(nil)
		return nil
	}
	if err != nil {
		v.settleRules(nil)
		return fmt.Errorf("read %s: %w", path, wrapReadError(err))
	}
	v.asciiOnly = sessionsjson.DetectASCIIOnly(data)
	v.settleRules(data)
	doc, err := sessionsjson.Decode(data, v.rules)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	v.doc = doc
	return nil
}

// settleRules picks the generation's rules; without a state.db the _README text decides.
func (v *homeView) settleRules(data []byte) {
	if v.gen == sessionsjson.GenUnknown && data != nil {
		v.gen = sessionsjson.GenerationFromREADME(readmeText(data))
	}
	v.rules = sessionsjson.RulesFor(v.gen)
}

func (v *homeView) loadRouting(ctx context.Context, mirror mirrorNeed) error {
	v.storage = storageJSON
	v.routingSrc = "sessions.json"
	if v.doc != nil {
		v.routing = v.doc.Entries()
	}
	if v.db == nil || !v.schema.HasGatewayRouting {
		return nil
	}
	v.storage = storageDB
	scopes, err := v.db.RoutingScopes(ctx)
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	v.foreign = map[string]int{}
	for scope, n := range scopes {
		if scope != v.scope {
			v.foreign[scope] = n
		}
	}
	if scopes[v.scope] == 0 && len(v.foreign) == 0 {
		v.routingSrc = "sessions.json (no gateway_routing rows yet: imported at the next gateway start)"
		return nil
	}
	v.routing = nil
	if _, ok := scopes[v.scope]; !ok {
		v.routingSrc = "none for this home (gateway_routing rows belong to another scope)"
		v.dropMirror(mirror)
		return nil
	}
	if mirror == mirrorCompare && v.doc != nil {
		if v.mirrorFindings, err = compareMirror(ctx, v); err != nil {
			return err
		}
		v.mirrorCompared = true
	}
	v.dropMirror(mirror)
	return v.loadRoutingRows(ctx, scopes[v.scope])
}

// dropMirror lets go of the decoded sessions.json mirror unless the command keeps it.
func (v *homeView) dropMirror(mirror mirrorNeed) {
	if mirror != mirrorKeep {
		v.doc = nil
	}
}

// loadRoutingRows decodes the n gateway_routing rows of this home's scope as they stream in.
func (v *homeView) loadRoutingRows(ctx context.Context, n int) error {
	v.routing = make([]*sessionsjson.Entry, 0, n)
	var decodeErr error
	err := v.db.EachRoutingEntry(ctx, v.scope, func(key string, entryJSON []byte) error {
		e, err := sessionsjson.DecodeEntry(key, entryJSON, v.rules)
		if err != nil {
			decodeErr = fmt.Errorf("gateway_routing row %q: %w", key, err)
			return decodeErr
		}
		v.routing = append(v.routing, e)
		return nil
	})
	if decodeErr != nil {
		return decodeErr
	}
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	v.routingSrc = "gateway_routing"
	return nil
}

func (v *homeView) loadCounts() {
	data, err := os.ReadFile(v.opts.home.CountsFile())
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	v.countsRaw = true
	if err != nil {
		v.countsErr = err
		return
	}
	v.countsData = data
	v.counts, v.countsErr = sessionsjson.DecodeCounts(data)
}

// entry returns the primary routing entry for key, or nil.
func (v *homeView) entry(key string) *sessionsjson.Entry {
	if v.byKey == nil {
		v.byKey = make(map[string]*sessionsjson.Entry, len(v.routing))
		for _, e := range v.routing {
			v.byKey[e.Key] = e
		}
	}
	return v.byKey[key]
}

// foreignRowsOnly reports a db-primary home whose gateway_routing rows all belong to another
// scope (a copied home): its routing index must not be written.
func (v *homeView) foreignRowsOnly() bool {
	return v.storage == storageDB && v.routingSrc != "gateway_routing" && len(v.foreign) > 0
}

// releaseRouting lets go of the decoded routing index once a plan against it is made.
func (v *homeView) releaseRouting() {
	v.routing, v.byKey = nil, nil
}

// loaded reports the routing entries the runtime would load (skipped ones excluded).
func (v *homeView) loaded() []*sessionsjson.Entry {
	out := make([]*sessionsjson.Entry, 0, len(v.routing))
	for _, e := range v.routing {
		if e.Skip == "" {
			out = append(out, e)
		}
	}
	return out
}

func wrapReadError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "is a directory" {
		return fmt.Errorf("is a directory, not a file: %w", sessionsjson.ErrCorrupt)
	}
	return err
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func relToHome(o *options, path string) string {
	if rel, err := filepath.Rel(o.home.Dir, path); err == nil {
		return rel
	}
	return path
}

// readmeText returns the "_README" string when it is the first member of a sessions.json
// document, reading only the first tokens.
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
