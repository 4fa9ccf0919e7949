// Package fanout joins the output of several runs, one per home (--all-profiles), into one
// stream: a JSON array of their envelopes, one compact envelope per line (NDJSON), or one
// titled section per home for people. It writes only to the writer it is given.
package fanout

import (
	"bytes"
	"io"
)

// Form is how the runs' documents are joined.
type Form int

// The forms of a joined stream.
const (
	Sections Form = iota // people: each run's output under a title line, blank lines between
	Array                // --json: one JSON array of the envelopes
	Lines                // --ndjson: each envelope compacted onto one line
)

// Stream joins the output of successive runs onto w.
type Stream struct {
	w    io.Writer
	form Form
	n    int // parts begun
	err  error
}

// New starts a stream of form onto w.
func New(w io.Writer, form Form) *Stream {
	return &Stream{w: w, form: form}
}

// Next returns the writer of the next run's output; title heads its section (Sections only).
// Nothing is written for a run that writes nothing, not even its title or separator.
func (s *Stream) Next(title string) io.Writer {
	var lead string
	switch {
	case s.form == Sections && title == "":
	case s.form == Sections && s.n > 0:
		lead = "\n" + title + "\n"
	case s.form == Sections:
		lead = title + "\n"
	case s.form == Array && s.n > 0:
		lead = ",\n"
	case s.form == Array:
		lead = "[\n"
	case s.n > 0:
		lead = "\n"
	}
	return &part{s: s, lead: lead, compact: s.form == Lines, trim: s.form == Array}
}

// End finishes the stream: the array's closing bracket (an empty array when no run wrote),
// the last line's newline; it returns the first write error.
func (s *Stream) End() error {
	switch {
	case s.form == Array && s.n == 0:
		s.write([]byte("[]\n"))
	case s.form == Array:
		s.write([]byte("\n]\n"))
	case s.form == Lines && s.n > 0:
		s.write([]byte("\n"))
	}
	return s.err
}

func (s *Stream) write(p []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(p)
	}
}

// part is one run's writer: it writes the lead before its first byte, holds back trailing
// newlines (JSON forms: the separators place them) and, for Lines, drops the white space
// between JSON tokens.
type part struct {
	s        *Stream
	lead     string
	started  bool
	compact  bool
	trim     bool
	held     int // trailing newlines not yet written
	inString bool
	escaped  bool
}

func (p *part) Write(b []byte) (int, error) {
	n := len(b)
	if p.compact {
		b = p.squeeze(b)
	}
	if p.trim {
		body := bytes.TrimRight(b, "\n")
		trailing := len(b) - len(body)
		if len(body) == 0 {
			p.held += trailing
			return n, p.s.err
		}
		b = append(bytes.Repeat([]byte("\n"), p.held), body...)
		p.held = trailing
	}
	if len(b) == 0 {
		return n, p.s.err
	}
	if !p.started {
		p.started = true
		p.s.n++
		p.s.write([]byte(p.lead))
	}
	p.s.write(b)
	return n, p.s.err
}

// squeeze drops the white space outside JSON strings (the document's indentation), keeping
// what is inside them, across calls.
func (p *part) squeeze(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		switch {
		case p.escaped:
			p.escaped = false
		case p.inString && c == '\\':
			p.escaped = true
		case c == '"':
			p.inString = !p.inString
		case !p.inString && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			continue
		}
		out = append(out, c)
	}
	return out
}
