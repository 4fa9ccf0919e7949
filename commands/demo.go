package commands

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

	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

// demoHome is a home written by the r0715 runtime (db-primary, schema v21) holding one of
// every problem sessionctl repairs. Its clock is demoEpoch; demo shifts it to now.
//
//go:embed all:demodata
var demoHome embed.FS

const demoEpoch = 1784194200.25

// demoSkippedKey is an entry the runtime skips (its session_id is path-unsafe), added to
// the sample so that one of every problem is present.
const demoSkippedKey = "agent:main:telegram:dm:700000001"

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "build a sample home with one of every problem, print its path, and show status and check on it",
		ArgsUsage: "[DIR]",
		Action:    runDemo,
	}
}

func runDemo(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("demo takes at most one DIR")
	}
	o, err := loadOptions(c, "demo")
	if err != nil {
		return err
	}
	dir, err := demoDir(c.Args().First())
	if err != nil {
		return err
	}
	if err := buildDemo(c.Context, dir, o.clock); err != nil {
		return withCode(ExitData, fmt.Errorf("build demo home in %s: %w", dir, err))
	}
	o.home = sessionsjson.Home{Root: dir, Dir: dir, HomeSource: "demo"}
	if !o.json {
		fmt.Fprintf(o.stdout, "demo home: %s\n(try: sessionctl --home %s check; sessionctl --home %s maintain --apply)\n\n", dir, dir, dir)
	}
	o.command = "status"
	if err := showStatus(c.Context, o); err != nil {
		return err
	}
	if o.json {
		return nil
	}
	fmt.Fprintln(o.stdout)
	o.command = "check"
	return demoCheck(c.Context, o)
}

// demoCheck shows check's findings; findings are the point of the demo, not a failure.
func demoCheck(ctx context.Context, o *options) error {
	v, err := loadView(ctx, o, true)
	if err != nil {
		return err
	}
	defer v.close()
	findings, err := runChecks(ctx, v, false)
	if err != nil {
		return err
	}
	return reportFindings(o, v, findings, "never", nil)
}

// demoDir returns the target directory: the one given (absent or empty) or a new temp dir.
func demoDir(arg string) (string, error) {
	if arg == "" {
		dir, err := os.MkdirTemp("", "sessionctl-demo-")
		if err != nil {
			return "", withCode(ExitData, fmt.Errorf("create temp dir: %w", err))
		}
		return dir, nil
	}
	entries, err := os.ReadDir(arg)
	if err == nil && len(entries) > 0 {
		return "", withCode(ExitData, fmt.Errorf("demo: %s is not empty; give a new or empty directory", arg))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", withCode(ExitData, fmt.Errorf("demo: %w", err))
	}
	if err := os.MkdirAll(arg, 0o700); err != nil {
		return "", withCode(ExitData, fmt.Errorf("demo: %w", err))
	}
	return filepath.Abs(arg)
}

func buildDemo(ctx context.Context, dir string, clock sessionsjson.Clock) error {
	if err := copyDemoFiles(dir); err != nil {
		return err
	}
	home := sessionsjson.Home{Root: dir, Dir: dir}
	scope, err := sessionsjson.ResolvedSessionsDir(home)
	if err != nil {
		return err
	}
	delta := clock.Unix - demoEpoch
	if err := statedb.RebaseSample(ctx, home.StateDB(), delta, scope); err != nil {
		return err
	}
	return rebaseRouting(ctx, home, scope, int64(delta*1e6))
}

func copyDemoFiles(dir string) error {
	return fs.WalkDir(demoHome, "demodata", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, strings.TrimPrefix(path, "demodata"))
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		data, err := demoHome.ReadFile(path)
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
	updates[demoSkippedKey] = string(sessionsjson.EncodeEntryJSON(skipped, true))
	out := doc.Encode(true)
	out = appendMember(out, demoSkippedKey, sessionsjson.EncodeEntryJSON(skipped, true))
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
	e, err := first.Set("session_key", demoSkippedKey)
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
