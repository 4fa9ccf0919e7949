// Command genhome generates a large, realistic Hermes Agent home for
// benchmarks: sessions/sessions.json, state.db (the generation's real schema,
// FTS triggers active while messages are inserted) and
// .restart_failure_counts, with every problem sessionctl repairs mixed in.
// The output is a pure function of the flags (math/rand/v2 PCG seeded by
// -seed).
//
//	go run ./scripts/genhome -gen r0715 -seed 1 -entries 20000 \
//	    -sessions 100000 -messages 2000000 -out DIR
//
// An r0817 home (schema v26) is the r0715 home of the same flags plus what
// v22-v26 added (system_prompts referenced by the sessions, some of them
// by none, last_activity_at, turn leases, hygiene rows, r0817's entry
// fields), with state.db in rollback-journal (DELETE) mode as the runtime
// leaves it on a SQLite with the WAL-reset bug; the other generations'
// files are in WAL mode.
//
// A copy of a db-primary home (cp -a) must be relocated before use, so that
// its gateway_routing scope names the copy's sessions directory:
//
//	go run ./scripts/genhome -relocate COPY
//
// The schema files in statedb/schema/ (embedded by statedb, used here and by
// upgrade-check) are regenerated from the fixtures with
//
//	go run ./scripts/genhome -extract-schema testdata/fixtures/<gen>/home/state.db \
//	    -label testdata/fixtures/<gen>/home/state.db > statedb/schema/<short>.sql
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "genhome:", err)
		os.Exit(1)
	}
}

// options are the parsed flags.
type options struct {
	cfg                      config
	extract, label, relocate string
	quiet                    bool
}

// parseFlags parses args into options.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("genhome", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gen := fs.String("gen", "r0715", "runtime generation: r0418, r0506, r0525, r0703, r0715 or r0817")
	fs.Uint64Var(&o.cfg.Seed, "seed", 1, "PCG seed; same flags give the same home")
	fs.IntVar(&o.cfg.Entries, "entries", 20000, "routing entries in sessions.json (and gateway_routing)")
	fs.IntVar(&o.cfg.Sessions, "sessions", 100000, "rows in the sessions table")
	fs.IntVar(&o.cfg.Msgs, "messages", 2000000, "rows in the messages table")
	fs.Float64Var(&o.cfg.TextScale, "text-scale", 1, "multiply every message (and r0817 system prompt) length by this factor (0.05: 2 M messages in about 1.2 GB)")
	now := fs.String("now", "1784194200.25", "reference time, Unix seconds with fraction")
	fs.StringVar(&o.cfg.Out, "out", "", "output home directory (must not exist or be empty)")
	fs.StringVar(&o.extract, "extract-schema", "", "print the schema file of this state.db and exit")
	fs.StringVar(&o.label, "label", "", "with -extract-schema: the path named in the header")
	fs.StringVar(&o.relocate, "relocate", "", "point the gateway_routing rows of this copied home at it and exit")
	fs.BoolVar(&o.quiet, "q", false, "print only the final summary")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.extract != "" || o.relocate != "" {
		return o, nil
	}
	var err error
	if o.cfg.Gen, err = lookupGeneration(*gen); err != nil {
		return o, err
	}
	if o.cfg.Now, err = parseEpochMicros(*now); err != nil {
		return o, fmt.Errorf("-now: %w", err)
	}
	if o.cfg.Out == "" {
		return o, errors.New("-out DIR is required")
	}
	if o.cfg.Entries < 0 || o.cfg.Sessions < 0 || o.cfg.Msgs < 0 {
		return o, errors.New("-entries, -sessions and -messages must not be negative")
	}
	if !(o.cfg.TextScale > 0 && o.cfg.TextScale <= 100) {
		return o, errors.New("-text-scale must be above 0 and at most 100")
	}
	return o, nil
}

// run is main without the exit.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.extract != "" {
		label := o.label
		if label == "" {
			label = o.extract
		}
		return extractSchema(stdout, o.extract, label)
	}
	if o.relocate != "" {
		return relocate(ctx, o.relocate, stdout)
	}
	logf := func(format string, a ...any) {
		if !o.quiet {
			fmt.Fprintf(stderr, format+"\n", a...)
		}
	}
	return generate(ctx, o.cfg, logf, stdout)
}

// prepareOut creates the output home and its sessions/ directory and
// returns the resolved absolute sessions path (the gateway_routing scope).
func prepareOut(out string) (string, error) {
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		return "", fmt.Errorf("%s exists and is not empty", out)
	}
	if err := os.MkdirAll(filepath.Join(out, "sessions"), 0o755); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(filepath.Join(out, "sessions"))
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// generate builds the plan and writes the home.
func generate(ctx context.Context, cfg config, logf func(string, ...any), stdout io.Writer) error {
	start := time.Now()
	ddl, version, err := schemaFor(cfg.Gen)
	if err != nil {
		return err
	}
	scope, err := prepareOut(cfg.Out)
	if err != nil {
		return err
	}
	p := newPlan(cfg)
	if err := p.build(); err != nil {
		return err
	}
	logf("plan: %d entries, %d sessions, %d messages (%s)", len(p.entries), len(p.sessions), len(p.roles), time.Since(start).Round(time.Millisecond))
	if err := writeHomeFiles(p, cfg.Out); err != nil {
		return err
	}
	if err := writeStateDB(ctx, p, filepath.Join(cfg.Out, "state.db"), ddl, version, scope, logf); err != nil {
		return err
	}
	var v26 string
	if cfg.Gen.V26 {
		v26 = fmt.Sprintf(", %d system prompts, %d turn leases", len(p.prompts), len(p.leases))
	}
	fmt.Fprintf(stdout, "genhome: %s home (schema v%d) in %s: %d entries, %d sessions, %d messages, %d locks%s, %d files; %s\n",
		cfg.Gen.Full, version, cfg.Out, len(p.entries), len(p.sessions), len(p.roles), len(p.locks), v26, len(p.files)+1,
		time.Since(start).Round(time.Millisecond))
	return nil
}

// writeStateDB writes state.db: sessions, messages (triggers on), extras,
// then a TRUNCATE checkpoint.
func writeStateDB(ctx context.Context, p *plan, path, ddl string, version int, scope string, logf func(string, ...any)) error {
	t := time.Now()
	w, err := createDB(ctx, path, ddl, version, p.cfg.Gen.Journal)
	if err != nil {
		return err
	}
	steps := []struct {
		name string
		fn   func() error
	}{
		{"sessions", func() error { return w.writeSessions(p) }},
		{"messages", func() error {
			return w.writeMessages(p, func(done, total int) {
				logf("  messages %d/%d (%s)", done, total, time.Since(t).Round(time.Second))
			})
		}},
		{"extras", func() error { return w.writeExtras(p, scope) }},
		{"checkpoint", w.finish},
	}
	for _, s := range steps {
		if err := s.fn(); err != nil {
			w.close()
			return fmt.Errorf("state.db %s: %w", s.name, err)
		}
		logf("state.db %s done (%s)", s.name, time.Since(t).Round(time.Millisecond))
	}
	return nil
}
