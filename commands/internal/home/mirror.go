package home

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

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

// SameJSON reports whether two JSON texts hold the same value (object member order and
// whitespace aside); nil equals only nil.
func SameJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// sameEntry reports SameJSON(row.Raw(), mirror.Raw()) for a gateway_routing row (its
// entry_json) and its mirror entry m. The runtime writes both from one
// dict, with other separators and indentation, so they usually differ in whitespace only:
// then they have the same canonical form, and SameJSON holds exactly when encoding/json can
// decode their numbers. Only other pairs are decoded and compared in full.
func sameEntry(key string, rowRaw []byte, m *sessionsjson.Entry, rules sessionsjson.Rules) bool {
	if equalOutsideSpace(rowRaw, m.Text()) {
		return numbersDecode(rowRaw)
	}
	p, err := sessionsjson.DecodeEntry(key, rowRaw, rules)
	if err != nil {
		return false // not JSON: loading the rows fails the command on this row anyway
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

// numbersDecode reports whether encoding/json can decode every number of a valid JSON text
// into a float64 (it fails on those out of range, such as 1e400 or a 400-digit integer).
func numbersDecode(data []byte) bool {
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped, inString = c == '\\', c != '"'
		case c == '"':
			inString = true
		case c == '-' || (c >= '0' && c <= '9'):
			end := numberEnd(data, i)
			if !floatDecodes(data[i:end]) {
				return false
			}
			i = end - 1
		}
	}
	return true
}

// numberEnd returns the end of the JSON number starting at i.
func numberEnd(data []byte, i int) int {
	for i < len(data) && (data[i] == '-' || data[i] == '+' || data[i] == '.' || data[i] == 'e' || data[i] == 'E' || (data[i] >= '0' && data[i] <= '9')) {
		i++
	}
	return i
}

// floatDecodes reports whether strconv.ParseFloat (what encoding/json uses) accepts the
// number; short ones without an exponent always fit.
func floatDecodes(num []byte) bool {
	if len(num) <= 15 && !bytes.ContainsAny(num, "eE") {
		return true
	}
	_, err := strconv.ParseFloat(string(num), 64)
	return err == nil
}
