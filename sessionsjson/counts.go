package sessionsjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
)

// Counts is the .restart_failure_counts file: session key -> consecutive restarts while active.
type Counts struct {
	// Keys are the keys in file order (Python dict order).
	Keys []string
	// Values are the raw JSON values by key.
	Values map[string]json.RawMessage
}

// DecodeCounts parses the counts file. Invalid JSON or a top level that is not an object is an
// ErrCorrupt error (the runtime's startup check then leaves the file in place).
func DecodeCounts(data []byte) (*Counts, error) {
	if err := validJSON(data); err != nil {
		return nil, fmt.Errorf("restart failure counts: %w", err)
	}
	s := scanner{data: data}
	s.ws()
	if s.peek() != '{' {
		return nil, fmt.Errorf("restart failure counts: top level is %s, not an object: %w", topLevelKind(data[s.pos:]), ErrCorrupt)
	}
	c := &Counts{Values: map[string]json.RawMessage{}}
	for _, f := range dedupeFields(objectFields(data[s.pos:], 0)) {
		c.Keys = append(c.Keys, f.Name)
		c.Values[f.Name] = f.Raw
	}
	return c, nil
}

// Len returns the number of keys.
func (c *Counts) Len() int {
	return len(c.Keys)
}

// Int returns the value of key when it is a JSON integer (not a string, float or boolean).
func (c *Counts) Int(key string) (int64, bool) {
	raw, ok := c.Values[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// CountComparison is what the runtime's stuck-loop comparison makes of one count.
type CountComparison int

// Outcomes of CompareCount.
const (
	// CountBelow: the value compares, below the threshold (NaN compares below anything).
	CountBelow CountComparison = iota
	// CountReaches: the value compares at or over the threshold.
	CountReaches
	// CountRaises: the comparison raises TypeError (a string, null, an array or an object).
	CountRaises
)

// CompareCount is the runtime's stuck-loop test of one .restart_failure_counts value,
// `v >= self._STUCK_LOOP_THRESHOLD` in GatewayRunner._suspend_stuck_loop_sessions (upstream
// gateway/run.py, 6c8930643704c1590d528ca18520d18defe7f4aa, 2026-04-14; unchanged through
// 9a75ff049 of 2026-08-22), applied to what Python's json.loads returns for raw and an int
// threshold:
//
//   - an integer is an int, compared exactly (however long);
//   - a number with a fraction or an exponent is a float: 3.0, 3.5 and 1e23 reach 3, and so
//     does 2.9999999999999999 (it is the float 3.0); 1e999 overflows to inf and reaches it;
//   - NaN, Infinity and -Infinity are floats: inf reaches, NaN and -inf do not;
//   - true and false are the ints 1 and 0 (bool is an int), so they do not reach 3;
//   - a string, null, an array or an object makes `>=` raise TypeError.
//
// The comparisons run in one list comprehension before any session is suspended, and
// start() catches what it raises: so one raising value anywhere in the file means that start
// suspends nothing and leaves the file as it is (see Counts.ComparisonRaises).
func CompareCount(raw []byte, threshold int64) CountComparison {
	raw = bytes.Trim(raw, jsonSpace)
	if len(raw) == 0 {
		return CountRaises
	}
	var cmp int
	switch raw[0] {
	case '"', 'n', '[', '{':
		return CountRaises
	case 't':
		cmp = big.NewInt(1).Cmp(big.NewInt(threshold))
	case 'f':
		cmp = big.NewInt(0).Cmp(big.NewInt(threshold))
	default:
		if n, ok := jsonInt(raw); ok {
			cmp = n.Cmp(big.NewInt(threshold))
			break
		}
		f := jsonFloat(raw)
		if math.IsNaN(f) {
			return CountBelow
		}
		cmp = big.NewFloat(f).Cmp(new(big.Float).SetInt64(threshold)) // exact, as in Python
	}
	if cmp >= 0 {
		return CountReaches
	}
	return CountBelow
}

// ReachesThreshold reports whether the count of key reaches threshold by the runtime's
// comparison (CompareCount). It says nothing of whether that start suspends anything: see
// ComparisonRaises.
func (c *Counts) ReachesThreshold(key string, threshold int64) bool {
	raw, ok := c.Values[key]
	return ok && CompareCount(raw, threshold) == CountReaches
}

// ComparisonRaises reports whether the runtime's stuck-loop comparison raises on this file,
// and the first key (in file order) whose value makes it raise: then its start suspends no
// session at all and leaves the file in place.
func (c *Counts) ComparisonRaises(threshold int64) (string, bool) {
	for _, k := range c.Keys {
		if CompareCount(c.Values[k], threshold) == CountRaises {
			return k, true
		}
	}
	return "", false
}

// Without returns a copy without the given keys.
func (c *Counts) Without(keys ...string) *Counts {
	out := &Counts{Values: map[string]json.RawMessage{}}
	for _, k := range c.Keys {
		if !slices.Contains(keys, k) {
			out.Keys = append(out.Keys, k)
			out.Values[k] = c.Values[k]
		}
	}
	return out
}

// Encode returns the file as Python json.dumps(counts) writes it: {"a": 1, "b": 3}.
func (c *Counts) Encode() []byte {
	fields := make([]Field, len(c.Keys))
	for i, k := range c.Keys {
		fields[i] = Field{Name: k, Raw: c.Values[k]}
	}
	return dumpsFormatter(true).object(nil, fields, 0)
}
