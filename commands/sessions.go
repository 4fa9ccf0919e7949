package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

// Default ages of the runtime's repairs, in seconds.
const (
	orphanMinAgeSeconds = 604800.0 // finalize_orphaned_compression_sessions: 7 days
	ghostMinAgeSeconds  = 86400.0  // prune_empty_ghost_sessions: 24 h
)

func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "state.db sessions",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list sessions (newest first)",
				ArgsUsage: " ",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "source", Usage: "only sessions of source `S`"},
					&cli.BoolFlag{Name: "open", Usage: "only open sessions"},
					&cli.BoolFlag{Name: "ended", Usage: "only ended sessions"},
					&cli.BoolFlag{Name: "orphans", Usage: "only orphaned compression continuations (finalize-orphans candidates)"},
					&cli.BoolFlag{Name: "ghosts", Usage: "only empty TUI ghosts (prune-ghosts candidates)"},
					&cli.IntFlag{Name: "limit", Value: 50, Usage: "show at most `N` sessions (0: all)"},
				},
				Action: runSessionsList,
			},
			{
				Name:      "show",
				Usage:     "show one session (a unique id prefix is enough)",
				ArgsUsage: "ID",
				Action:    runSessionsShow,
			},
		},
	}
}

// sessionRow is one element of data.sessions.
type sessionRow struct {
	ID              string   `json:"id"`
	Source          string   `json:"source"`
	ParentSessionID *string  `json:"parent_session_id"`
	StartedAt       string   `json:"started_at"`
	StartedAtUnix   float64  `json:"started_at_unix"`
	EndedAt         *string  `json:"ended_at"`
	EndedAtUnix     *float64 `json:"ended_at_unix"`
	EndReason       *string  `json:"end_reason"`
	Title           *string  `json:"title"`
	MessageCount    int64    `json:"message_count"`
	APICallCount    *int64   `json:"api_call_count,omitempty"`
	SessionKey      *string  `json:"session_key,omitempty"`
}

func toSessionRow(s statedb.Session) sessionRow {
	r := sessionRow{ID: s.ID, Source: s.Source, ParentSessionID: s.ParentID, StartedAt: unixToRFC3339(s.StartedAt),
		StartedAtUnix: s.StartedAt, EndedAtUnix: s.EndedAt, EndReason: s.EndReason, Title: s.Title,
		MessageCount: s.MessageCount, APICallCount: s.APICallCount, SessionKey: s.SessionKey}
	if s.EndedAt != nil {
		t := unixToRFC3339(*s.EndedAt)
		r.EndedAt = &t
	}
	return r
}

type sessionsFilter struct {
	source                       string
	open, ended, orphans, ghosts bool
	limit                        int
}

func runSessionsList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sessions list takes no arguments")
	}
	f := sessionsFilter{c.String("source"), c.Bool("open"), c.Bool("ended"), c.Bool("orphans"), c.Bool("ghosts"), c.Int("limit")}
	if f.limit < 0 {
		return usagef("--limit must be 0 or more")
	}
	if f.open && f.ended {
		return usagef("--open and --ended exclude each other")
	}
	o, err := loadOptions(c, "sessions list")
	if err != nil {
		return err
	}
	return listSessions(c.Context, o, f)
}

// loadViewWithDB is loadView for reads that need a state.db.
func loadViewWithDB(ctx context.Context, o *options) (*homeView, error) {
	v, err := loadViewFor(ctx, o, false, mirrorDrop)
	if err != nil {
		return nil, err
	}
	if v.db == nil {
		v.close()
		return nil, withCode(ExitData, fmt.Errorf("no state.db at %s", o.home.StateDB()))
	}
	return v, nil
}

