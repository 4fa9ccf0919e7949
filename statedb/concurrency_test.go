package statedb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	helperDBEnv       = "STATEDB_HELPER_DB"
	helperDurationEnv = "STATEDB_HELPER_DURATION"
)

// TestHelperWriter is not a test: TestConcurrentWriter runs it in a second process, where it
// plays a runtime writing sessions and messages (firing the FTS triggers) in short BEGIN
// IMMEDIATE transactions, and prints how many batches it committed.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(helperDBEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	d, err := time.ParseDuration(os.Getenv(helperDurationEnv))
	if err != nil {
		t.Fatal(err)
	}
	db, err := OpenWrite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, retries := 0, 0
	for deadline := time.Now().Add(d); time.Now().Before(deadline); n++ {
		stats, err := db.WithImmediateTx(context.Background(), func(tx *sql.Tx) error {
			return helperBatch(tx, n)
		})
		if err != nil {
			t.Fatalf("batch %d: %v", n, err)
		}
		retries += stats.Attempts - 1
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("HELPER-WROTE %d %d\n", n, retries)
}

func helperBatch(tx *sql.Tx, n int) error {
	id := fmt.Sprintf("helper_%06d", n)
	now := float64(time.Now().UnixNano()) / 1e9
	if _, err := tx.Exec("INSERT INTO sessions (id, source, started_at) VALUES (?, 'helper', ?)", id, now); err != nil {
		return err
	}
	for i := range 2 {
		if _, err := tx.Exec(`INSERT INTO messages (session_id, role, content, timestamp)
			VALUES (?, 'user', ?, ?)`, id, fmt.Sprintf("hello searchable %d/%d", n, i), now); err != nil {
			return err
		}
	}
	_, err := tx.Exec("UPDATE sessions SET message_count = message_count + 2 WHERE id = ?", id)
	return err
}

func TestConcurrentWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second process")
	}
	path := copyDB(t, "r0715-c2a3b9ce5")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperDBEnv+"="+path, helperDurationEnv+"=2s")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	db := openWrite(t, path)
	runs, err := repairUntil(db, done)
	if err != nil {
		t.Fatalf("repairs while the helper writes: %v\nhelper output:\n%s", err, out.String())
	}
	wrote, retries := parseHelper(t, out.String())
	t.Logf("helper committed %d batches (%d retries); %d repair rounds here", wrote, retries, runs)
	checkHelperRows(t, rawDB(t, path), wrote)
}

// repairUntil runs finalize and prune rounds until the helper exits, alternating the CLI's way
// (candidates read without the lock, then one-row batches by id: the first round, which finds
// the fixture's orphans and ghosts) with scanning batches.
func repairUntil(db *DB, done <-chan error) (int, error) {
	ctx := context.Background()
	for runs := 0; ; runs++ {
		select {
		case err := <-done:
			if err != nil {
				return runs, fmt.Errorf("helper: %w", err)
			}
			return runs, nil
		default:
		}
		repair := repairByID
		if runs%2 == 1 {
			repair = repairScanning
		}
		if err := repair(ctx, db); err != nil {
			return runs, err
		}
	}
}

func repairScanning(ctx context.Context, db *DB) error {
	if _, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, Batch{}, nil); err != nil {
		return err
	}
	_, err := db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, Batch{}, nil)
	return err
}

func repairByID(ctx context.Context, db *DB) error {
	orphans, err := db.FinalizeCandidates(ctx, fixtureNow, DefaultOrphanMinAge)
	if err != nil {
		return err
	}
	var ids []string
	for _, o := range orphans {
		if o.LiveLock == nil {
			ids = append(ids, o.ID)
		}
	}
	err = drainByID(ids, func(b Batch) ([]string, error) {
		res, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, b, nil)
		return res.Remaining, err
	})
	if err != nil {
		return err
	}
	ghosts, err := db.GhostCandidates(ctx, fixtureNow, DefaultGhostMinAge)
	if err != nil {
		return err
	}
	ids = nil
	for _, g := range ghosts {
		if len(g.ChildIDs) == 0 {
			ids = append(ids, g.ID)
		}
	}
	return drainByID(ids, func(b Batch) ([]string, error) {
		res, err := db.PruneGhosts(ctx, fixtureNow, DefaultGhostMinAge, b, nil)
		return res.Remaining, err
	})
}

// drainByID runs one-row batches over ids, as many as run leaves remaining.
func drainByID(ids []string, run func(Batch) ([]string, error)) error {
	for b := (Batch{MaxRows: 1, Among: ids}); len(b.Among) > 0; {
		rest, err := run(b)
		if err != nil {
			return err
		}
		b.Among = rest
	}
	return nil
}

func parseHelper(t *testing.T, out string) (wrote, retries int) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "HELPER-WROTE" {
			wrote, _ = strconv.Atoi(f[1])
			retries, _ = strconv.Atoi(f[2])
			return wrote, retries
		}
	}
	t.Fatalf("helper reported nothing:\n%s", out)
	return 0, 0
}

func checkHelperRows(t *testing.T, raw *sql.DB, wrote int) {
	t.Helper()
	var sessions, messages, hits int
	var integrity string
	checks := []struct {
		query string
		dest  any
	}{
		{"SELECT COUNT(*) FROM sessions WHERE source = 'helper'", &sessions},
		{"SELECT COUNT(*) FROM messages WHERE session_id LIKE 'helper\\_%' ESCAPE '\\'", &messages},
		{"SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'searchable'", &hits},
		{"PRAGMA integrity_check", &integrity},
	}
	for _, c := range checks {
		if err := raw.QueryRow(c.query).Scan(c.dest); err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
	}
	if wrote == 0 || sessions != wrote || messages != 2*wrote || hits != 2*wrote || integrity != "ok" {
		t.Errorf("helper wrote %d batches; found %d sessions, %d messages, %d FTS hits, integrity %q",
			wrote, sessions, messages, hits, integrity)
	}
	var ghosts int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM sessions WHERE id IN
		('20260628_040921_e394e0', '20260702_210131_8d7ee4')`).Scan(&ghosts); err != nil || ghosts != 0 {
		t.Errorf("ghosts left: %d, %v", ghosts, err)
	}
}
