package statedb

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// FTSState is the full-text-search state the r0817 runtime records (hermes_state.py at
// 481156139; runtime-v26.md §1.4, §4.7).
type FTSState struct {
	// OptimizeAvailable: state_meta.fts_optimize_available = '1' — the file keeps the legacy
	// inline FTS tables; `hermes sessions optimize-storage` converts them (opt-in, 9acc4b47f).
	OptimizeAvailable bool
	// Stale lists the state_meta keys fts_stale and fts_cjk_stale present: the triggers are
	// detached and the index lags the messages until the runtime's next open rebuilds it
	// (1527a81b5).
	Stale []string
	// RebuildInterrupted: fts_rebuild_high_water is set or fts_v22_trash_* tables exist — an
	// optimize-storage run stopped part-way.
	RebuildInterrupted bool
	// Trash: fts_v22_trash_* tables exist — the v23 conversion stopped before its teardown,
	// which only the runtime's optimize-storage finishes (a deferred rebuild's markers alone
	// are resumed by `fts rebuild`).
	Trash bool
}

// FTS reads the file's FTS state (all false before r0817: none of the keys exist).
func (db *DB) FTS(ctx context.Context) (FTSState, error) {
	var s FTSState
	for _, key := range []string{"fts_optimize_available", "fts_stale", "fts_cjk_stale", "fts_rebuild_high_water"} {
		v, ok, err := db.Meta(ctx, key)
		if err != nil {
			return s, err
		}
		switch {
		case !ok:
		case key == "fts_optimize_available":
			s.OptimizeAvailable = v == "1"
		case key == "fts_rebuild_high_water":
			s.RebuildInterrupted = true
		default:
			s.Stale = append(s.Stale, key)
		}
	}
	for name := range db.schema.Tables {
		if strings.HasPrefix(name, "fts_v22_trash_") {
			s.RebuildInterrupted, s.Trash = true, true
		}
	}
	return s, nil
}

// primaryKey returns the primary-key columns of table, in key order.
func (db *DB) primaryKey(ctx context.Context, table string) ([]string, error) {
	pk, err := queryStrings(ctx, db.sql, "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", table)
	if err != nil {
		return nil, classify(fmt.Sprintf("read %s primary key", table), err, false)
	}
	return pk, nil
}

// legacyKeys are the primary keys the r0817 runtime heals on open: gateway_routing's
// (scope, session_key) (_heal_gateway_routing_pk, 76b0ea511, PR #73541) and
// session_model_usage's six columns with task (_heal_session_model_usage_pk, b6ca4fc85);
// gateway_routing first.
var legacyKeys = []struct {
	table string
	pk    []string
}{
	{"gateway_routing", []string{"scope", "session_key"}},
	{"session_model_usage", []string{"session_id", "model", "billing_provider", "billing_base_url", "billing_mode", "task"}},
}

// LegacyPrimaryKeys lists the tables (of gateway_routing and session_model_usage) whose
// primary key is not the one the r0817 runtime creates: its next open rebuilds them.
func (db *DB) LegacyPrimaryKeys(ctx context.Context) ([]string, error) {
	var out []string
	for _, k := range legacyKeys {
		if !db.schema.Tables[k.table] {
			continue
		}
		pk, err := db.primaryKey(ctx, k.table)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(pk, k.pk) {
			out = append(out, k.table)
		}
	}
	return out, nil
}
