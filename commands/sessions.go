package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
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
	return listSessions(c, o, f)
}

// openWithDB opens the home for a read that needs state.db.
func openWithDB(c *cli.Context, o *options) (*home.Home, error) {
	h, err := home.Open(c.Context, o.Options, home.Read)
	if err != nil {
		return nil, err
	}
	if err := h.NeedDB(); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

func listSessions(c *cli.Context, o *options, f sessionsFilter) error {
	h, err := openWithDB(c, o)
	if err != nil {
		return err
	}
	defer h.Close()
	ctx := c.Context
	if o.json {
		shown := 0
		return emitJSONStream(o, newEnvelope(h, o, result{}), "sessions", func(emit func(any) error) error {
			return eachSessionRow(ctx, h, f, func(r home.SessionRow) error {
				shown++
				return emit(r)
			})
		}, func() (map[string]any, error) {
			total, err := countSessions(ctx, h, f, shown)
			return map[string]any{"total": total}, err
		})
	}
	if o.quiet {
		return nil
	}
	var list []home.SessionRow
	if err := eachSessionRow(ctx, h, f, func(r home.SessionRow) error {
		list = append(list, r)
		return nil
	}); err != nil {
		return err
	}
	total, err := countSessions(ctx, h, f, len(list))
	if err != nil {
		return err
	}
	if err := printSessions(o, list); err != nil {
		return err
	}
	noteLimit(o, len(list), total)
	return nil
}

// countSessions is the number of sessions the filter selects without --limit, given that
// shown of them were listed: shown itself unless the limit may have cut the list, else a
// second walk that reads no message counts.
func countSessions(ctx context.Context, h *home.Home, f sessionsFilter, shown int) (int, error) {
	if f.limit == 0 || shown < f.limit {
		return shown, nil
	}
	f.limit = 0
	total := 0
	err := eachSession(ctx, h, f, true, func(statedb.Session) error {
		total++
		return nil
	})
	return total, err
}

// noteLimit says on stderr that --limit cut a list of total to shown: a list is never
// shortened silently.
func noteLimit(o *options, shown, total int) {
	if shown < total {
		fmt.Fprintf(o.stderr, "sessionctl: showing %d of %d (--limit 0 for all)\n", shown, total)
	}
}

// eachSessionRow streams the sessions the filter selects, newest first.
func eachSessionRow(ctx context.Context, h *home.Home, f sessionsFilter, fn func(home.SessionRow) error) error {
	return eachSession(ctx, h, f, false, func(s statedb.Session) error { return fn(home.NewSessionRow(s)) })
}

// eachSession streams the sessions the filter selects, newest first; skipCounts leaves the
// message counts at 0.
func eachSession(ctx context.Context, h *home.Home, f sessionsFilter, skipCounts bool, fn func(statedb.Session) error) error {
	wanted, err := candidateIDs(ctx, h, f)
	if err != nil {
		return err
	}
	if wanted != nil && len(wanted) == 0 {
		return nil
	}
	filter := statedb.SessionFilter{Source: f.source, Open: f.open, Ended: f.ended, IDs: wanted, Limit: f.limit, SkipMessageCounts: skipCounts}
	if err := h.DB.EachSession(ctx, filter, fn); err != nil {
		return fmt.Errorf("state.db: %w", err)
	}
	return nil
}

// candidateIDs narrows the listing to repair candidates; nil means no narrowing.
func candidateIDs(ctx context.Context, h *home.Home, f sessionsFilter) ([]string, error) {
	now := h.Opts.Clock.Unix
	var ids []string
	if f.orphans {
		orphans, err := h.DB.FinalizeCandidates(ctx, now, statedb.DefaultOrphanMinAge)
		if err != nil {
			return nil, fmt.Errorf("--orphans: %w", err)
		}
		for _, c := range orphans {
			ids = append(ids, c.Session.ID)
		}
	}
	if f.ghosts {
		ghosts, err := h.DB.GhostCandidates(ctx, now, statedb.DefaultGhostMinAge)
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

func printSessions(o *options, list []home.SessionRow) error {
	rows := make([][]string, 0, len(list))
	for _, s := range list {
		state := "open"
		if s.EndReason != nil {
			state = *s.EndReason
		} else if s.EndedAt != nil {
			state = "ended"
		}
		rows = append(rows, []string{s.ID, s.Source, relative(o.Clock.UnixMicros, int64(s.StartedAtUnix*1e6)), state,
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
	return showSession(c, o, c.Args().First())
}

// lineageData is the lineage of a session: ancestors (oldest first), children, and the tip.
type lineageData struct {
	Ancestors []home.SessionRow `json:"ancestors"`
	Children  []home.SessionRow `json:"children"`
	Tip       string            `json:"compression_tip,omitempty"`
}

// lineageOf reads the lineage of session id for output (nil without state.db or id).
func lineageOf(c *cli.Context, h *home.Home, id string) (*lineageData, error) {
	l, err := h.Lineage(c.Context, id)
	if l == nil || err != nil {
		return nil, err
	}
	out := &lineageData{Ancestors: []home.SessionRow{}, Children: []home.SessionRow{}, Tip: l.Tip}
	for _, s := range l.Ancestors {
		out.Ancestors = append(out.Ancestors, home.NewSessionRow(s))
	}
	for _, s := range l.Children {
		out.Children = append(out.Children, home.NewSessionRow(s))
	}
	return out, nil
}

func showSession(c *cli.Context, o *options, prefix string) error {
	h, err := openWithDB(c, o)
	if err != nil {
		return err
	}
	defer h.Close()
	ctx := c.Context
	id, err := h.DB.ResolveID(ctx, prefix)
	if errors.Is(err, statedb.ErrAmbiguous) {
		return usagef("session id prefix %q matches more than one session", prefix)
	}
	if err != nil {
		return fmt.Errorf("session %q: %w", prefix, err)
	}
	s, err := h.DB.Session(ctx, id)
	if err != nil {
		return fmt.Errorf("session %s: %w", id, err)
	}
	lineage, err := lineageOf(c, h, id)
	if err != nil {
		return err
	}
	lock, err := h.DB.LiveCompressionLock(ctx, id, o.Clock.Unix)
	if err != nil {
		return fmt.Errorf("compression lock of %s: %w", id, err)
	}
	keys := entriesPointingAt(h, id)
	if o.json {
		return emitJSON(o, newEnvelope(h, o, result{data: map[string]any{"session": home.NewSessionRow(s), "lineage": lineage,
			"entries": keys, "compression_lock": lock}}))
	}
	if o.quiet {
		return nil
	}
	return printSession(o, home.NewSessionRow(s), lineage, keys, lock)
}

func entriesPointingAt(h *home.Home, id string) []string {
	keys := []string{}
	for _, e := range h.Routing.Entries {
		if e.SessionID == id {
			keys = append(keys, e.Key)
		}
	}
	return keys
}

func printSession(o *options, s home.SessionRow, l *lineageData, keys []string, lock *statedb.CompressionLock) error {
	w := o.stdout
	fmt.Fprintf(w, "id          %s\nsource      %s\nstarted     %s (%s)\n", s.ID, s.Source, s.StartedAt, relative(o.Clock.UnixMicros, int64(s.StartedAtUnix*1e6)))
	if s.EndedAt != nil {
		fmt.Fprintf(w, "ended       %s (%s)\n", *s.EndedAt, deref(s.EndReason))
	} else {
		fmt.Fprintf(w, "ended       no (open)\n")
	}
	fmt.Fprintf(w, "title       %s\nmessages    %d\nparent      %s\n", deref(s.Title), s.MessageCount, deref(s.ParentSessionID))
	fmt.Fprintf(w, "entries     %v\n", keys)
	if lock != nil {
		fmt.Fprintf(w, "compression lock held by %s until %s\n", lock.Holder, home.UnixToRFC3339(lock.ExpiresAt))
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