func listSessions(ctx context.Context, o *options, f sessionsFilter) error {
	v, err := loadViewWithDB(ctx, o)
	if err != nil {
		return err
	}
	defer v.close()
	if o.json {
		return emitJSONStream(o, newEnvelope(v, o, result{}), "sessions", func(emit func(any) error) error {
			return eachSessionRow(ctx, v, f, func(r sessionRow) error { return emit(r) })
		})
	}
	if o.quiet {
		return nil
	}
	var list []sessionRow
	if err := eachSessionRow(ctx, v, f, func(r sessionRow) error {
		list = append(list, r)
		return nil
	}); err != nil {
		return err
	}
	return printSessions(o, list)
}

// eachSessionRow streams the sessions the filter selects, newest first.
func eachSessionRow(ctx context.Context, v *homeView, f sessionsFilter, fn func(sessionRow) error) error {
	wanted, err := candidateIDs(ctx, v, f)
	if err != nil {
		return err
	}
	if wanted != nil && len(wanted) == 0 {
		return nil
	}
	filter := statedb.SessionFilter{Source: f.source, Open: f.open, Ended: f.ended, IDs: wanted, Limit: f.limit}
	err = v.db.EachSession(ctx, filter, func(s statedb.Session) error { return fn(toSessionRow(s)) })
	if err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	return nil
}

