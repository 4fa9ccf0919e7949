package sessionsjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestLoadJSON: LoadJSON loads what Python's json.loads loads — NaN, Infinity and -Infinity
// as numbers, the last of duplicate names — and rejects what it rejects.
func TestLoadJSON(t *testing.T) {
	got, err := LoadJSON([]byte(` {"_branched_from": "p", "temperature": NaN, "x": [Infinity, -Infinity, 1.5, 2, true, null, "\u00e9"], "d": 1, "d": 2} `))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"_branched_from": "p", "temperature": json.Number("NaN"),
		"x": []any{json.Number("Infinity"), json.Number("-Infinity"), json.Number("1.5"), json.Number("2"), true, nil, "é"}, "d": json.Number("2")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadJSON = %#v\nwant %#v", got, want)
	}
	if f, err := got.(map[string]any)["temperature"].(json.Number).Float64(); err != nil || f == f {
		t.Errorf("NaN reads as %v, %v", f, err)
	}
	for _, bad := range []string{"", "{", `{"a": nan}`, `{"a": 1} {}`, "\ufeff{}", `[-NaN]`, `{"a": 1,}`, strings.Repeat("9", maxIntDigits+1)} {
		if v, err := LoadJSON([]byte(bad)); err == nil {
			t.Errorf("LoadJSON(%.40q) = %v, want an error", bad, v)
		}
	}
}
