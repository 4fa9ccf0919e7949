// Package listout holds the machine formats of the list commands (sessions list, entries
// list) that need no CLI library: the --format names, CSV/TSV records whose columns are the
// JSON fields of a row, and NDJSON lines. Each writes an item as soon as it is given.
package listout

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Format is a list's output format (--format).
type Format string

// The formats.
const (
	Table  Format = "table"  // aligned columns for people
	JSON   Format = "json"   // the envelope (--json)
	NDJSON Format = "ndjson" // one item per line, then the envelope on the last line
	CSV    Format = "csv"    // RFC 4180, a header row
	TSV    Format = "tsv"    // the same separated by tabs
)

// Formats lists every format, in the order help shows them.
var Formats = []Format{Table, JSON, NDJSON, CSV, TSV}

// ParseFormat parses a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (one of %s)", s, strings.Join(names, ", "))
}

// Records writes rows of type T as CSV or TSV records: a header row of T's JSON field names,
// then one record per row with each field as Cell renders it.
type Records[T any] struct {
	w      *csv.Writer
	fields []field
}

// field is one exported struct field with its JSON name.
type field struct {
	index int
	name  string
}

// NewRecords writes the header row of T (a struct) to w and returns the writer of its rows;
// tab separates the fields for TSV, a comma for CSV.
func NewRecords[T any](w io.Writer, format Format) (*Records[T], error) {
	r := &Records[T]{w: csv.NewWriter(w), fields: jsonFields(reflect.TypeFor[T]())}
	if format == TSV {
		r.w.Comma = '\t'
	}
	header := make([]string, len(r.fields))
	for i, f := range r.fields {
		header[i] = f.name
	}
	return r, r.write(header)
}

// jsonFields lists t's fields that encoding/json encodes, under their JSON names.
func jsonFields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, field{index: i, name: name})
	}
	return out
}

// Write writes one row.
func (r *Records[T]) Write(row T) error {
	v := reflect.ValueOf(row)
	rec := make([]string, len(r.fields))
	for i, f := range r.fields {
		cell, err := Cell(v.Field(f.index))
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		rec[i] = cell
	}
	return r.write(rec)
}

// Flush writes what is buffered and reports any write error.
func (r *Records[T]) Flush() error {
	r.w.Flush()
	return r.w.Error()
}

func (r *Records[T]) write(rec []string) error {
	if err := r.w.Write(rec); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	return nil
}

// Cell renders a field's value as a CSV cell: empty for null (a nil pointer, map or slice),
// text as is, a bool as true/false, a number as JSON writes it, anything else as its compact
// JSON.
func Cell(v reflect.Value) (string, error) {
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Map || v.Kind() == reflect.Slice {
		if v.IsNil() {
			return "", nil
		}
	}
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return "", fmt.Errorf("encode JSON: %w", err)
	}
	return string(data), nil
}
