package space

import (
	"fmt"
	"sort"
	"strings"
)

// Lines is `space`'s human report: the files, the largest tables and FTS indexes, the
// transcripts, the sessions by source and age, and the reclaim estimates.
func (r Report) Lines() []string {
	f := r.File
	out := []string{
		fmt.Sprintf("state.db    %s (%d pages of %d bytes), %s free (%d pages)", Bytes(f.DBBytes), f.PageCount, f.PageSize, Bytes(f.FreeBytes), f.FreelistCount),
		fmt.Sprintf("WAL         %s (checkpoint limit %s)", Bytes(f.WALBytes), Bytes(f.CheckpointLimitBytes)),
	}
	if r.Method == MethodNone {
		out = append(out, "objects     not measured: the linked SQLite has no dbstat virtual table (totals only)")
	}
	for _, g := range r.Tables {
		out = append(out, fmt.Sprintf("table       %-28s %10s  (%d b-tree%s)", g.Name, Bytes(g.Bytes), g.Objects, plural(g.Objects)))
	}
	for _, g := range r.FTS {
		out = append(out, fmt.Sprintf("fts         %-28s %10s  (%d shadow table%s)", g.Name, Bytes(g.Bytes), g.Objects, plural(g.Objects)))
	}
	out = append(out, r.transcriptLines()...)
	out = append(out, r.sessionLines()...)
	return append(out, r.reclaimLines()...)
}

// transcriptLines words the sessions directory.
func (r Report) transcriptLines() []string {
	t := r.Transcripts
	kinds := make([]string, 0, len(t.ByKind))
	for k, c := range t.ByKind {
		kinds = append(kinds, fmt.Sprintf("%s %d (%s)", k, c.Files, Bytes(c.Bytes)))
	}
	sort.Strings(kinds)
	line := fmt.Sprintf("transcripts %d files, %s", t.Files, Bytes(t.Bytes))
	if len(kinds) > 0 {
		line += ": " + strings.Join(kinds, ", ")
	}
	out := []string{line}
	if t.Stray != nil && t.Stray.Files > 0 {
		out = append(out, fmt.Sprintf("            %d file(s), %s, belong to no session row (check: sessions.stray-transcript)", t.Stray.Files, Bytes(t.Stray.Bytes)))
	}
	return out
}

// sessionLines words the sessions by source and by age.
func (r Report) sessionLines() []string {
	s := r.Sessions
	if s == nil {
		return nil
	}
	var src, age []string
	for _, c := range s.BySource {
		src = append(src, fmt.Sprintf("%s %d", orNone(c.Source), c.Sessions))
	}
	for _, b := range s.ByAge {
		if b.Sessions > 0 {
			age = append(age, fmt.Sprintf("%s %d", b.Label, b.Sessions))
		}
	}
	return []string{"by source   " + strings.Join(src, ", "), "by age      " + strings.Join(age, ", ") + " (age by " + s.AgeRule + ")"}
}

// reclaimLines words the estimates.
func (r Report) reclaimLines() []string {
	c := r.Reclaim.Compact
	out := []string{fmt.Sprintf("reclaim (estimates) compact: %s (free pages %s + WAL %s)", Bytes(c.Bytes), Bytes(c.FreeBytes), Bytes(c.WALBytes))}
	if p := r.Reclaim.Prune; p != nil {
		if p.Note != "" {
			out = append(out, fmt.Sprintf("  prune --older-than %s: not estimated (%s)", ageText(p.OlderThanDays), p.Note))
		} else {
			out = append(out, fmt.Sprintf("  prune --older-than %s: %d session(s), %d message(s), ~%s of state.db (free pages until compact), %d transcript file(s) %s",
				ageText(p.OlderThanDays), p.Sessions, p.Messages, Bytes(p.DBBytes), p.Transcripts.Files, Bytes(p.Transcripts.Bytes)))
		}
	}
	if e := r.Reclaim.EntriesPrune; e != nil {
		out = append(out, fmt.Sprintf("  entries prune --older-than %s: %d routing entr%s", ageText(e.OlderThanDays), e.Entries, map[bool]string{true: "y", false: "ies"}[e.Entries == 1]))
	}
	return out
}

// Bytes renders a size in binary units ("1.5 MiB", "512 B").
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// ageText renders an age in days with the largest unit that keeps it whole-ish ("90d", "2h",
// "2m", "30s").
func ageText(days float64) string {
	secs := days * 86400
	for _, u := range []struct {
		n    float64
		unit string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}} {
		if secs >= u.n {
			return fmt.Sprintf("%g%s", secs/u.n, u.unit)
		}
	}
	return fmt.Sprintf("%gs", secs)
}
