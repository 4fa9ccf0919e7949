package sessionsjson

import "encoding/json"

// LoadJSON decodes one JSON text as the runtime's json.loads does: standard JSON plus the
// constants NaN, Infinity and -Infinity (parse_constant), duplicate names keeping the last
// value, no BOM, UTF-8 only, integers of at most maxIntDigits digits, nesting of at most
// maxDepth levels. It is sessionctl's one reader of a JSON value the runtime reads with
// json.loads (model_config, the repair ledger, gateway.pid, sessions.json members), so that
// a text loads here exactly when it loads there.
//
// An object decodes to map[string]any, an array to []any, a string to string, true and
// false to bool, null to nil, and a number to a json.Number holding its text as written
// ("NaN", "Infinity" and "-Infinity" included: its Float64 method reads them).
func LoadJSON(data []byte) (any, error) {
	if err := validJSON(data); err != nil {
		return nil, err
	}
	s := scanner{data: data}
	start, end, _ := s.value()
	return loadValue(data[start:end]), nil
}

// loadValue decodes a valid raw JSON value (LoadJSON's types).
func loadValue(raw []byte) any {
	switch raw[0] {
	case '{':
		out := map[string]any{}
		visitObject(raw, func(k, v []byte) { out[decodeString(k)] = loadValue(v) })
		return out
	case '[':
		items := arrayItems(raw)
		out := make([]any, len(items))
		for i, item := range items {
			out[i] = loadValue(item)
		}
		return out
	case '"':
		return decodeString(raw)
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	}
	return json.Number(raw)
}
