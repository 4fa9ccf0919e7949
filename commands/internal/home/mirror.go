package home

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// MirrorDiffKind is how one key of the sessions.json mirror differs from gateway_routing.
type MirrorDiffKind int

// Kinds of mirror differences.
const (
	// MirrorMissing: in gateway_routing, not in the mirror.
	MirrorMissing MirrorDiffKind = iota
	// MirrorOnly: in the mirror, not in gateway_routing.
	MirrorOnly
	// MirrorDiffers: in both, with different content.
	MirrorDiffers
)

// MirrorDiff is one key on which the mirror and gateway_routing disagree.
type MirrorDiff struct {
	Kind MirrorDiffKind
	Key  string
}

// CompareMirror compares the decoded mirror with the gateway_routing rows of this home's
// scope, streaming the rows (only their keys are kept): MirrorMissing in row order, then
// MirrorOnly and MirrorDiffers in mirror order.
func (h *Home) CompareMirror(ctx context.Context) ([]MirrorDiff, error) {
	doc := h.Mirror.Doc
	inPrimary := make(map[string]bool, len(doc.Entries()))
	differs := map[string]bool{}
	var out []MirrorDiff
	err := h.DB.EachRoutingEntry(ctx, h.Routing.Scope, func(key string, entryJSON []byte) error {
		inPrimary[key] = true
		m := doc.Entry(key)
		switch {
		case m == nil:
			out = append(out, MirrorDiff{MirrorMissing, key})
		case !sameEntry(key, entryJSON, m, h.Rules):
			differs[key] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	for _, m := range doc.Entries() {
		switch {
		case !inPrimary[m.Key]:
			out = append(out, MirrorDiff{MirrorOnly, m.Key})
		case differs[m.Key]:
			out = append(out, MirrorDiff{MirrorDiffers, m.Key})
		}
	}
	return out, nil
}

// JSONSafe is raw as a JSON value, or as a string holding its text when it is not standard
// JSON: an entry the runtime wrote with NaN or Infinity (Python's json reads and writes them)
// is shown as its text instead of failing a JSON document. nil stays nil.
func JSONSafe(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	if json.Valid(raw) {
		return raw
	}
	return string(raw)
}

// SameJSON reports whether two JSON texts hold the same value as the runtime's json.loads
// reads them (object member order and whitespace aside; NaN and Infinity are values; see
// sessionsjson.SameValue); nil equals only nil. A text that is not JSON (a gateway_routing
// row the runtime skips, kept byte for byte) equals only the same bytes.
func SameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if bytes.Equal(a, b) {
		return true
	}
	return sessionsjson.SameValue(a, b)
}

// sameEntry reports SameJSON(row.Raw(), mirror.Raw()) for a gateway_routing row (its
// entry_json) and its mirror entry m. The runtime writes both from one dict, with other
// separators and indentation, so they usually differ in whitespace only: then they hold the
// same value. Only other pairs are decoded and compared in full.
func sameEntry(key string, rowRaw []byte, m *sessionsjson.Entry, rules sessionsjson.Rules) bool {
	if equalOutsideSpace(rowRaw, m.Text()) {
		return true
	}
	p, err := sessionsjson.DecodeEntry(key, rowRaw, rules)
	if err != nil {
		return false // not JSON: the runtime skips the row; the mirror holds something else
	}
	return SameJSON(p.Raw(), m.Raw())
}

// equalOutsideSpace reports whether two valid JSON texts are equal but for whitespace
// between tokens (between tokens of valid JSON it never separates two scalars, so dropping
// it cannot join two tokens into one).
func equalOutsideSpace(a, b []byte) bool {
	i, j := 0, 0
	inString, escaped := false, false
	for {
		if !inString {
			i, j = skipJSONSpace(a, i), skipJSONSpace(b, j)
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		c := a[i]
		if c != b[j] {
			return false
		}
		i, j = i+1, j+1
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
	}
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t') {
		i++
	}
	return i
}
