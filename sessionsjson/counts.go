package sessionsjson

import (
	"encoding/json"
	"fmt"
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
