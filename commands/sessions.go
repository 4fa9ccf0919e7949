package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/sessionctl/sessionctl/commands/internal/age"
	"github.com/sessionctl/sessionctl/commands/internal/check"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/sessionctl/sessionctl/statedb"
	"github.com/urfave/cli/v2"
)

func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:      "sessions",
		Usage:     "state.db sessions",
		UsageText: "sessionctl sessions list --open",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list sessions (newest first)",
				ArgsUsage: " ",
				UsageText: "sessionctl sessions list --source telegram --limit 20\nsessionctl sessions list --orphans --limit 0",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "source", Usage: "only sessions of source `S`"},
					&cli.BoolFlag{Name: "open", Usage: "only open sessions"},
					&cli.BoolFlag{Name: "ended", Usage: "only ended sessions"},
					&cli.BoolFlag{Name: "orphans", Usage: "only orphaned compression continuations (finalize-orphans candidates)"},
					&cli.BoolFlag{Name: "ghosts", Usage: "only empty TUI ghosts (prune-ghosts candidates)"},
					&cli.IntFlag{Name: "limit", Value: 50, Usage: "show at most `N` sessions (0: all)"},
					&cli.StringFlag{Name: "since", Usage: "only sessions started at or after `T` (a time, or a duration ago: 7d)"},
					&cli.StringFlag{Name: "until", Usage: "only sessions started before `T` (a time, or a duration ago: 7d)"},
					&cli.StringFlag{Name: "title", Usage: "only sessions whose title contains `TEXT` (ASCII case-insensitive)"},
					&cli.IntFlag{Name: "min-messages", Usage: "only sessions with at least `N` messages"},
					&cli.StringFlag{Name: "sort", Value: "started", Usage: "order by `KEY`: started, ended, messages or id (newest, most first)"},
					&cli.BoolFlag{Name: "reverse", Usage: "reverse the order (oldest, fewest first)"},
					formatFlag(),
				},
				Action: runSessionsList,
			},
			{
				Name:      "show",
				Usage:     "show one session (a unique id prefix is enough)",
				ArgsUsage: "ID",
				UsageText: "sessionctl sessions show 20260713_221054",
				Action:    runSessionsShow,
			},
		},
	}
}

func runSessionsList(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sessions list takes no arguments")
	}
	o, err := loadOptions(c, "sessions list")
	if err != nil {
		return err
	}
	f, err := sessionQuery(c, o)
	if err != nil {
		return err
	}
	format, err := listFormat(c, o)
	if err != nil {
		return err
	}
	return listSessions(c, o, f, format)
}

// sessionOrders are the values of sessions list --sort.
var sessionOrders = map[string]statedb.SessionOrder{"started": statedb.OrderStarted, "ended": statedb.OrderEnded,
	"messages": statedb.OrderMessages, "id": statedb.OrderID}

// sessionQuery reads sessions list's filters.
func sessionQuery(c *cli.Context, o *options) (home.SessionQuery, error) {
	f := home.SessionQuery{Source: c.String("source"), Open: c.Bool("open"), Ended: c.Bool("ended"), Orphans: c.Bool("orphans"),
		Ghosts: c.Bool("ghosts"), Title: c.String("title"), MinMessages: c.Int("min-messages"), Reverse: c.Bool("reverse"), Limit: c.Int("limit")}
	order, ok := sessionOrders[c.String("sort")]
	switch {
	case f.Limit < 0 || f.MinMessages < 0:
		return f, usagef("--limit and --min-messages must be 0 or more")
	case f.Open && f.Ended:
		return f, usagef("--open and --ended exclude each other")
	case !ok:
		return f, usagef("--sort %q: one of started, ended, messages, id", c.String("sort"))
	}
	f.Order = order
	var err error
	if f.Since, err = startBound(c, o, "since"); err != nil {
		return f, err
	}
	f.Until, err = startBound(c, o, "until")
	return f, err
}

// startBound reads --since or --until: a duration (7d: that long before now) or a time
// (RFC 3339 or Unix seconds), as Unix seconds; nil when not given.
func startBound(c *cli.Context, o *options, name string) (*float64, error) {
	if !c.IsSet(name) {
		return nil, nil
	}
	value := c.String(name)
	if age, err := age.Parse(value); err == nil {
		t := o.Clock.Unix - age
		return &t, nil
	}
	at, err := sessionsjson.ParseNow(value)
	if err != nil {
		return nil, usagef("--%s %q: neither a duration (7d, 12h) nor a time (RFC 3339 or Unix seconds)", name, value)
	}
	return &at.Unix, nil
}

