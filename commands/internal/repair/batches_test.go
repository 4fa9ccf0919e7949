package repair

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
)

// TestDBBatchesFailed: a failed batch's error names the journals of the batches committed
// before it and keeps its class.
func TestDBBatchesFailed(t *testing.T) {
	boom := failure.Mark(failure.Write, errors.New("prune ghosts: commit: disk I/O error"))
	if err := (dbBatches{}).failed(boom); err != boom {
		t.Errorf("no batches: %v", err)
	}
	if err := (dbBatches{{Journal: "j1"}}).failed(nil); err != nil {
		t.Errorf("no error: %v", err)
	}
	err := (dbBatches{{Journal: "j1"}, {Journal: "j2"}}).failed(boom)
	if class, _ := failure.ClassOf(err); class != failure.Write || !strings.Contains(err.Error(), "2 earlier batch(es) were applied: j1, j2") {
		t.Errorf("err = %v (class %v)", err, class)
	}
}
