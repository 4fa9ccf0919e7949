package repair

import "encoding/json"

// JSONSafe is raw as a JSON value, or as a string holding its text when it is not standard
// JSON: an entry the runtime wrote with NaN or Infinity (Python's json reads and writes them)
// is shown as its text instead of failing the envelope.
func JSONSafe(raw json.RawMessage) any {
	if raw == nil || json.Valid(raw) {
		return raw
	}
	return string(raw)
}

// JSONSafeChanges returns changes (an empty slice for nil) with every raw before/after image
// made JSON-safe.
func JSONSafeChanges(changes []Change) []Change {
	out := make([]Change, len(changes))
	for i, c := range changes {
		if raw, ok := c.Before.(json.RawMessage); ok {
			c.Before = JSONSafe(raw)
		}
		if raw, ok := c.After.(json.RawMessage); ok {
			c.After = JSONSafe(raw)
		}
		out[i] = c
	}
	return out
}
