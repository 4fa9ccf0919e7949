package listout

import (
	"strconv"
	"strings"
	"unicode"
)

// Printable is s as a person's terminal may show it: each control character (C0, DEL, C1 —
// an escape sequence, a carriage return, a line break inside a key read from a hostile home)
// written as its Go escape (\x1b, \r, \n), so that it neither drives the terminal nor splits
// a line. With lines, a line break is kept (a multi-line cell of a table).
func Printable(s string, lines bool) string {
	unsafe := func(r rune) bool { return unicode.IsControl(r) && !(lines && r == '\n') }
	if !strings.ContainsFunc(s, unsafe) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafe(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// PrintableRow is a copy of row with each cell Printable.
func PrintableRow(row []string, lines bool) []string {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = Printable(c, lines)
	}
	return out
}
