package commands

import (
	"bytes"
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// renderTable prints an aligned, borderless table, no line ending in spaces (tablewriter pads
// the last column to its width).
func renderTable(w io.Writer, header []string, rows [][]string) error {
	var buf bytes.Buffer
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	table.Header(toAny(header)...)
	if err := table.Bulk(rows); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	if err := table.Render(); err != nil {
		return fmt.Errorf("render table: %w", err)
	}
	for line := range bytes.Lines(buf.Bytes()) {
		if _, err := w.Write(append(bytes.TrimRight(line, " \n"), '\n')); err != nil {
			return err
		}
	}
	return nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
