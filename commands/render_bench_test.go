package commands

import (
	"fmt"
	"io"
	"testing"
)

// BenchmarkStreamTable renders a sessions-list-shaped table of 10,000 rows (docs/performance.md,
// "Lists at scale").
func BenchmarkStreamTable(b *testing.B) {
	header := []string{"ID", "SOURCE", "STARTED", "STATE", "MSGS", "PARENT", "TITLE"}
	rows := make([][]string, 10000)
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("20260701_%06d_%08x", i, i*2654435761), "telegram",
			"2026-07-01 12:34:56", "ended", fmt.Sprint(i % 300), "", fmt.Sprintf("Conversation about item %d and more", i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		t := tableOf(header...)(io.Discard)
		for _, r := range rows {
			if err := t.Add(r); err != nil {
				b.Fatal(err)
			}
		}
		if err := t.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
