package statedb

import (
	"context"
	"reflect"
	"slices"
	"testing"
)

// TestFinalizePredicateConditions takes one finalize target of the fixture and breaks one
// condition of the runtime's predicate at a time: the continuation is then no candidate and
// is left alone by a scanning batch and by a batch by id, while the other targets are still
// finalized.
func TestFinalizePredicateConditions(t *testing.T) {
	const child, parent = "20260621_182357_4cea33", "20260616_194830_db33bd" // orphan1
	others := []string{"20260622_125201_1af486", "20260630_030359_a9da10"}
	cases := []struct {
		name  string
		setup string // SQL run on the fixture copy; "" for the unchanged target
		arg   string
	}{
		{"target", "", ""},
		{"parent still open", "UPDATE sessions SET ended_at = NULL WHERE id = ?", parent},
		{"parent ended otherwise", "UPDATE sessions SET end_reason = 'user_exit' WHERE id = ?", parent},
		{"parent not ended at all", "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", parent},
		{"no parent", "UPDATE sessions SET parent_session_id = NULL WHERE id = ?", child},
		{"api calls", "UPDATE sessions SET api_call_count = 1 WHERE id = ?", child},
		{"already ended", "UPDATE sessions SET ended_at = 1784194000 WHERE id = ?", child},
		{"end_reason set", "UPDATE sessions SET end_reason = 'user_exit' WHERE id = ?", child},
		{"no messages", "DELETE FROM messages WHERE session_id = ?", child},
		{"started at the cutoff", "UPDATE sessions SET started_at = 1783589400.25 WHERE id = ?", child},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := others
			if c.setup == "" {
				want = append([]string{child}, others...)
				slices.Sort(want)
			}
			for _, among := range []bool{false, true} {
				path := copyDB(t, "r0715-c2a3b9ce5")
				if c.setup != "" {
					mustExec(t, rawDB(t, path), c.setup, c.arg)
				}
				db := openWrite(t, path)
				ctx := context.Background()
				cands, err := db.FinalizeCandidates(ctx, fixtureNow, DefaultOrphanMinAge)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, o := range cands {
					if o.LiveLock == nil {
						ids = append(ids, o.ID)
					}
				}
				slices.Sort(ids)
				if !reflect.DeepEqual(ids, want) {
					t.Errorf("candidates %v, want %v", ids, want)
				}
				batch := Batch{}
				if among {
					batch.Among = []string{child, others[0], others[1]}
				}
				res, err := db.FinalizeOrphans(ctx, fixtureNow, DefaultOrphanMinAge, batch, nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := changedIDs(res.Changes, "sessions"); !reflect.DeepEqual(got, want) {
					t.Errorf("among=%v: finalized %v, want %v", among, got, want)
				}
			}
		})
	}
}

// TestLiveLockBoundary: a compression lock is live up to and including its expires_at
// (expires_at >= now, as the runtime checks) and expired 1 µs later, for every reader of the
// rule (liveLockAt): LiveCompressionLock, the finalize candidates and batch (a live lock is
// skipped), OpenWithExpiredLock, and prune's candidates (the session ended for them).
func TestLiveLockBoundary(t *testing.T) {
	const id = "20260622_053714_edd871" // orphan_locked
	ctx := context.Background()
	locks, err := openRO(t, copyDB(t, "r0715-c2a3b9ce5")).CompressionLocks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(locks, func(l CompressionLock) bool { return l.SessionID == id })
	if i < 0 {
		t.Fatalf("no lock on %s: %v", id, locks)
	}
	expires := locks[i].ExpiresAt
	if expires <= fixtureNow {
		t.Fatalf("the lock on %s expires at %v, not after the fixture's now", id, expires)
	}
	for _, tc := range []struct {
		name string
		now  float64
		live bool
	}{
		{"at expires_at", expires, true},
		{"1 µs after", expires + 1e-6, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := copyDB(t, "r0715-c2a3b9ce5")
			db := openWrite(t, path)
			l, err := db.LiveCompressionLock(ctx, id, tc.now)
			if err != nil || (l != nil) != tc.live {
				t.Errorf("LiveCompressionLock = %+v, %v; want live %v", l, err, tc.live)
			}
			expired, err := db.OpenWithExpiredLock(ctx, tc.now)
			if err != nil || slices.Contains(expired, id) == tc.live {
				t.Errorf("OpenWithExpiredLock = %v, %v; want %s listed: %v", expired, err, id, !tc.live)
			}
			cands, err := db.FinalizeCandidates(ctx, tc.now, DefaultOrphanMinAge)
			if err != nil {
				t.Fatal(err)
			}
			j := slices.IndexFunc(cands, func(o Orphan) bool { return o.ID == id })
			if j < 0 || (cands[j].LiveLock != nil) != tc.live {
				t.Errorf("candidate %s: index %d, want live lock %v", id, j, tc.live)
			}
			res, err := db.FinalizeOrphans(ctx, tc.now, DefaultOrphanMinAge, Batch{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			finalized := slices.Contains(changedIDs(res.Changes, "sessions"), id)
			skipped := slices.ContainsFunc(res.Locked, func(o Orphan) bool { return o.ID == id })
			if finalized == tc.live || skipped != tc.live {
				t.Errorf("finalized %v, skipped as locked %v; want skipped %v", finalized, skipped, tc.live)
			}
			ended := copyDB(t, "r0715-c2a3b9ce5")
			mustExec(t, rawDB(t, ended), "UPDATE sessions SET ended_at = started_at + 1 WHERE id = ?", id)
			pruned, err := openRO(t, ended).RetentionCandidates(ctx, tc.now, Retention{Cutoff: tc.now})
			if err != nil {
				t.Fatal(err)
			}
			j = slices.IndexFunc(pruned, func(c RetentionCandidate) bool { return c.ID == id })
			if j < 0 || (pruned[j].LiveLock != nil) != tc.live {
				t.Errorf("prune candidate %s: index %d, want live lock %v", id, j, tc.live)
			}
		})
	}
}
