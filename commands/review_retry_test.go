package commands

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReviewMirrorRetry: on a rollback-journal home (r0817) a reader holding SHARED makes the
// COMMIT of entries rm busy; WithImmediateTx reruns the transaction function, whose mirror
// splice (doc.Remove of a key already removed by the first attempt) fails. The run then says
// "nothing changed" (exit 5) and drops the journal, while sessions.json was rewritten by the
// first attempt.
func TestReviewMirrorRetry(t *testing.T) {
	home := fixtureHome(t, "r0817-481156139")
	sj := filepath.Join(home, "sessions", "sessions.json")
	before, err := os.ReadFile(sj)
	if err != nil {
		t.Fatal(err)
	}
	_, out, _ := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "entries", "list")
	i := strings.Index(out, `"key": "`)
	if i < 0 {
		t.Fatal("no key")
	}
	key := out[i+8:]
	key = key[:strings.Index(key, `"`)]
	if !bytes.Contains(before, []byte(key)) {
		t.Skipf("mirror lacks %s", key)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(home, "state.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var jm string
	conn.QueryRowContext(context.Background(), "PRAGMA journal_mode").Scan(&jm)
	t.Logf("journal_mode %s, key %s", jm, key)
	if _, err := conn.ExecContext(context.Background(), "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(context.Background(), "SELECT count(*) FROM sessions").Scan(&n); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(30 * time.Second); conn.ExecContext(context.Background(), "ROLLBACK") }()
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "entries", "rm", key, "--apply")
	conn.ExecContext(context.Background(), "ROLLBACK")
	after, _ := os.ReadFile(sj)
	journals, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*.json"))
	t.Logf("exit %d\nstderr: %s\njournal field: %v", code, stderr, strings.Contains(stdout, `"journals": []`))
	if code == ExitWrite && !bytes.Equal(before, after) {
		t.Errorf("exit 5 (nothing changed) but sessions.json changed (%d -> %d bytes); %d journal(s) left", len(before), len(after), len(journals))
	}
}
