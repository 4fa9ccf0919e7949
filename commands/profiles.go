package commands

import (
	"context"
	"fmt"
	"github.com/sessionctl/sessionctl/commands/internal/listout"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/fanout"
	"github.com/sessionctl/sessionctl/sessionsjson"
	"github.com/urfave/cli/v2"
)

// allProfilesCommands are the commands --all-profiles runs over every home: those that only
// read, and maintain (each home's run takes that home's lock in turn).
var allProfilesCommands = []string{"status", "check", "entries list", "entries show", "sessions list",
	"sessions show", "space", "holders", "upgrade-check", "journal list", "maintain"}

// multiRun is a run over every profile (--all-profiles) or in NDJSON form (--ndjson): each
// home's run is a whole run of its own (one envelope, its own exit code), joined by a
// fanout.Stream.
type multiRun struct {
	all, ndjson bool
	home        string   // --home: the root to list the profiles of ("" when not given)
	homeFlag    []string // --home as given
	globals     []string // the other global flags
	rest        []string // the command, its flags and arguments
}

// parseMulti takes --all-profiles, --ndjson and --home out of the normalised args' global
// flags; ok is false when neither of the first two is given.
func parseMulti(app *cli.App, args []string) (m multiRun, ok bool, err error) {
	globals, rest := splitLeadingFlags(args[1:], app.Flags)
	m.rest = rest
	for i := 0; i < len(globals); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(globals[i], "-"), "=")
		switch name {
		case "all-profiles", "ndjson":
			on := true
			if hasValue {
				if on, err = strconv.ParseBool(value); err != nil {
					return m, false, usagef("--%s=%s: not a boolean", name, value)
				}
			}
			m.all, m.ndjson = m.all || name == "all-profiles" && on, m.ndjson || name == "ndjson" && on
		case "home":
			if !hasValue && i+1 < len(globals) {
				i++
				value = globals[i]
			}
			m.home, m.homeFlag = value, []string{"--home=" + value}
		default:
			m.globals = append(m.globals, globals[i])
		}
	}
	return m, m.all || m.ndjson, nil
}

// check refuses what --all-profiles cannot do: a command other than the read-only ones and
// maintain, a --profile (it names one home), a --metrics-file (each home would overwrite it).
func (m multiRun) check(app *cli.App, args []string) error {
	if !m.all {
		return nil
	}
	cmd := commandName(app, args)
	if cmd != "" && !slices.Contains(allProfilesCommands, cmd) {
		return usagef("--all-profiles runs only %s, not %s", strings.Join(allProfilesCommands, ", "), cmd)
	}
	for _, tok := range append(m.globals, m.rest...) {
		switch name := flagName(tok); {
		case tok == "--":
			return nil
		case name == "profile" || name == "metrics-file":
			return usagef("--all-profiles cannot be combined with --%s", name)
		}
	}
	return nil
}

// runMulti runs args (normalised) once per home, or once in NDJSON form, and returns the
// worst exit code: the highest, as the contract's codes grow with severity (a failed or
// interrupted write above a refusal above findings); an interrupt stops at that home.
func runMulti(ctx context.Context, app *cli.App, m multiRun, args []string, stdout, stderr io.Writer, s settings) int {
	form := fanout.Sections
	switch {
	case m.ndjson:
		form = fanout.Lines
		m.globals = append(m.globals, "--json")
	case listout.Requested(args[1:]) == listout.JSON || envJSON():
		form = fanout.Array
	}
	out := fanout.New(stdout, form)
	homes, err := m.homes()
	if err == nil {
		err = m.check(app, args)
	}
	if err != nil {
		code := finish(ctx, newApp(out.Next(""), stderr, s, &runState{}), args, &runState{}, err)
		return max(code, endStream(out, stderr))
	}
	worst := ExitOK
	for _, h := range homes {
		sub := append(append(append([]string{args[0]}, m.globals...), h.flags...), m.rest...)
		worst = max(worst, run(ctx, sub, out.Next(h.title), stderr, s))
		if ctx.Err() != nil {
			break
		}
	}
	return max(worst, endStream(out, stderr))
}

// runHome is one home a multiRun runs on: its --home and --profile flags, and its section title.
type runHome struct {
	flags []string
	title string
}

// homes are the homes to run on: every profile, or (without --all-profiles) the one the
// flags name.
func (m multiRun) homes() ([]runHome, error) {
	if !m.all {
		return []runHome{{flags: m.homeFlag}}, nil
	}
	homes, err := sessionsjson.AllProfiles(sessionsjson.HomeOptions{Home: m.home, Getenv: os.Getenv})
	if err != nil {
		return nil, usage(err)
	}
	out := make([]runHome, 0, len(homes))
	for _, h := range homes {
		out = append(out, runHome{flags: []string{"--home=" + h.Root, "--profile=" + h.Profile},
			title: "== profile " + h.Profile + ": " + h.Dir + " =="})
	}
	return out, nil
}

// endStream ends the joined output; a failed write is a data error (exit 4).
func endStream(out *fanout.Stream, stderr io.Writer) int {
	if err := out.End(); err != nil {
		fmt.Fprintf(stderr, "sessionctl: %s\n", oneLine(err))
		return ExitData
	}
	return ExitOK
}
