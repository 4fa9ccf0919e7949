package repair

import (
	"errors"
	"strings"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
)

// TestStoppedNamesTheJournals: a run stopped after it applied batches ends in an Incomplete
// naming their journals, whose cause keeps its class; one that applied nothing ends in the
// cause itself.
func TestStoppedNamesTheJournals(t *testing.T) {
	boom := failure.Mark(failure.Write, errors.New("prune ghosts: commit: disk I/O error"))
	if err := stopped(Outcome{}, boom); err != boom {
		t.Errorf("nothing applied: %v", err)
	}
	err := stopped(Outcome{Applied: true, Journals: []string{"j1", "j2"}}, boom)
	var inc *Incomplete
	if !errors.As(err, &inc) || !strings.Contains(err.Error(), "journaled in j1, j2") {
		t.Fatalf("err = %v", err)
	}
	if class, _ := failure.ClassOf(err); class != failure.Write || !errors.Is(err, boom) {
		t.Errorf("cause lost: class %v", class)
	}
}
