package startup

import (
	"errors"
	"io/fs"
	"math/big"
	"path/filepath"
	"regexp"

	"go.yaml.in/yaml/v3"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// ResetPolicy is the gateway's default session reset policy as the generation's
// load_gateway_config builds it (gateway/config.py SessionResetPolicy.from_dict and
// _validate_gateway_config at 52d0d671e and c2a3b9ce5): config.yaml's session_reset: mapping
// over the generation's defaults (Rules.ResetDefaultMode, at_hour 4, idle_minutes 1440).
type ResetPolicy struct {
	Mode string
	// AtHour is the daily boundary's hour (0–23, local time).
	AtHour int
	// IdleMicros is idle_minutes in microseconds.
	IdleMicros int64
}

// Reset reasons of SessionStore._should_reset.
const (
	ResetIdle  = "idle"
	ResetDaily = "daily"
)

// unknownReset matches what sessionctl does not model of the policy's sources: the legacy
// gateway.json's policies (default_reset_policy, reset_by_type, reset_by_platform) and the
// SESSION_IDLE_MINUTES / SESSION_RESET_HOUR overrides of the home's .env.
var (
	resetGatewayJSON = regexp.MustCompile(`"(default_reset_policy|reset_by_type|reset_by_platform)"\s*:`)
	resetDotEnv      = regexp.MustCompile(`(?m)^\s*(export\s+)?SESSION_(IDLE_MINUTES|RESET_HOUR)\s*=`)
)

// ReadResetPolicy reads the home's default reset policy; ok is false when the home's files
// leave it unknown to sessionctl (see unknownReset; a session_reset value from_dict or the
// policy check would raise on; a config.yaml that cannot be read).
func ReadResetPolicy(h sessionsjson.Home, rules sessionsjson.Rules) (ResetPolicy, bool) {
	p := ResetPolicy{Mode: rules.ResetDefaultMode, AtHour: 4, IdleMicros: 1440 * 60e6}
	for _, f := range []struct {
		name string
		re   *regexp.Regexp
	}{{"gateway.json", resetGatewayJSON}, {".env", resetDotEnv}} {
		data, err := sessionsjson.ReadRegularFile(filepath.Join(h.Dir, f.name), maxConfigBytes)
		if err == nil && f.re.Match(data) || err != nil && !errors.Is(err, fs.ErrNotExist) {
			return p, false
		}
	}
	data, err := sessionsjson.ReadRegularFile(filepath.Join(h.Dir, "config.yaml"), maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return p, true
	}
	if err != nil {
		return p, false
	}
	root, err := parseYAML(data)
	if root = deref(root); err != nil || root == nil || root.Kind != yaml.MappingNode {
		return p, err == nil // unparseable: the gateway's load raises or falls back; not modelled
	}
	sr := deref(mappingValue(root, "session_reset"))
	if sr == nil || sr.Kind != yaml.MappingNode || len(sr.Content) == 0 {
		return p, true // `if sr and isinstance(sr, dict)`
	}
	return p.apply(sr)
}

// apply reads the policy mapping over the defaults; ok is false for a value whose use in
// _should_reset sessionctl does not model (not a string mode, a non-integer hour, a
// non-number idle time).
func (p ResetPolicy) apply(sr *yaml.Node) (ResetPolicy, bool) {
	ok := true
	forEachPair(sr, func(k string, val *yaml.Node) {
		v := pyValue(val)
		if v == nil {
			return // `x if x is not None else default`
		}
		switch k {
		case "mode":
			s, isStr := v.(string)
			p.Mode, ok = s, ok && isStr
		case "at_hour":
			n, isInt := intValue(v)
			if p.AtHour = int(n); !isInt || n < 0 || n > 23 {
				p.AtHour, ok = 4, ok && isInt // out of 0–23: the default, with a warning
			}
		case "idle_minutes":
			n, isInt := intValue(v)
			if p.IdleMicros = n * 60e6; !isInt || n <= 0 {
				p.IdleMicros, ok = 1440*60e6, ok && isInt
			}
		}
	})
	return p, ok
}

// intValue is v as a Python int (a bool is one), ok false for any other type.
func intValue(v any) (int64, bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	case *big.Int:
		if !v.IsInt64() || v.Int64() > 1<<40 || v.Int64() < -(1<<40) {
			return 0, false
		}
		return v.Int64(), true
	}
	return 0, false
}

// Reason is SessionStore._should_reset for an entry last active at updated (naive local µs)
// and a message at now: "idle", "daily" or "" (no reset; the generation's next check, the
// freshness gate, decides).
func (p ResetPolicy) Reason(updated, now int64) string {
	if p.Mode == "idle" || p.Mode == "both" {
		if now > updated+p.IdleMicros {
			return ResetIdle
		}
	}
	if p.Mode == "daily" || p.Mode == "both" {
		const day = 86400 * int64(1e6)
		midnight := now - ((now%day)+day)%day
		boundary := midnight + int64(p.AtHour)*3600*1e6
		if now < boundary {
			boundary -= day
		}
		if updated < boundary {
			return ResetDaily
		}
	}
	return ""
}

// Starts is the first time after updated at which Reason yields a reset (0 when the mode
// never resets).
func (p ResetPolicy) Starts(updated int64) int64 {
	var first int64
	if p.Mode == "idle" || p.Mode == "both" {
		first = updated + p.IdleMicros + 1
	}
	if p.Mode == "daily" || p.Mode == "both" {
		const day = 86400 * int64(1e6)
		midnight := updated - ((updated%day)+day)%day
		boundary := midnight + int64(p.AtHour)*3600*1e6
		if boundary <= updated {
			boundary += day
		}
		if first == 0 || boundary < first {
			first = boundary
		}
	}
	return first
}
