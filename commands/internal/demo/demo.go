// Package demo builds a sample home: one written by the r0715 runtime (db-primary, schema
// v21) holding one of every problem sessionctl repairs, shifted to the run's clock.
package demo

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/failure"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
)

// sample is the home as the runtime wrote it; its clock is epoch.
//
//go:embed all:demodata
var sample embed.FS

const epoch = 1784194200.25

// SkippedKey is an entry the runtime skips (its session_id is path-unsafe), added to the
// sample so that one of every problem is present.
const SkippedKey = "agent:main:telegram:dm:700000001"

// Dir returns the target directory: the one given (absent or empty) or a new temp dir.
func Dir(arg string) (string, error) {
	if arg == "" {
		dir, err := os.MkdirTemp("", "sessionctl-demo-")
		if err != nil {
			return "", failure.Mark(failure.Data, fmt.Errorf("create temp dir: %w", err))
		}
		return dir, nil
	}
	entries, err := os.ReadDir(arg)
	if err == nil && len(entries) > 0 {
		return "", failure.Mark(failure.Data, fmt.Errorf("demo: %s is not empty; give a new or empty directory", arg))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", failure.Mark(failure.Data, fmt.Errorf("demo: %w", err))
	}
	if err := os.MkdirAll(arg, 0o700); err != nil {
		return "", failure.Mark(failure.Data, fmt.Errorf("demo: %w", err))
	}
	return filepath.Abs(arg)
}

// Build writes the sample home into dir, shifted so that its clock is clock.
func Build(ctx context.Context, dir string, clock sessionsjson.Clock) error {
	if err := copyDemoFiles(dir); err != nil {
		return err
	}
	home := sessionsjson.Home{Root: dir, Dir: dir}
	scope, err := sessionsjson.ResolvedSessionsDir(home)
	if err != nil {
		return err
	}
	delta := clock.Unix - epoch
	if err := statedb.RebaseSample(ctx, home.StateDB(), delta, scope); err != nil {
		return err
	}
	return rebaseRouting(ctx, home, scope, int64(delta*1e6))
}

func copyDemoFiles(dir string) error {
	return fs.WalkDir(sample, "demodata", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, strings.TrimPrefix(path, "demodata"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		data, err := sample.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600)
	})
}

// rebaseRouting shifts every *_at timestamp of the routing rows and the mirror by delta
// microseconds and adds the entry the runtime skips.
func rebaseRouting(ctx context.Context, home sessionsjson.Home, scope string, delta int64) error {
	rules := sessionsjson.RulesFor(sessionsjson.GenR0715)
	data, err := os.ReadFile(home.SessionsJSON())
	if err != nil {
		return err
	}
	doc, err := sessionsjson.Decode(data, rules)
	if err != nil {
		return err
	}
	updates := map[string]string{}
	for _, e := range doc.Entries() {
		shifted, err := shiftEntry(e, delta)
		if err != nil {
			return err
		}
		doc.Replace(e.Key, shifted)
		updates[e.Key] = string(sessionsjson.EncodeEntryJSON(shifted, true))
	}
	skipped, err := skippedDemoEntry(doc, rules)
	if err != nil {
		return err
	}
	updates[SkippedKey] = string(sessionsjson.EncodeEntryJSON(skipped, true))
	out := doc.Encode(true)
	out = appendMember(out, SkippedKey, sessionsjson.EncodeEntryJSON(skipped, true))
	if err := sessionsjson.WriteFileAtomic(home.SessionsJSON(), out, ".sessions_*.tmp"); err != nil {
		return err
	}
	db, err := statedb.OpenWrite(ctx, home.StateDB())
	if err != nil {
		return err
	}
	defer db.Close()
	return db.UpdateRoutingEntries(ctx, scope, updates, float64(time.Now().UnixMicro())/1e6)
}

func shiftEntry(e *sessionsjson.Entry, delta int64) (*sessionsjson.Entry, error) {
	out := e
	for _, f := range e.Fields() {
		if !strings.HasSuffix(f.Name, "_at") || len(f.Raw) == 0 || f.Raw[0] != '"' {
			continue
		}
		ts, err := sessionsjson.ParseISO(strings.Trim(string(f.Raw), `"`))
		if err != nil {
			continue
		}
		next, err := out.Set(f.Name, sessionsjson.FormatNaive(ts.WallMicros()+delta))
		if err != nil {
			return nil, err
		}
		out = next
	}
	return out, nil
}

// skippedDemoEntry copies the first entry under a new key with a path-unsafe session_id.
func skippedDemoEntry(doc *sessionsjson.Document, rules sessionsjson.Rules) (*sessionsjson.Entry, error) {
	first := doc.Entries()[0]
	e, err := first.Set("session_key", SkippedKey)
	if err != nil {
		return nil, err
	}
	return e.Set("session_id", "../../escape")
}

// appendMember adds `"key": value` before the closing brace of a JSON object document.
func appendMember(doc []byte, key string, value []byte) []byte {
	end := strings.LastIndexByte(string(doc), '}')
	quoted := fmt.Sprintf("%q", key)
	member := ",\n  " + quoted + ": " + string(value) + "\n"
	body := strings.TrimRight(string(doc[:end]), " \n")
	return []byte(body + member + "}")
}
