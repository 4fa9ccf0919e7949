package statedb

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"unicode/utf8"
)

// plainImage and plainChange have RowImage's and RowChange's fields without their
// MarshalJSON methods: what encoding/json writes by reflection.
type plainImage struct {
	Table   string           `json:"table"`
	Key     map[string]Value `json:"key"`
	Columns []string         `json:"columns"`
	Values  []Value          `json:"values"`
}

type plainChange struct {
	Table  string           `json:"table"`
	Key    map[string]Value `json:"key"`
	Before *plainImage      `json:"before"`
	After  *plainImage      `json:"after"`
}

func toPlain(img *RowImage) *plainImage {
	if img == nil {
		return nil
	}
	p := plainImage(*img)
	return &p
}

// checkChangeJSON verifies that c's hand-written JSON is valid, means the same as
// encoding/json's reflection output, and decodes back to c.
func checkChangeJSON(t *testing.T, c RowChange) {
	t.Helper()
	fast, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := json.Marshal(plainChange{c.Table, c.Key, toPlain(c.Before), toPlain(c.After)})
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(fast, &a); err != nil {
		t.Fatalf("invalid JSON %q: %v", fast, err)
	}
	if err := json.Unmarshal(slow, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("hand-written JSON differs from encoding/json:\n%s\n%s", fast, slow)
	}
	if !utf8.ValidString(c.Table) || !namesValid(c.Before) || !namesValid(c.After) {
		return // encoding/json replaces invalid UTF-8 in names too: no exact round trip
	}
	var back RowChange
	if err := json.Unmarshal(fast, &back); err != nil {
		t.Fatal(err)
	}
	if c.Before != nil && !imagesEqual(back.Before, c.Before) || c.After != nil && !imagesEqual(back.After, c.After) {
		t.Errorf("round trip changed the images: %s", fast)
	}
}

func namesValid(img *RowImage) bool {
	if img == nil {
		return true
	}
	for _, c := range img.Columns {
		if !utf8.ValidString(c) {
			return false
		}
	}
	return utf8.ValidString(img.Table)
}

func imagesEqual(x, y *RowImage) bool {
	if x == nil || y == nil || x.Table != y.Table || !reflect.DeepEqual(x.Columns, y.Columns) || len(x.Values) != len(y.Values) {
		return false
	}
	for i := range x.Values {
		if !x.Values[i].Equal(y.Values[i]) {
			return false
		}
	}
	return true
}

func TestRowChangeJSON(t *testing.T) {
	img := &RowImage{Table: "sessions", Key: map[string]Value{"id": TextValue("a\"b")},
		Columns: []string{"id", "n", "f", "t", "b", "z", "ctl"},
		Values: []Value{TextValue("a\"b"), IntValue(math.MinInt64), RealValue(0.1 + 0.2), TextValue("x\ny\t\\<&>\u2028"),
			BlobValue([]byte{0, 255}), NullValue(), TextValue("\x00\x01\x1f\x7f")}}
	checkChangeJSON(t, RowChange{Table: "sessions", Key: img.Key, Before: img})
	checkChangeJSON(t, RowChange{Table: "sessions", Key: img.Key, After: img})
	checkChangeJSON(t, RowChange{Table: "t", Key: map[string]Value{"rowid": IntValue(3), "b": TextValue("bad\xff")}, Before: img, After: img})
}

func FuzzRowChangeJSON(f *testing.F) {
	f.Add("sessions", "id", "héllo\n\"", []byte{0, 1}, int64(-1), 1784194200.25)
	f.Add("t\x00", "c\xff", "bad\xffutf8\u2028", []byte{}, int64(math.MaxInt64), math.Inf(1))
	f.Fuzz(func(t *testing.T, table, col, text string, blob []byte, n int64, x float64) {
		if math.IsNaN(x) {
			return // NaN is not equal to itself, and SQLite stores no NaN
		}
		key := map[string]Value{col: TextValue(text), "rowid": IntValue(n)}
		img := &RowImage{Table: table, Key: key, Columns: []string{col, "n", "x", "b"},
			Values: []Value{TextValue(text), IntValue(n), RealValue(x), BlobValue(blob)}}
		checkChangeJSON(t, RowChange{Table: table, Key: key, Before: img, After: img})
	})
}
