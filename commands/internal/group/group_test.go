package group

import (
	"fmt"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
)

// TestFoldsOnlyLongLists: a list of at most Screen subjects prints every one; a longer one
// folds each group of more than Fit into its first subject's line, keeping the smaller groups.
func TestFoldsOnlyLongLists(t *testing.T) {
	build := func(big, small int) *Findings {
		var fs []check.Finding
		for i := range big {
			fs = append(fs, check.Finding{Check: check.EntryStaleResume, Severity: check.Warn, Subject: fmt.Sprint("k", i)})
		}
		for i := range small {
			fs = append(fs, check.Finding{Check: check.DBTUIGhost, Severity: check.Info, Subject: fmt.Sprint("s", i)})
		}
		return OfFindings(fs)
	}
	short := build(Screen-Fit, Fit)
	if short.Cut() {
		t.Errorf("a list of %d subjects folds", short.Total)
	}
	long := build(Screen, Fit)
	if !long.Cut() {
		t.Fatalf("a list of %d subjects does not fold", long.Total)
	}
	printed := 0
	for i := range long.Total {
		if g, ok := long.Line(i, false); ok {
			printed++
			if (g != nil) != (i == 0) {
				t.Errorf("subject %d: group line %v", i, g)
			}
		}
	}
	if printed != 1+Fit {
		t.Errorf("printed %d lines, want %d", printed, 1+Fit)
	}
	g := long.Groups[0]
	if g.Count != Screen || len(g.Examples) != Examples || g.Fix != check.Fixes[check.EntryStaleResume] || long.Warnings != Screen || long.Info != Fit {
		t.Errorf("group %+v, totals %d/%d", g, long.Warnings, long.Info)
	}
	for i := range long.Total {
		if _, ok := long.Line(i, true); !ok {
			t.Fatalf("--all: subject %d not printed", i)
		}
	}
}

// TestSeveritiesAreGroups: one check's findings of two severities are two groups.
func TestSeveritiesAreGroups(t *testing.T) {
	s := OfFindings([]check.Finding{{Check: check.UpgradeEntriesDropped, Severity: check.Warn}, {Check: check.UpgradeEntriesDropped, Severity: check.Error}})
	if len(s.Groups) != 2 {
		t.Errorf("groups %d, want 2", len(s.Groups))
	}
}

func TestChangeKind(t *testing.T) {
	for c, want := range map[repair.Change]string{
		{Store: "gateway_routing", Target: "agent:main:x/y:dm:1/session_id", Op: "set"}:    "gateway_routing set session_id",
		{Store: "state.db", Target: "sessions/20260101_000000_aaaaaa/ended_at", Op: "set"}: "state.db set sessions ended_at",
		{Store: "state.db", Target: "sessions/20260101_000000_aaaaaa", Op: "delete"}:       "state.db delete sessions",
		{Store: "sessions dir", Target: "x.json", Op: "remove file"}:                       "sessions dir remove file",
	} {
		if got := ChangeKind(c); got != want {
			t.Errorf("%+v: %q, want %q", c, got, want)
		}
	}
}

// TestNextStartKinds: an action's target is not part of its group.
func TestNextStartKinds(t *testing.T) {
	s := OfNextStart([]check.StartAction{{Key: "a", Action: "repoint to X", Reason: "r"}, {Key: "b", Action: "repoint to Y", Reason: "r2"}})
	if len(s.Groups) != 1 || s.Groups[0].ID != "repoint" || !s.Groups[0].Varied {
		t.Errorf("groups %+v", s.Groups[0])
	}
}
