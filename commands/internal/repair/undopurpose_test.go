package repair

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/journal"
	"github.com/sessionctl/sessionctl/statedb"
)

// TestUndoPurpose: undo reads the routing index and the mirror only for a journal that
// writes routing (an entry image or a gateway_routing row), or one it cannot read whole; a
// journal of state.db rows and files is undone on the database alone (issue 30: reading a
// 20,000-entry index for it held 190 MB).
func TestUndoPurpose(t *testing.T) {
	missingStore := filepath.Join(t.TempDir(), "absent.rows.db")
	for _, tc := range []struct {
		name string
		j    journal.Journal
		want home.Purpose
	}{
		{"state.db rows", journal.Journal{Rows: []statedb.RowChange{{Table: "sessions"}}}, home.Database},
		{"files only", journal.Journal{Files: []journal.FileImage{{Path: "/x/sessions/a.jsonl"}}}, home.Database},
		{"an entry image", journal.Journal{Routing: []journal.EntryImage{{Store: home.StoreSessionsJSON, Key: "k", Before: json.RawMessage(`{}`)}}}, home.Restore},
		{"a gateway_routing row", journal.Journal{Rows: []statedb.RowChange{{Table: home.StoreGatewayRouting}}}, home.Restore},
		{"a row store that cannot be read", journal.Journal{RowStore: missingStore}, home.Restore},
		{"torn", journal.Journal{Torn: true}, home.Restore},
	} {
		if got := UndoPurpose(context.Background(), &tc.j); got != tc.want {
			t.Errorf("%s: purpose %v, want %v", tc.name, got, tc.want)
		}
	}
}
