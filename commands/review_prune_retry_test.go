package commands

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReviewPruneRetry(t *testing.T) {
	home := fixtureHome(t, "r0817-481156139")
	_, plan, _ := runCLI(t, "--home", home, "--now", fixtureNow, "prune", "--older-than", "1d")
	t.Logf("plan: %s", plan[:min(len(plan), 600)])
	db, _ := sql.Open("sqlite", "file:"+filepath.Join(home, "state.db")+"?mode=ro")
	defer db.Close()
	conn, _ := db.Conn(context.Background())
	conn.ExecContext(context.Background(), "BEGIN")
	var n int
	conn.QueryRowContext(context.Background(), "SELECT count(*) FROM sessions").Scan(&n)
	go func() { time.Sleep(2500 * time.Millisecond); conn.ExecContext(context.Background(), "ROLLBACK") }()
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "prune", "--older-than", "1d", "--apply")
	t.Logf("exit %d stderr %s", code, stderr)
	_ = stdout
	ents, _ := os.ReadDir(filepath.Join(home, "sessionctl", "journal"))
	for _, e := range ents {
		t.Logf("journal dir: %s", e.Name())
	}
	js, _ := filepath.Glob(filepath.Join(home, "sessionctl", "journal", "*.json"))
	for _, j := range js {
		code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", j, "--apply")
		t.Logf("undo exit %d %s", code, stderr)
	}
}
