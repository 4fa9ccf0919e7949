package commands

import (
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
)

// latchValue is state_meta[key] of the home's state.db, nil when the row is absent.
func latchValue(t *testing.T, home, key string) *string {
	t.Helper()
	db := openDB(t, home, "ro")
	defer db.Close()
	var v string
	err := db.QueryRow(`SELECT value FROM state_meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return &v
}

// TestLatchWhenNothingToChange (issue 29 item 7; also r0506, r0715): the runtime's CLI
// start-up runs prune_empty_ghost_sessions and finalize_orphaned_compression_sessions once
// and sets their latch whatever they changed (cli.py at 481156139: `set_meta(key, "1")` after
// the call). With nothing to prune, --apply writes the latch alone: a change with its journal
// (exit 0), which undo takes back; the plan lists it; once set, nothing is left to change.
func TestLatchWhenNothingToChange(t *testing.T) {
	cmds := []struct{ command, latch string }{
		{"prune-ghosts", "ghost_session_prune_v1"},
		{"finalize-orphans", "orphaned_compression_finalize_v1"},
	}
	for _, gen := range []string{"r0506-3b750715a", "r0715-c2a3b9ce5", "r0817-481156139"} {
		for _, c := range cmds {
			t.Run(gen+"/"+c.command, func(t *testing.T) {
				t.Parallel()
				home := fixtureHome(t, gen)
				args := []string{"--home", home, "--now", fixtureNow, "--json", c.command, "--min-age", "5000w"}
				var env struct {
					Applied bool   `json:"applied"`
					Journal string `json:"journal"`
					Changes []struct {
						Store, Target, Op string
						Before            any
					} `json:"changes"`
				}
				decode := func(code int, stdout, stderr string) {
					t.Helper()
					if code != ExitOK {
						t.Fatalf("exit %d: %s", code, stderr)
					}
					env.Changes, env.Journal, env.Applied = nil, "", false
					if err := json.Unmarshal([]byte(stdout), &env); err != nil {
						t.Fatal(err)
					}
				}
				decode(runCLI(t, args...))
				if len(env.Changes) != 1 || env.Changes[0].Target != "state_meta/"+c.latch || env.Applied {
					t.Fatalf("plan: %+v; want the latch alone", env)
				}
				if env.Changes[0].Before != nil {
					t.Fatalf("plan: before %v, want none (no row)", env.Changes[0].Before)
				}
				decode(runCLI(t, append(args, "--apply")...))
				if !env.Applied || env.Journal == "" || len(env.Changes) != 1 {
					t.Fatalf("--apply: %+v; want the latch written, journaled", env)
				}
				if v := latchValue(t, home, c.latch); v == nil || *v != "1" {
					t.Fatalf("latch %v after --apply", v)
				}
				decode(runCLI(t, append(args, "--apply")...))
				if env.Applied || len(env.Changes) != 0 {
					t.Fatalf("second --apply: %+v; want nothing to change", env)
				}
				if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "undo", "--last", "--apply"); code != ExitOK {
					t.Fatalf("undo: exit %d %s", code, stderr)
				}
				if v := latchValue(t, home, c.latch); v != nil {
					t.Fatalf("latch %q after undo", *v)
				}
			})
		}
	}
}

// TestLatchFalsyValue: a latch row holding a value the runtime's `if not get_meta(key)` takes
// for unset (an empty string) is set again, and the plan shows the row's value as the
// change's before, not an absent row.
func TestLatchFalsyValue(t *testing.T) {
	home := fixtureHome(t, "r0817-481156139")
	execSQL(t, home+"/state.db", `INSERT INTO state_meta (key, value) VALUES ('ghost_session_prune_v1', '')`)
	code, stdout, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "--json", "prune-ghosts", "--min-age", "5000w")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var env struct {
		Changes []struct {
			Target string
			Before any
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatal(err)
	}
	if len(env.Changes) != 1 || env.Changes[0].Before != "" {
		t.Fatalf("plan %+v; want the latch set, before \"\"", env.Changes)
	}
}
