package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestJournalPruneKeepsNamedRowStore: an undo of a prune names the prune journal's row store
// (its own undo reads the rows there). journal prune removing the prune journal keeps that
// store while the undo journal stays, says so in its plan and counts no bytes for it: the
// kept undo journal can still be undone. Pruning the undo journal as well then takes the
// store with it.
func TestJournalPruneKeepsNamedRowStore(t *testing.T) {
	home := fixtureHome(t, busyHome)
	if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "prune", "--older-than", "1d", "--apply"); code != ExitOK {
		t.Fatal(stderr)
	}
	prunes, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*-prune.json"))
	if len(prunes) != 1 {
		t.Fatalf("prune journals %v, want one", prunes)
	}
	store := filepath.Join(filepath.Dir(prunes[0]), filepath.Base(prunes[0][:len(prunes[0])-len(".json")])+".rows.db")
	time.Sleep(20 * time.Millisecond) // the undo journal's name sorts after the prune's
	if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", prunes[0], "--apply"); code != ExitOK {
		t.Fatal(stderr)
	}
	undos, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*-undo.json"))
	if len(undos) != 1 {
		t.Fatalf("undo journals %v, want one", undos)
	}
	later := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z")
	pruneOld := func(keep string, apply bool) journalPruneData {
		args := []string{"--home", home, "--now", later, "--json", "journal", "prune", "--older-than", "1s", "--keep", keep}
		if apply {
			args = append(args, "--apply")
		}
		code, stdout, stderr := runCLI(t, args...)
		if code != ExitOK {
			t.Fatalf("journal prune: exit %d: %s", code, stderr)
		}
		var d journalPruneData
		if err := json.Unmarshal(decodeEnvelope(t, stdout).Data, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	plan := pruneOld("1", false)
	if len(plan.RowStoresKept) != 1 || plan.RowStoresKept[0] != store || len(plan.RowStores) != 0 {
		t.Errorf("plan: row stores %v, kept %v; want %s kept", plan.RowStores, plan.RowStoresKept, store)
	}
	fi, err := os.Stat(store)
	if err != nil {
		t.Fatal(err)
	}
	if want := fileBytes(t, prunes[0]); plan.Bytes != want {
		t.Errorf("plan counts %d bytes, want the prune journal's %d without its kept row store (%d)", plan.Bytes, want, fi.Size())
	}
	pruneOld("1", true)
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("the row store a kept journal names is gone: %v", err)
	}
	if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", undos[0], "--apply"); code != ExitOK {
		t.Fatalf("the kept undo journal can no longer be undone: exit %d: %s", code, stderr)
	}
	last := pruneOld("0", true)
	if len(last.RowStores) != 1 || last.RowStores[0] != store {
		t.Errorf("pruning every journal: row stores %v, want %s", last.RowStores, store)
	}
	if left, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*.rows.db")); len(left) != 0 {
		t.Errorf("row stores left after every journal went: %v", left)
	}
}

// journalPruneData is the part of journal prune's data the tests read.
type journalPruneData struct {
	RowStores     []string `json:"row_stores"`
	RowStoresKept []string `json:"row_stores_kept"`
	Bytes         int64    `json:"bytes"`
}

// fileBytes is the size of the file at path.
func fileBytes(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