// candidateIDs narrows the listing to repair candidates; nil means no narrowing.
func candidateIDs(ctx context.Context, v *homeView, f sessionsFilter) ([]string, error) {
	now := v.opts.clock.Unix
	var ids []string
	if f.orphans {
		orphans, err := v.db.FinalizeCandidates(ctx, now, orphanMinAgeSeconds)
		if err != nil {
			return nil, fmt.Errorf("--orphans: %w", err)
		}
		for _, c := range orphans {
			ids = append(ids, c.Session.ID)
		}
	}
	if f.ghosts {
		ghosts, err := v.db.GhostCandidates(ctx, now, ghostMinAgeSeconds)
		if err != nil {
			return nil, fmt.Errorf("--ghosts: %w", err)
		}
		ghostIDs := make([]string, 0, len(ghosts))
		for _, g := range ghosts {
			ghostIDs = append(ghostIDs, g.Session.ID)
		}
		ids = intersectOrSet(ids, ghostIDs, f.orphans)
	}
	if !f.orphans && !f.ghosts {
		return nil, nil
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

func intersectOrSet(have, add []string, intersect bool) []string {
	if !intersect {
		return add
	}
	in := map[string]bool{}
	for _, id := range add {
		in[id] = true
	}
	var out []string
	for _, id := range have {
		if in[id] {
			out = append(out, id)
		}
	}
	return out
}

func printSessions(o *options, list []sessionRow) error {
	rows := make([][]string, 0, len(list))
	for _, s := range list {
		state := "open"
		if s.EndReason != nil {
			state = *s.EndReason
		} else if s.EndedAt != nil {
			state = "ended"
		}
		rows = append(rows, []string{s.ID, s.Source, relative(o.clock.UnixMicros, int64(s.StartedAtUnix*1e6)), state,
			strconv.FormatInt(s.MessageCount, 10), deref(s.ParentSessionID), deref(s.Title)})
	}
	fmt.Fprintf(o.stdout, "%d session%s\n", len(list), plural(len(list), "", "s"))
	return renderTable(o.stdout, []string{"ID", "SOURCE", "STARTED", "STATE", "MSGS", "PARENT", "TITLE"}, rows)
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func runSessionsShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("sessions show takes exactly one ID")
	}
	o, err := loadOptions(c, "sessions show")
	if err != nil {
		return err
	}
	return showSession(c.Context, o, c.Args().First())
}

// lineageData is the lineage of a session: ancestors (oldest first), children, and the tip.
type lineageData struct {
	Ancestors []sessionRow `json:"ancestors"`
	Children  []sessionRow `json:"children"`
	Tip       string       `json:"compression_tip,omitempty"`
}

func (v *homeView) lineage(ctx context.Context, id string) (*lineageData, error) {
	if v.db == nil || id == "" {
		return nil, nil
	}
	anc, err := v.db.Ancestors(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ancestors of %s: %w", id, err)
	}
	kids, err := v.db.Children(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", id, err)
	}
	l := &lineageData{Ancestors: []sessionRow{}, Children: []sessionRow{}}
	for i := len(anc) - 1; i >= 0; i-- {
		l.Ancestors = append(l.Ancestors, toSessionRow(anc[i]))
	}
	for _, k := range kids {
		l.Children = append(l.Children, toSessionRow(k))
	}
	if rule := statedb.TipRuleForSchema(v.schema.Version); rule != statedb.TipNone {
		tip, err := v.db.CompressionTip(ctx, id, rule)
		if err != nil {
			return nil, fmt.Errorf("compression tip of %s: %w", id, err)
		}
		if tip != id {
			l.Tip = tip
		}
	}
	return l, nil
}

func showSession(ctx context.Context, o *options, prefix string) error {
	v, err := loadViewWithDB(ctx, o)
	if err != nil {
		return err
	}
	defer v.close()
	id, err := v.db.ResolveID(ctx, prefix)
	if errors.Is(err, statedb.ErrAmbiguous) {
		return usagef("session id prefix %q matches more than one session", prefix)
	}
	if err != nil {
		return fmt.Errorf("session %q: %w", prefix, err)
	}
	s, err := v.db.Session(ctx, id)
	if err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	lineage, err := v.lineage(ctx, id)
	if err != nil {
		return err
	}
	lock, err := v.db.LiveCompressionLock(ctx, id, o.clock.Unix)
	if err != nil {
		return fmt.Errorf("compression lock of %s: %w", id, err)
	}
	keys := entriesPointingAt(v, id)
	if o.json {
		return emitJSON(o, newEnvelope(v, o, result{data: map[string]any{"session": toSessionRow(s), "lineage": lineage,
			"entries": keys, "compression_lock": lock}}))
	}
	if o.quiet {
		return nil
	}
	return printSession(o, toSessionRow(s), lineage, keys, lock)
}

func entriesPointingAt(v *homeView, id string) []string {
	keys := []string{}
	for _, e := range v.routing {
		if e.SessionID == id {
			keys = append(keys, e.Key)
		}
	}
	return keys
}

func printSession(o *options, s sessionRow, l *lineageData, keys []string, lock *statedb.CompressionLock) error {
	w := o.stdout
	fmt.Fprintf(w, "id          %s\nsource      %s\nstarted     %s (%s)\n", s.ID, s.Source, s.StartedAt, relative(o.clock.UnixMicros, int64(s.StartedAtUnix*1e6)))
	if s.EndedAt != nil {
		fmt.Fprintf(w, "ended       %s (%s)\n", *s.EndedAt, deref(s.EndReason))
	} else {
		fmt.Fprintf(w, "ended       no (open)\n")
	}
	fmt.Fprintf(w, "title       %s\nmessages    %d\nparent      %s\n", deref(s.Title), s.MessageCount, deref(s.ParentSessionID))
	fmt.Fprintf(w, "entries     %v\n", keys)
	if lock != nil {
		fmt.Fprintf(w, "compression lock held by %s until %s\n", lock.Holder, unixToRFC3339(lock.ExpiresAt))
	}
	return printLineage(o, l)
}

func printLineage(o *options, l *lineageData) error {
	if l == nil {
		return nil
	}
	for _, a := range l.Ancestors {
		fmt.Fprintf(o.stdout, "ancestor    %s (%s)\n", a.ID, deref(a.EndReason))
	}
	for _, c := range l.Children {
		fmt.Fprintf(o.stdout, "child       %s (%s, %s)\n", c.ID, c.Source, deref(c.EndReason))
	}
	if l.Tip != "" {
		fmt.Fprintf(o.stdout, "compression tip  %s\n", l.Tip)
	}
	return nil
}
