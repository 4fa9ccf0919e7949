package startup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// maxConfigBytes bounds the config.yaml read.
const maxConfigBytes = 4 << 20

// pyList and pyMap stand for a YAML sequence and mapping among Python values (their length
// decides their truthiness; int() and bool() need no more).
type (
	pyList struct{ n int }
	pyMap  struct{ n int }
)

// sessionsSection is config.yaml's sessions: section as the target's callers of
// maybe_auto_prune_and_vacuum read it: load_config's merge of the file over the generation's
// defaults (hermes_cli/config.py _deep_merge), then `(cfg.get("sessions") or {})`.
type sessionsSection struct {
	// values are the file's keys (Python values: nil, bool, *big.Int, float64, string,
	// pyList, pyMap); a key the file lacks takes the generation's default.
	values map[string]any
	// configured: the file sets auto_prune.
	configured bool
	// raises: `cfg.get` raises (sessions: holds a truthy value that is not a mapping).
	raises string
	// note: the file could not be read or parsed, and the runtime falls back to its defaults.
	note string
}

// readSessionsSection reads the home's config.yaml as the runtime's load_config does (PyYAML
// safe_load, YAML 1.1 scalars): absent, unreadable or unparseable, or not a mapping at the
// top, the defaults apply.
func readSessionsSection(h sessionsjson.Home) sessionsSection {
	path := filepath.Join(h.Dir, "config.yaml")
	data, err := sessionsjson.ReadRegularFile(path, maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return sessionsSection{}
	}
	if err != nil {
		return sessionsSection{note: "config.yaml unreadable (" + err.Error() + "): the runtime's defaults"}
	}
	root, err := parseYAML(data)
	if err != nil {
		return sessionsSection{note: "config.yaml does not parse (" + err.Error() + "): the runtime's defaults"}
	}
	return sessionsFrom(root)
}

// parseYAML parses one YAML document (safe_load refuses a stream of several).
func parseYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // an empty file: safe_load gives None
		}
		return nil, err
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, errors.New("expected a single document in the stream")
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// sessionsFrom takes the sessions: section from the document's root node.
func sessionsFrom(root *yaml.Node) sessionsSection {
	root = deref(root)
	if root == nil || root.Kind != yaml.MappingNode {
		return sessionsSection{} // `safe_load(f) or {}`, and a non-mapping fails the merge: defaults
	}
	node := mappingValue(root, "sessions")
	switch v := pyValue(node).(type) {
	case nil: // absent, or null (ignored over a mapping default since #58277; `or {}` before)
		return sessionsSection{}
	case pyMap:
		s := sessionsSection{values: map[string]any{}}
		forEachPair(deref(node), func(k string, val *yaml.Node) {
			s.values[k] = pyValue(val)
		})
		_, s.configured = s.values["auto_prune"]
		return s
	default:
		if !pyTruthy(v) {
			return sessionsSection{values: map[string]any{}} // `… or {}`: every .get default
		}
		return sessionsSection{raises: fmt.Sprintf("sessions: is %s, not a mapping: reading it raises", pyType(v))}
	}
}

// deref follows an alias.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// forEachPair calls fn for each string key of a mapping in order (a later duplicate wins
// when the caller stores them, as in a Python dict).
func forEachPair(m *yaml.Node, fn func(key string, val *yaml.Node)) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k, ok := pyValue(m.Content[i]).(string); ok {
			fn(k, m.Content[i+1])
		}
	}
}

// mappingValue is the value node of key in a mapping (the last occurrence), nil when absent.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	var out *yaml.Node
	forEachPair(m, func(k string, val *yaml.Node) {
		if k == key {
			out = val
		}
	})
	return out
}

// PyYAML's implicit resolvers (yaml/resolver.py, YAML 1.1), in their order.
var (
	yamlBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	yamlFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yamlInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yamlNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
)

// pyValue is the Python value PyYAML's safe_load constructs for a node (nil for a nil node).
// Timestamps stay strings: they are truthy and int() refuses them, as it refuses a datetime.
func pyValue(n *yaml.Node) any {
	n = deref(n)
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.MappingNode:
		return pyMap{len(n.Content) / 2}
	case n.Kind == yaml.SequenceNode:
		return pyList{len(n.Content)}
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0,
		n.Style&yaml.TaggedStyle != 0 && n.Tag == "!!str":
		return n.Value
	}
	return plainScalar(n.Value)
}

// plainScalar resolves and constructs a plain scalar as PyYAML does.
func plainScalar(s string) any {
	switch {
	case yamlBool.MatchString(s):
		l := strings.ToLower(s)
		return l == "yes" || l == "true" || l == "on"
	case yamlFloat.MatchString(s):
		return yamlFloatValue(s)
	case yamlInt.MatchString(s):
		return yamlIntValue(s)
	case yamlNull.MatchString(s):
		return nil
	}
	return s
}

