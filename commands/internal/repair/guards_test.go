package repair

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/statedb"
)

// TestGuardRefusalClass: the runtime's repair lock is a refusal (exit 3, like sessionctl's own
// lock); every other guard is a data or environment error (exit 4); the sentinel survives.
func TestGuardRefusalClass(t *testing.T) {
	if guardRefusal(nil) != nil {
		t.Fatal("nil is no refusal")
	}
	for sentinel, want := range map[error]failure.Class{
		statedb.ErrRepairInProgress: failure.Refused,
		statedb.ErrRepairAbandoned:  failure.Data,
		statedb.ErrRepairLedger:     failure.Data,
		statedb.ErrNotWritable:      failure.Data,
		statedb.ErrLegacyRoutingKey: failure.Data,
		statedb.ErrMessageTriggers:  failure.Data,
	} {
		err := guardRefusal(fmt.Errorf("why: %w", sentinel))
		class, _ := failure.ClassOf(err)
		if class != want || !errors.Is(err, sentinel) || !strings.HasPrefix(err.Error(), "refusing to write state.db: why") {
			t.Errorf("%v: class %v, want %v; %v", sentinel, class, want, err)
		}
	}
}

// TestRowsWrite: restoring rows deletes sessions only where a row's desired image is none,
// and writes messages whenever a messages row is among them.
func TestRowsWrite(t *testing.T) {
	img := &statedb.RowImage{}
	cases := []struct {
		rows []statedb.RowChange
		want dbWrite
	}{
		{nil, dbWrite{}},
		{[]statedb.RowChange{{Table: "sessions", Before: img, After: img}}, dbWrite{}},
		{[]statedb.RowChange{{Table: "sessions", Before: nil, After: img}}, dbWrite{}},
		{[]statedb.RowChange{{Table: "state_meta", Before: img}, {Table: "sessions", Before: img}}, dbWrite{deletes: true}},
		{[]statedb.RowChange{{Table: "messages", After: img}}, dbWrite{messages: true}},
		{[]statedb.RowChange{{Table: "messages", Before: img}, {Table: "sessions", Before: img}}, dbWrite{deletes: true, messages: true}},
	}
	for i, c := range cases {
		if got := rowsWrite(c.rows); got != c.want {
			t.Errorf("case %d: %+v, want %+v", i, got, c.want)
		}
	}
}
