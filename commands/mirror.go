package commands

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// checkMirror reports how the sessions.json mirror of a db-primary home differs from
// gateway_routing: from the comparison made while loading the view when there was one, else
// by comparing now.
func checkMirror(ctx context.Context, v *homeView) ([]Finding, error) {
	switch {
	case v.routingSrc != "gateway_routing":
		return nil, nil
	case v.mirrorCompared:
		return v.mirrorFindings, nil
	case v.doc == nil:
		return nil, nil
	}
	return compareMirror(ctx, v)
}

// compareMirror compares the decoded mirror with the gateway_routing rows of this home's
// scope, streaming the rows (only their keys are kept): routing.mirror-missing in row order,
// then routing.mirror-only and routing.mirror-differs in mirror order.
func compareMirror(ctx context.Context, v *homeView) ([]Finding, error) {
	inPrimary := make(map[string]bool, len(v.doc.Entries()))
	differs := map[string]bool{}
	var out []Finding
	err := v.db.EachRoutingEntry(ctx, v.scope, func(key string, entryJSON []byte) error {
		inPrimary[key] = true
		m := v.doc.Entry(key)
		switch {
		case m == nil:
			out = append(out, Finding{"routing.mirror-missing", sevInfo, key, "in gateway_routing but not in the sessions.json mirror: tools reading sessions.json miss it; the gateway's next save rewrites the mirror (no action needed)"})
		case !sameEntry(key, entryJSON, m, v.rules):
			differs[key] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("state.db: %w", err)
	}
	for _, m := range v.doc.Entries() {
		switch {
		case !inPrimary[m.Key]:
			out = append(out, Finding{"routing.mirror-only", sevWarn, m.Key, "only in the sessions.json mirror, not in gateway_routing: the next gateway start imports it (check it is wanted: sessionctl entries show KEY)"})
		case differs[m.Key]:
			out = append(out, Finding{"routing.mirror-differs", sevInfo, m.Key, "sessions.json mirror differs from gateway_routing: the database wins and the gateway's next save rewrites the mirror (no action needed)"})
		}
	}
	return out, nil
}

// sameEntry reports sameJSON(row.Raw(), mirror.Raw()) for a gateway_routing row (its
// entry_json) and its mirror entry m. The runtime writes both from one
// dict, with other separators and indentation, so they usually differ in whitespace only:
// then they have the same canonical form, and sameJSON holds exactly when encoding/json can
// decode their numbers. Only other pairs are decoded and compared in full.
func sameEntry(key string, rowRaw []byte, m *sessionsjson.Entry, rules sessionsjson.Rules) bool {
	if equalOutsideSpace(rowRaw, m.Text()) {
		return numbersDecode(rowRaw)
	}
	p, err := sessionsjson.DecodeEntry(key, rowRaw, rules)
	if err != nil {
		return false // not JSON: loading the rows fails the command on this row anyway
	}
	return sameJSON(p.Raw(), m.Raw())
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
