// Package group folds what a command reports about many subjects (findings, the next start's
// actions, a plan's changes) into one line per kind: its count, severity, fix and a few
// example subjects. The human output prints a group's line instead of its subjects once the
// group holds more than Fit of them (a small home prints as it always did); the JSON
// envelope's summary carries every group (docs/json.md, docs/decisions.md "Issue 30").
package group

import (
	"fmt"
	"strings"
)

// Fit is the most subjects of one kind the human output lists one by one in a long list: a
// group with more is printed as its one line (unless --all).
const Fit = 10

// Screen is the most subjects a list holds and is still printed in full, whatever its groups:
// only a longer list is folded.
const Screen = 60

// Examples is how many example subjects a group keeps.
const Examples = 3

// Group is the subjects of one kind.
type Group struct {
	// ID is the kind: a check id, a next-start action, or a change's store, op and field.
	ID       string   `json:"id"`
	Severity string   `json:"severity,omitempty"`
	Count    int      `json:"count"`
	Fix      string   `json:"fix,omitempty"`
	Examples []string `json:"examples"`
	// Why is what the first subject's line says about it (a next start's reason); Varied
	// tells whether the others say something else.
	Why    string `json:"why,omitempty"`
	Varied bool   `json:"why_varies,omitempty"`
	first  int    // the index of the group's first subject
}

// Summary is the groups of one list, in the order of their first subjects.
type Summary struct {
	Total  int      `json:"total"`
	Groups []*Group `json:"groups"`
	index  map[string]*Group
	at     []*Group // the group of each subject, by index
}

// Add counts the next subject (its index is the number added before it) in the group of id
// and severity (a check's findings of two severities are two groups).
func (s *Summary) Add(id, severity, fix, subject, why string) {
	if s.index == nil {
		s.index = map[string]*Group{}
		s.Groups = []*Group{}
	}
	key := id + "\x00" + severity
	g := s.index[key]
	if g == nil {
		g = &Group{ID: id, Severity: severity, Fix: fix, Examples: []string{}, Why: why, first: s.Total}
		s.index[key] = g
		s.Groups = append(s.Groups, g)
	}
	g.Count++
	g.Varied = g.Varied || why != g.Why
	if len(g.Examples) < Examples {
		g.Examples = append(g.Examples, subject)
	}
	s.at = append(s.at, g)
	s.Total++
}

// Cut reports whether the human output folds some group: the list holds more than Screen
// subjects, and a group more than Fit.
func (s *Summary) Cut() bool {
	if s.Total <= Screen {
		return false
	}
	for _, g := range s.Groups {
		if g.Count > Fit {
			return true
		}
	}
	return false
}

// Line is what the human output prints for subject i: its own line (nil, true), its group's
// line (g, true: i is the group's first subject) or nothing (nil, false: its group's line
// stands for it). With all, every subject is printed.
func (s *Summary) Line(i int, all bool) (*Group, bool) {
	g := s.at[i]
	switch {
	case all || g.Count <= Fit || s.Total <= Screen:
		return nil, true
	case g.first == i:
		return g, true
	}
	return nil, false
}

// Text is the group's line after its severity: the id, the count, the fix and examples;
// more says how to list every subject ("--all").
func (g *Group) Text(more string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d", g.ID, g.Count)
	if g.Why != "" {
		b.WriteString(": " + g.Why)
		if g.Varied {
			b.WriteString(" (and other reasons)")
		}
	}
	if g.Fix != "" {
		b.WriteString("; fix: " + g.Fix)
	}
	fmt.Fprintf(&b, "; e.g. %s and %d more (%s lists every one)", strings.Join(g.Examples, ", "), g.Count-len(g.Examples), more)
	return b.String()
}

// Head is the line printed first when a list is folded: its total and its groups.
func (s *Summary) Head(noun string) string {
	return fmt.Sprintf("%d %s in %d group(s); each group of more than %d is one line", s.Total, noun, len(s.Groups), Fit)
}
