package repair

import (
	"encoding/json"
	"fmt"
)

// ShowValue is a change's before or after value as a plan's table shows it: compact JSON,
// cut to 60 characters.
func ShowValue(v any) string {
	if v == nil {
		return "null"
	}
	if raw, ok := v.(json.RawMessage); ok {
		return truncate(string(raw), 60)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(data), 60)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
