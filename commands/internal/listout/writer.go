package listout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Rows is a table that prints rows as they are added (the CLI's streamed table).
type Rows interface {
	Add(cells []string) error
	Close() error
}

// Spec says how a list is written.
type Spec[T any] struct {
	Field    string               // the data member holding the list in the envelope
	Indented bool                 // JSON: items indented like the envelope, else one line each
	Table    func(io.Writer) Rows // Table: the table printing to its writer
	Cells    func(T) []string     // Table: an item's row
	// Envelope is the envelope around the list, with data and the error the list ended
	// with (nil: success).
	Envelope func(data any, err error) any
}

// Writer writes a list's items as they are given, in one format. Whatever happens, End
// leaves complete output: the JSON envelope closed and valid, the NDJSON envelope line last,
// with the error a list stopped on.
type Writer[T any] struct {
	spec    Spec[T]
	format  Format
	w       *bufio.Writer
	table   Rows
	records *Records[T]
	items   int           // JSON items written
	buf     bytes.Buffer  // one JSON item
	enc     *json.Encoder // encodes an item into buf
}

// itemIndent is the indent of an item of data.<field>: data (1) → field (2) → item (3 levels).
const itemIndent = "      "

// marker stands in for data while the envelope is encoded, so that the list can be written
// into its place instead of being held in memory.
const marker = `"\u0000stream\u0000"`

// NewWriter starts writing a list to w in format: the CSV/TSV header row, or the JSON
// envelope up to the list's first item.
func NewWriter[T any](w io.Writer, format Format, spec Spec[T]) (*Writer[T], error) {
	l := &Writer[T]{spec: spec, format: format, w: bufio.NewWriterSize(w, 64<<10)}
	var err error
	switch format {
	case Table:
		l.table = spec.Table(l.w)
	case JSON:
		err = l.startJSON()
	case CSV, TSV:
		l.records, err = NewRecords[T](l.w, format)
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Add writes one item.
func (l *Writer[T]) Add(item T) error {
	switch l.format {
	case Table:
		return l.table.Add(l.spec.Cells(item))
	case JSON:
		return l.addJSON(item)
	case NDJSON:
		return Line(l.w, item)
	}
	return l.records.Write(item)
}

// End finishes a list that ended with err (nil: complete), whose envelope has rest after
// the list in data, and returns err joined with what failed while finishing.
func (l *Writer[T]) End(err error, rest map[string]any) error {
	switch l.format {
	case Table:
		err = joinNew(err, l.table.Close())
	case JSON:
		err = l.endJSON(err, rest)
	case NDJSON:
		var data any = rest
		if err != nil { // what follows the list is not known
			data = nil
		}
		err = joinNew(err, Line(l.w, l.spec.Envelope(data, err)))
	default:
		err = joinNew(err, l.records.Flush())
	}
	return joinNew(err, l.w.Flush())
}

// joinNew joins more to err unless err already holds it: a failed write is returned again
// by every later write and flush of the same writer, and is said once.
func joinNew(err, more error) error {
	if more == nil || errors.Is(err, more) {
		return err
	}
	return errors.Join(err, more)
}

// Encode encodes v as JSON without HTML escaping, indented by two spaces or on one line,
// with a final newline.
func Encode(v any, indented bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indented {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// Line writes v as one line of JSON.
func Line(w io.Writer, v any) error {
	data, err := Encode(v, false)
	if err == nil {
		_, err = w.Write(data)
	}
	return err
}

// around encodes the envelope of err and returns the text before and after its data.
func (l *Writer[T]) around(err error) (prefix, suffix []byte, _ error) {
	doc, eerr := Encode(l.spec.Envelope(json.RawMessage(marker), err), true)
	if eerr != nil {
		return nil, nil, eerr
	}
	prefix, suffix, ok := bytes.Cut(doc, []byte(marker))
	if !ok {
		return nil, nil, errors.New("encode JSON: stream marker lost")
	}
	return prefix, suffix, nil
}

func (l *Writer[T]) startJSON() error {
	prefix, _, err := l.around(nil)
	if err != nil {
		return err
	}
	l.enc = json.NewEncoder(&l.buf)
	l.enc.SetEscapeHTML(false)
	if l.spec.Indented {
		l.enc.SetIndent(itemIndent, "  ")
	}
	fmt.Fprintf(l.w, "%s{\n    %q: [", prefix, l.spec.Field)
	return nil
}

func (l *Writer[T]) addJSON(item T) error {
	l.buf.Reset()
	if err := l.enc.Encode(item); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	if l.items++; l.items > 1 {
		l.w.WriteString(",")
	}
	l.w.WriteString("\n" + itemIndent)
	_, err := l.w.Write(bytes.TrimSuffix(l.buf.Bytes(), []byte("\n")))
	return err
}

// endJSON closes the list, writes rest's members (sorted; none after an error) and the rest
// of the envelope, which carries err.
func (l *Writer[T]) endJSON(err error, rest map[string]any) error {
	if l.items > 0 {
		l.w.WriteString("\n    ")
	}
	l.w.WriteString("]")
	if err == nil {
		err = l.writeMembers(rest)
	}
	_, suffix, serr := l.around(err)
	if serr != nil {
		return errors.Join(err, serr)
	}
	l.w.WriteString("\n  }")
	l.w.Write(suffix)
	return err
}

// writeMembers writes the data members that follow the list.
func (l *Writer[T]) writeMembers(members map[string]any) error {
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val, err := json.Marshal(members[k])
		if err != nil {
			return fmt.Errorf("encode JSON: %w", err)
		}
		fmt.Fprintf(l.w, ",\n    %q: %s", k, val)
	}
	return nil
}

// Requested is the envelope format a command line asks for (before any "--"): JSON for
// --json or --format json, NDJSON for --format ndjson, "" for none.
func Requested(args []string) Format {
	var format Format
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "--":
			return format.orNone()
		case !strings.HasPrefix(a, "-"):
		case name == "json" && (value == "" || value == "true" || value == "1"):
			return JSON
		case name == "ndjson" && (value == "" || value == "true" || value == "1"):
			return NDJSON
		case name == "format" && !hasValue && i+1 < len(args):
			format = Format(args[i+1])
		case name == "format":
			format = Format(value)
		}
	}
	return format.orNone()
}

// Envelope reports whether f prints the envelope.
func (f Format) Envelope() bool {
	return f == JSON || f == NDJSON
}

// orNone is f when it prints the envelope, else "".
func (f Format) orNone() Format {
	if f.Envelope() {
		return f
	}
	return ""
}
