package statedb

import (
	"context"
	"fmt"
)

// BadModelConfig is a sessions row whose model_config the v17 compression-tip lookup cannot
// read: json_extract raises "malformed JSON" on it (an empty string, a truncated object …).
type BadModelConfig struct {
	ID    string
	Value Value // model_config as stored
	// ParentID is the row's parent_session_id (nil when none); ParentCompression says the
	// parent ended with 'compression', so that the v17 lookup through the parent reads this
	// row and raises.
	ParentID          *string
	ParentCompression bool
}

// BadModelConfigs lists the rows whose model_config the v17 compression-tip step's
// json_extract raises on, ordered by id (nil when sessions has no model_config column).
// Candidates are the values json_valid rejects (json_extract accepts no value json_valid
// rejects less strictly); each is then evaluated with the step's own expression, so the
// list holds exactly the values SQLite's json_extract raises on.
func (db *DB) BadModelConfigs(ctx context.Context) ([]BadModelConfig, error) {
	if !db.schema.SessionColumns["model_config"] || !db.schema.SessionColumns["parent_session_id"] {
		return nil, nil
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT s.id, +s.model_config, s.parent_session_id,
		COALESCE(p.end_reason = 'compression', 0)
		FROM sessions s LEFT JOIN sessions p ON p.id = s.parent_session_id
		WHERE s.model_config IS NOT NULL AND json_valid(s.model_config) = 0 ORDER BY s.id`)
	if err != nil {
		return nil, classify("read model_config", err, false)
	}
	var cands []BadModelConfig
	for rows.Next() {
		var b BadModelConfig
		var raw any
		var parent *string
		if err := rows.Scan(&b.ID, &raw, &parent, &b.ParentCompression); err != nil {
			rows.Close()
			return nil, classify("read model_config", err, false)
		}
		if b.Value, err = valueFromDriver(raw); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read model_config of %q: %w", b.ID, err)
		}
		b.ParentID = parent
		cands = append(cands, b)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, classify("read model_config", err, false)
	}
	var out []BadModelConfig
	for _, b := range cands {
		var ok bool
		err := db.sql.QueryRowContext(ctx, `SELECT json_extract(COALESCE(model_config, '{}'), '$._branched_from') IS NULL
			AND json_extract(COALESCE(model_config, '{}'), '$._delegate_from') IS NULL FROM sessions WHERE id = ?`, b.ID).Scan(&ok)
		switch {
		case err != nil && raisesOnData(err):
			out = append(out, b)
		case err != nil:
			return nil, classify(fmt.Sprintf("read model_config of %q", b.ID), err, false)
		}
	}
	return out, nil
}
