package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/commands/internal/repair"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// TestCompactFailedOutcomes: a compact whose VACUUM failed changed nothing (a write error,
// its journal removed) only when neither an FTS merge nor a checkpoint changed the files
// before; otherwise, and when the file could not be read after a VACUUM that committed, the
// run is Incomplete (exit 6) with its journal kept and named.
func TestCompactFailedOutcomes(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "state.db")
	d := &CompactData{Before: statedb.Physical{WALBytes: 4096}}
	failed := errors.New("database is locked")
	for name, tc := range map[string]struct {
		res        statedb.VacuumResult
		unreadable bool // VACUUM committed, the file could not be read after it
		changed    bool
	}{
		"nothing before":   {res: statedb.VacuumResult{}},
		"checkpointed":     {res: statedb.VacuumResult{Checkpointed: true}, changed: true},
		"fts merged":       {res: statedb.VacuumResult{Optimized: []string{"messages_fts"}}, changed: true},
		"unreadable after": {res: statedb.VacuumResult{Vacuumed: true}, unreadable: true, changed: true},
	} {
		path := filepath.Join(dir, name+"-compact.json")
		if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		run := repair.Outcome{Applied: true, Journals: []string{path}}
		var out repair.Outcome
		var err error
		if tc.unreadable {
			out, err = compactUnmeasured(run, d, tc.res, failed)
		} else {
			out, err = compactFailed(run, dbPath, d, tc.res, failed)
		}
		var inc *repair.Incomplete
		_, statErr := os.Stat(path)
		switch {
		case tc.changed && (!errors.As(err, &inc) || len(inc.Outcome.Journals) != 1 || len(out.Changes) == 0 || statErr != nil):
			t.Errorf("%s: %v (changes %v, journal %v): want Incomplete naming its kept journal", name, err, out.Changes, statErr)
		case !tc.changed && (errors.As(err, &inc) || !isClass(err, failure.Write) || statErr == nil):
			t.Errorf("%s: %v (journal %v): want a write error, the journal removed", name, err, statErr)
		}
	}
}

// isClass reports whether err is marked with class.
func isClass(err error, class failure.Class) bool {
	c, ok := failure.ClassOf(err)
	return ok && c == class
}

// TestCompactBlindGateway: where sessionctl cannot tell whether a gateway runs (Windows), compact
// and restore are refused (exit 3) until --force says it is stopped; then they run, with a
// warning. A gateway that is seen running refuses them whatever --force says.
func TestCompactBlindGateway(t *testing.T) {
	ctx := context.Background()
	dir := copyHome(t, "r0715-c2a3b9ce5")
	blind := sessionsjson.GatewayStatus{Running: true, Method: sessionsjson.MethodUnsupported, Detail: "cannot tell on windows"}
	seen := sessionsjson.GatewayStatus{Running: true, Method: sessionsjson.MethodLockHeld, Detail: "gateway.lock is held"}
	for _, tt := range []struct {
		gateway sessionsjson.GatewayStatus
		force   bool
		applied bool
	}{{blind, false, false}, {seen, true, false}, {blind, true, true}} {
		h := open(t, dir, "compact")
		var warned []string
		h.Gateway, h.Opts.AssumeStopped = tt.gateway, tt.force
		h.Opts.Warn = func(format string, a ...any) { warned = append(warned, fmt.Sprintf(format, a...)) }
		out, _, err := Compact(ctx, h, true, "")
		if tt.applied != (err == nil && out.Applied) {
			t.Errorf("%s, force %v: applied %v (%v), want applied %v", tt.gateway.Method, tt.force, out.Applied, err, tt.applied)
		}
		if class, _ := failure.ClassOf(err); !tt.applied && (class != failure.Refused || !errors.Is(err, ErrGatewayRunning)) {
			t.Errorf("%s, force %v: %v (class %v), want a refusal (exit 3)", tt.gateway.Method, tt.force, err, class)
		}
		if tt.applied != (len(warned) > 0) { // before the lock and under it
			t.Errorf("%s, force %v: warned %q", tt.gateway.Method, tt.force, warned)
		}
	}
}

// TestCompactStepBlindGateway: maintain's compact step, where sessionctl cannot tell whether a
// gateway runs, is skipped with a finding that sends the operator to compact --force (maintain
// has none); a gateway that is seen skips it with the plain refusal.
func TestCompactStepBlindGateway(t *testing.T) {
	ctx := context.Background()
	dir := copyHome(t, "r0715-c2a3b9ce5")
	for _, tt := range []struct {
		method    string
		wantForce bool
	}{{sessionsjson.MethodUnsupported, true}, {sessionsjson.MethodLockHeld, false}} {
		h := open(t, dir, "maintain")
		h.Gateway = sessionsjson.GatewayStatus{Running: true, Method: tt.method, Detail: "a gateway"}
		_, _, err := compactStep(ctx, &repair.Run{H: h, Options: repair.Options{Apply: true}})
		var skipped *repair.StepSkipped
		if !errors.As(err, &skipped) {
			t.Fatalf("%s: %v, want the step skipped", tt.method, err)
		}
		if got := strings.Contains(skipped.Finding.Message, "sessionctl compact --apply` --force"); got != tt.wantForce {
			t.Errorf("%s: finding %q (advice to use compact --force: %v, want %v)", tt.method, skipped.Finding.Message, got, tt.wantForce)
		}
	}
}
