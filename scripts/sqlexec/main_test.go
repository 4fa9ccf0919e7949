package main

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`PRAGMA journal_mode=WAL; CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT);
		INSERT INTO sessions VALUES ('a', NULL), ('b', 'kept')`); err != nil {
		t.Fatal(err)
	}
	return path
}

func titles(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRow(`SELECT group_concat(id || '=' || COALESCE(title, '-'), ',') FROM (SELECT * FROM sessions ORDER BY id)`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestRunScript(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantErr string
		want    string
	}{
		{"transaction commits", "BEGIN IMMEDIATE; DELETE FROM sessions WHERE title IS NULL; UPDATE sessions SET title = 'x'; COMMIT;", "", "b=x"},
		{"syntax error stops the script", "BEGIN IMMEDIATE; DELETE FROM sessions; SELEC 1; COMMIT;", "syntax error", "a=-,b=kept"},
		{"constraint error", "INSERT INTO sessions VALUES ('a', 'dup');", "UNIQUE", "a=-,b=kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := newDB(t)
			err := run([]string{path, tt.script})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("run: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("run: error %v, want one containing %q", err, tt.wantErr)
			}
			if got := titles(t, path); got != tt.want {
				t.Errorf("sessions after the script: %s, want %s", got, tt.want)
			}
		})
	}
}

func TestRunRefusesMissingDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	if err := run([]string{path, "CREATE TABLE t (x)"}); err == nil {
		t.Fatal("run on a missing database succeeded")
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the missing database was created (stat: %v)", err)
	}
	if err := run([]string{path}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Fatalf("run with one argument: %v, want the usage", err)
	}
}