// yamlIntValue is SafeConstructor.construct_yaml_int.
func yamlIntValue(s string) any {
	s = strings.ReplaceAll(s, "_", "")
	sign := 1
	if s[0] == '-' || s[0] == '+' {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	v := new(big.Int)
	switch {
	case s == "0":
	case strings.HasPrefix(s, "0b"):
		v.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		v.SetString(s[2:], 16)
	case s[0] == '0':
		v.SetString(s, 8)
	case strings.Contains(s, ":"):
		v = sexagesimal(s)
	default:
		v.SetString(s, 10)
	}
	return v.Mul(v, big.NewInt(int64(sign)))
}

// sexagesimal is a base-60 integer ("1:30" is 90).
func sexagesimal(s string) *big.Int {
	v := new(big.Int)
	for part := range strings.SplitSeq(s, ":") {
		d, _ := strconv.Atoi(part)
		v.Mul(v, big.NewInt(60)).Add(v, big.NewInt(int64(d)))
	}
	return v
}

// yamlFloatValue is SafeConstructor.construct_yaml_float.
func yamlFloatValue(s string) float64 {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if s[0] == '-' || s[0] == '+' {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	switch {
	case s == ".inf":
		return sign * math.Inf(1)
	case s == ".nan":
		return math.NaN()
	case strings.Contains(s, ":"):
		whole, frac, _ := strings.Cut(s, ".")
		f, _ := new(big.Float).SetInt(sexagesimal(whole)).Float64()
		fr, _ := strconv.ParseFloat("0."+frac, 64)
		return sign * (f + fr)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return sign * f
}

// pyTruthy is Python truthiness of a value PyYAML constructs.
func pyTruthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case *big.Int:
		return v.Sign() != 0
	case float64:
		return v != 0
	case string:
		return v != ""
	case pyList:
		return v.n > 0
	case pyMap:
		return v.n > 0
	}
	return true
}

// pyType names a value's Python type, for messages.
func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case *big.Int:
		return "an int"
	case float64:
		return "a float"
	case string:
		return "a string"
	case pyList:
		return "a list"
	}
	return "a mapping"
}

// pyInt is Python's int(v), saturated to ±2^53 (far beyond any retention or interval).
func pyInt(v any) (int64, error) {
	switch v := v.(type) {
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	case *big.Int:
		return saturate(new(big.Float).SetInt(v)), nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, fmt.Errorf("int(%v): cannot convert float %v to integer", v, v)
		}
		return saturate(big.NewFloat(math.Trunc(v))), nil
	case string:
		return pyIntString(v)
	}
	return 0, fmt.Errorf("int() argument must be a string or a number, not %s", pyType(v))
}

// saturate converts f to int64 within ±2^53.
func saturate(f *big.Float) int64 {
	const limit = 1 << 53
	if f.Cmp(big.NewFloat(limit)) > 0 {
		return limit
	}
	if f.Cmp(big.NewFloat(-limit)) < 0 {
		return -limit
	}
	n, _ := f.Int64()
	return n
}

// pyIntDigits is what Python's int(str) accepts: an optional sign and decimal digits, single
// underscores between digits, surrounding whitespace.
var pyIntDigits = regexp.MustCompile(`^[-+]?[0-9](?:_?[0-9])*$`)

// pyIntString is Python's int(s).
func pyIntString(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if !pyIntDigits.MatchString(t) {
		return 0, fmt.Errorf("invalid literal for int() with base 10: %q", s)
	}
	v, _ := new(big.Int).SetString(strings.ReplaceAll(t, "_", ""), 10)
	return saturate(new(big.Float).SetInt(v)), nil
}

// autoPruneSettings are the arguments maybe_auto_prune_and_vacuum's callers pass.
type autoPruneSettings struct {
	enabled                         bool
	retentionDays, minIntervalHours int64
	minVacuumIntervalDays           int64
	vacuum                          bool
	// raises: converting a value raises, and the call does not happen.
	raises string
}

// settings reads the callers' arguments from the section under the generation's
// maintenance rules: auto_prune's truthiness, int() of the numbers, bool() of
// vacuum_after_prune (gateway/run.py GatewayRunner.__init__ and cli.py
// _run_state_db_auto_maintenance at 3b750715a … 481156139).
func (s sessionsSection) settings(m sessionsjson.Maintenance) autoPruneSettings {
	d := m.Defaults
	get := func(key string, def any) any {
		if v, ok := s.values[key]; ok {
			return v
		}
		return def
	}
	out := autoPruneSettings{enabled: pyTruthy(get("auto_prune", d.AutoPrune)), raises: s.raises,
		retentionDays: d.RetentionDays, minIntervalHours: d.MinIntervalHours, minVacuumIntervalDays: d.MinVacuumIntervalDays}
	if out.raises != "" {
		out.enabled = false
		return out
	}
	ints := []struct {
		key string
		def int64
		dst *int64
		use bool
	}{
		{"retention_days", d.RetentionDays, &out.retentionDays, true},
		{"min_interval_hours", d.MinIntervalHours, &out.minIntervalHours, true},
		{"min_vacuum_interval_days", d.MinVacuumIntervalDays, &out.minVacuumIntervalDays, m.VacuumThrottle},
	}
	for _, f := range ints {
		if !f.use {
			continue
		}
		n, err := pyInt(get(f.key, big.NewInt(f.def)))
		switch {
		case err == nil:
			*f.dst = n
		case out.enabled && out.raises == "": // int() runs only when auto_prune is set
			out.raises = "sessions." + f.key + ": " + err.Error()
		}
	}
	out.vacuum = pyTruthy(get("vacuum_after_prune", d.VacuumAfterPrune))
	return out
}
