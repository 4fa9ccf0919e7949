package home

import (
	"context"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// RoutingUnder reads the routing index as the store of the runtime whose rules are given
// loads it on this home (an upgrade or a rollback): sessions.json alone under a json-primary
// generation; under a db-primary one (Rules.GatewayRouting) the gateway_routing rows of this
// home's scope, then the sessions.json entries of the keys no row loads, or all of
// sessions.json when the file has no rows of this scope (gateway/session.py
// _ensure_loaded_locked at c2a3b9ce5). Under a db-primary generation Routing.Legacy marks
// every entry taken from sessions.json. h is not changed.
//
// mirrorErr is why sessions.json could not be read or decoded: the runtime's load of it
// fails, and none of its entries load; the rows still do.
func (h *Home) RoutingUnder(ctx context.Context, rules sessionsjson.Rules) (r Routing, mirrorErr error, err error) {
	c := &Home{Opts: h.Opts, DB: h.DB, Schema: h.Schema, Gen: rules.Generation, Rules: rules}
	c.Routing.Scope = h.Routing.Scope
	if rules.GatewayRouting && c.DB != nil && c.Schema.HasGatewayRouting {
		err := c.loadRoutingFirst(ctx, Survey, c.loadMirrorUnder)
		if mirrorErr = c.Mirror.Err; err != nil {
			return Routing{}, mirrorErr, err
		}
	} else {
		mirrorErr = c.loadMirrorUnder()
	}
	r = c.Routing
	if r.Source == SourceGatewayRouting {
		return r, mirrorErr, nil
	}
	if c.Mirror.Doc == nil && mirrorErr == nil { // only rows of other scopes: the store imports the file
		mirrorErr = c.loadMirrorUnder()
	}
	r.Entries = nil
	if c.Mirror.Doc != nil {
		r.Entries = c.Mirror.Doc.Entries()
	}
	if !rules.GatewayRouting {
		r.Source = SourceJSON
		return r, mirrorErr, nil
	}
	r.Source, r.Legacy = SourceNotImported, make(map[string]bool, len(r.Entries))
	for _, e := range r.Entries {
		r.Legacy[e.Key] = true
	}
	return r, mirrorErr, nil
}

// loadMirrorUnder reads and decodes sessions.json under h.Rules (as they are: the rules are
// not settled from the file).
func (h *Home) loadMirrorUnder() error {
	data, err := h.readMirror()
	if err != nil || data == nil {
		return err
	}
	return h.decodeMirror(data)
}
