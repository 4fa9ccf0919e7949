package group

import (
	"fmt"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
)

// Summaries is the envelope's summary: the groups of each list a command reports (nil where
// the command reports none of that kind).
type Summaries struct {
	Findings  *Findings `json:"findings"`
	NextStart *Summary  `json:"next_start,omitempty"`
	Changes   *Summary  `json:"changes"`
}

// Findings is the findings' summary, with their counts per severity.
type Findings struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Info     int `json:"info"`
	Summary
}

// OfFindings groups findings by check id, each group with its fix (check.Fixes).
func OfFindings(findings []check.Finding) *Findings {
	s := &Findings{}
	for _, f := range findings {
		switch f.Severity {
		case check.Error:
			s.Errors++
		case check.Warn:
			s.Warnings++
		default:
			s.Info++
		}
		s.Add(string(f.Check), string(f.Severity), check.Fixes[f.Check], f.Subject, "")
	}
	s.Groups = orEmpty(s.Groups)
	return s
}

// Head is the line printed first when the findings are folded: their totals, worded as
// check.Summarise words them.
func (s *Findings) Head() string {
	return fmt.Sprintf("%s: %d error(s), %d warning(s), %d info", s.Summary.Head("finding(s)"), s.Errors, s.Warnings, s.Info)
}

// OfNextStart groups the next start's actions by action, its target left out ("repoint to
// ID" is "repoint"), each group with the first subject's reason.
func OfNextStart(actions []check.StartAction) *Summary {
	s := &Summary{}
	for _, a := range actions {
		kind, _, _ := strings.Cut(a.Action, " to ")
		s.Add(kind, "", "", a.Key, a.Reason)
	}
	s.Groups = orEmpty(s.Groups)
	return s
}

// OfChanges groups a plan's (or a run's) changes by kind: the store, the op and, for a set or
// remove, the field (the target's last segment); a state.db change names its table too.
func OfChanges(changes []repair.Change) *Summary {
	s := &Summary{}
	for _, c := range changes {
		s.Add(ChangeKind(c), "", "", c.Target, "")
	}
	s.Groups = orEmpty(s.Groups)
	return s
}

// ChangeKind is the kind of a change: "gateway_routing set session_id", "state.db delete
// sessions", "sessions dir remove file".
func ChangeKind(c repair.Change) string {
	kind := c.Store + " " + c.Op
	if c.Store == home.StoreStateDB {
		table, _, _ := strings.Cut(c.Target, "/")
		kind += " " + table
	}
	if i := strings.LastIndexByte(c.Target, '/'); i >= 0 && (c.Op == "set" || c.Op == "remove") {
		kind += " " + c.Target[i+1:]
	}
	return kind
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
