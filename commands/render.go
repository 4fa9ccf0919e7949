package commands

import (
	"bytes"
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/urfave/cli/v2"
)

// tableOptions are the options of every table: aligned, borderless, left-aligned, and wrap
// (what a cell wider than its column does).
func tableOptions(wrap int) []tablewriter.Option {
	return []tablewriter.Option{
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(wrap),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	}
}

// renderTable prints an aligned, borderless table, no line ending in spaces.
func renderTable(w io.Writer, header []string, rows [][]string) error {
	out := &trimmedLines{w: w}
	for i := range rows { // a hostile home's key or value never drives the terminal
		rows[i] = listout.PrintableRow(rows[i], true)
	}
	table := tablewriter.NewTable(out, tableOptions(tw.WrapNone)...)
	table.Header(toAny(header)...)
	if err := table.Bulk(rows); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	if err := table.Render(); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	return out.Flush()
}

// trimmedLines passes what is written on line by line, each without the spaces it ends in
// (tablewriter pads the last column to its width).
type trimmedLines struct {
	w    io.Writer
	line []byte // the line being written, up to its newline
}

// Write passes on every complete line of p and keeps the rest.
func (t *trimmedLines) Write(p []byte) (int, error) {
	n := len(p)
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.line = append(t.line, p...)
			return n, nil
		}
		t.line = append(t.line, p[:i]...)
		p = p[i+1:]
		if err := t.emit(); err != nil {
			return 0, err
		}
	}
}

// Flush passes on the line being written, if any, ended with a newline.
func (t *trimmedLines) Flush() error {
	if len(t.line) == 0 {
		return nil
	}
	return t.emit()
}

// emit passes on the line being written, trimmed, with its newline.
func (t *trimmedLines) emit() error {
	_, err := t.w.Write(append(bytes.TrimRight(t.line, " "), '\n'))
	t.line = t.line[:0]
	return err
}

// streamSample is how many rows a streamed table reads before it fixes its column widths.
const streamSample = 100

// streamTable prints a table through tablewriter's streaming mode: rows are printed as they
// are added, never all held. The column widths are those of the header and the first
// streamSample rows; a wider cell after them is cut with "…". The rows after the sample are
// rendered on several tables with the same widths at once (listout.Ordered).
type streamTable struct {
	w      *trimmedLines
	header []string
	sample [][]string // the rows before the widths are fixed; nil after
	table  *tablewriter.Table
	widths tw.Mapper[int, int]
	rest   *listout.Ordered
}

// tableOf is a streamed table with header, for listout.Spec.
func tableOf(header ...string) func(io.Writer) listout.Rows {
	return func(w io.Writer) listout.Rows { return &streamTable{w: &trimmedLines{w: w}, header: header} }
}

// Add prints row, or keeps it until the sample is complete.
func (s *streamTable) Add(row []string) error {
	row = listout.PrintableRow(row, false)
	if s.table == nil {
		if s.sample = append(s.sample, row); len(s.sample) < streamSample {
			return nil
		}
		return s.start()
	}
	return s.rest.Add(row)
}

// start fixes the widths from the sample, prints the header and the sample.
func (s *streamTable) start() error {
	s.fixWidths()
	var err error
	if s.table, err = s.newTable(s.w); err != nil {
		return err
	}
	s.rest = listout.NewOrdered(s.w, func(w io.Writer) (listout.RowFunc, error) {
		t, err := s.newTable(w)
		if err != nil {
			return nil, err
		}
		return func(row []string) error {
			if err := t.Append(row); err != nil {
				return fmt.Errorf("render table: %w", err)
			}
			return nil
		}, nil
	})
	s.table.Header(toAny(s.header)...)
	for _, row := range s.sample {
		if err := s.table.Append(row); err != nil {
			return fmt.Errorf("render table: %w", err)
		}
	}
	s.sample = nil
	return nil
}

// fixWidths sets the column widths from the header and the sample. It turns off
// tablewriter's width cache: a long list's cells are mostly unique (ids, titles), so the
// cache's upkeep costs more than the widths it saves (a third of the table's time).
func (s *streamTable) fixWidths() {
	twwidth.SetCacheCapacity(0)
	s.widths = tw.NewMapper[int, int]()
	for _, row := range append([][]string{s.header}, s.sample...) {
		for i, cell := range row {
			s.widths.Set(i, max(s.widths.Get(i), twwidth.Width(cell)+2)) // one space of padding each side
		}
	}
}

// newTable starts a streamed table with the fixed widths, printing to w.
func (s *streamTable) newTable(w io.Writer) (*tablewriter.Table, error) {
	t := tablewriter.NewTable(w, append(tableOptions(tw.WrapTruncate),
		tablewriter.WithStreaming(tw.StreamConfig{Enable: true}), tablewriter.WithColumnWidths(s.widths))...)
	if err := t.Start(); err != nil {
		return nil, fmt.Errorf("render table: %w", err)
	}
	return t, nil
}

// Close prints what is left and ends the table.
func (s *streamTable) Close() error {
	if s.table == nil {
		if err := s.start(); err != nil {
			return err
		}
	}
	if err := s.rest.Close(); err != nil {
		return err
	}
	if err := s.table.Close(); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	return s.w.Flush()
}

// allFlag is --all of the commands whose human output folds a group of subjects.
func allFlag() cli.Flag { return &cli.BoolFlag{Name: "all", Usage: allUsage} }

const allUsage = "list every subject: no group of more than 10 folded into one line"

// listAllHint is the flag that lists a folded group's every subject: --all, or --json where
// the command has no such --all (resume clear's --all selects).
func listAllHint(c *cli.Context) string {
	for _, f := range c.Command.Flags {
		if b, ok := f.(*cli.BoolFlag); ok && b.Name == "all" && b.Usage == allUsage {
			return "--all"
		}
	}
	return "--json"
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