// openWithDB opens the home for a read that needs state.db, with purpose.
func openWithDB(c *cli.Context, o *options, purpose home.Purpose) (*home.Home, error) {
	h, err := home.Open(c.Context, o.Options, purpose)
	if err != nil {
		return nil, err
	}
	if err := h.NeedDB(); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// listSessions streams the sessions f selects in format; the routing index is not read.
func listSessions(c *cli.Context, o *options, f home.SessionQuery, format listout.Format) error {
	h, err := openWithDB(c, o, home.Database)
	if err != nil || (format == listout.Table && o.quiet) {
		return err
	}
	defer h.Close()
	ctx := c.Context
	out, err := startList(c, o, format, newEnvelope(h, o, result{}), listout.Spec[home.SessionRow]{Field: "sessions",
		Table: tableOf("ID", "SOURCE", "STARTED", "STATE", "MSGS", "PARENT", "TITLE"), Cells: func(s home.SessionRow) []string { return sessionCells(o, s) }})
	if err != nil {
		return err
	}
	shown, total := 0, 0
	err = listout.Pipe(ctx, func(ctx context.Context, emit func(home.SessionRow) error) error {
		return h.EachSession(ctx, f, func(s statedb.Session) error { return emit(home.NewSessionRow(s)) })
	}, func(s home.SessionRow) error {
		shown++
		return out.Add(s)
	})
	if err == nil {
		total, err = h.CountSessions(ctx, f, shown)
	}
	if err = out.End(err, map[string]any{"total": total}); err != nil || format != listout.Table {
		return err
	}
	fmt.Fprintf(o.stdout, "%d session%s\n", shown, plural(shown, "", "s"))
	noteLimit(o, shown, total)
	return nil
}

// noteLimit says on stderr that --limit cut a list of total to shown: a list is never
// shortened silently.
func noteLimit(o *options, shown, total int) {
	if shown < total {
		fmt.Fprintf(o.stderr, "sessionctl: showing %d of %d (--limit 0 for all)\n", shown, total)
	}
}

// sessionCells is a session's row in the sessions list table.
func sessionCells(o *options, s home.SessionRow) []string {
	state := "open"
	if s.EndReason != nil {
		state = *s.EndReason
	} else if s.EndedAt != nil {
		state = "ended"
	}
	return []string{s.ID, s.Source, relativeUnix(o, s.StartedAtUnix), state,
		strconv.FormatInt(s.MessageCount, 10), deref(s.ParentSessionID), deref(s.Title)}
}

// relativeUnix is relative for a Unix time, "-" for a time stored as text.
func relativeUnix(o *options, unix *float64) string {
	if unix == nil {
		return "-"
	}
	return check.Age(o.Clock.UnixMicros, int64(*unix*1e6))
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

func showSession(c *cli.Context, o *options, prefix string) error {
	h, err := openWithDB(c, o, home.Read)
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
	lineage, err := h.LineageRows(ctx, id)
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

func printSession(o *options, s home.SessionRow, l *home.LineageRows, keys []string, lock *statedb.CompressionLock) error {
	w := o.stdout
	fmt.Fprintf(w, "id          %s\nsource      %s\nstarted     %s (%s)\n", s.ID, s.Source, s.StartedAt, relativeUnix(o, s.StartedAtUnix))
	if s.EndedAt != nil {
		fmt.Fprintf(w, "ended       %s (%s)\n", *s.EndedAt, deref(s.EndReason))
	} else {
		fmt.Fprintf(w, "ended       no (open)\n")
	}
	fmt.Fprintf(w, "title       %s\nmessages    %d\nparent      %s\n", deref(s.Title), s.MessageCount, deref(s.ParentSessionID))
	fmt.Fprintf(w, "entries     %v\n", keys)
	if lock != nil {
		fmt.Fprintf(w, "compression lock held by %s until %s\n", lock.Holder, home.LockExpiry(lock))
	}
	return printLineage(o, l)
}

func printLineage(o *options, l *home.LineageRows) error {
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
