package complete

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/sessionctl/sessionctl/commands/internal/cmdtree"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// The requests a script makes: "PROG __complete WORD... CUR" (this package's bash, zsh and
// fish scripts: every word typed before the cursor, then the word being typed, "" when
// none), and urfave/cli's "PROG WORD... --generate-bash-completion" (the PowerShell script
// as urfave/cli wrote it: the word being typed is given only when it starts with "-").
const (
	Marker       = "__complete"
	LegacyMarker = "--generate-bash-completion"
)

// Request is one completion request: the words before the cursor (the program's name first)
// and the word being typed.
type Request struct {
	Words  []string
	Cur    string
	legacy bool // urfave/cli's request: a flag last may be one whose value is typed
}

// Parse reads args (the program's name first) as a completion request, false when they are
// none.
func Parse(args []string) (Request, bool) {
	switch {
	case len(args) > 2 && args[1] == Marker:
		return Request{Words: append([]string{args[0]}, args[2:len(args)-1]...), Cur: args[len(args)-1]}, true
	case len(args) > 1 && args[len(args)-1] == LegacyMarker:
		typed := args[:len(args)-1]
		if last := typed[len(typed)-1]; len(typed) > 1 && strings.HasPrefix(last, "-") {
			return Request{Words: typed[:len(typed)-1], Cur: last, legacy: true}, true
		}
		return Request{Words: typed, legacy: true}, true
	}
	return Request{}, false
}

// Env is what the values of a command's arguments are read with.
type Env struct {
	Getenv func(string) string // the environment, for the home (HERMES_HOME)
	Now    time.Time
}

// line is what the words before the cursor say: the command reached, the global flags'
// values, the flags and positional arguments given, and the flag whose value is typed.
type line struct {
	root, cmd  *cmdtree.Command
	globals    map[string]string // long name → value
	given      map[string]bool   // long names of the flags given
	positional []string
	afterDash  bool          // a bare "--" was given: only arguments follow
	pending    *cmdtree.Flag // the last word is a flag whose value is being typed
}

// lookup is the flag tok names: the command's own, else a global one.
func (l *line) lookup(tok string) (f *cmdtree.Flag, global bool) {
	name, _, _ := strings.Cut(strings.TrimLeft(tok, "-"), "=")
	if f := l.cmd.Flag(name); f != nil && l.cmd != l.root {
		return f, false
	}
	f = l.root.Flag(name)
	return f, f != nil
}

func readLine(root *cmdtree.Command, words []string) *line {
	l := &line{root: root, cmd: root, globals: map[string]string{}, given: map[string]bool{}}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case l.afterDash:
			l.positional = append(l.positional, w)
		case w == "--":
			l.afterDash = true
		case len(w) > 1 && w[0] == '-':
			f, global := l.lookup(w)
			if f == nil {
				continue
			}
			l.given[f.Names[0]] = true
			_, value, inline := strings.Cut(w, "=")
			if f.Value && !inline {
				if i+1 == len(words) {
					l.pending = f
					break
				}
				i++
				value = words[i]
			}
			if global {
				l.globals[f.Names[0]] = value
			}
		default:
			if sub := l.cmd.Find(w); sub != nil && len(l.positional) == 0 {
				l.cmd = sub
				continue
			}
			l.positional = append(l.positional, w)
		}
	}
	return l
}

// Answer is what the word being typed completes to: a flag's values when its value is
// typed, the flags (own, then global) for a word starting with "-" before any bare "--",
// the subcommands of a group, else the values of the command's next argument (routing KEYs
// and session ids from the home, the fields entries set takes, the shells). Each starts with
// the word typed.
func Answer(ctx context.Context, root *cmdtree.Command, r Request, env Env) []string {
	if r.legacy && len(r.Cur) > 1 {
		if l := readLine(root, r.Words); !l.afterDash {
			if f, _ := l.lookup(r.Cur); f != nil && f.Value && !strings.Contains(r.Cur, "=") {
				r = Request{Words: append(slices.Clone(r.Words), r.Cur)}
			}
		}
	}
	l := readLine(root, r.Words)
	var out []string
	switch {
	case l.pending != nil:
		out = l.pending.Choices()
	case !l.afterDash && strings.HasPrefix(r.Cur, "--") && strings.Contains(r.Cur, "="):
		name, _, _ := strings.Cut(r.Cur, "=")
		if f, _ := l.lookup(name); f != nil {
			for _, v := range f.Choices() {
				out = append(out, name+"="+v)
			}
		}
	case !l.afterDash && strings.HasPrefix(r.Cur, "-"):
		out = l.flags(r.Cur)
	case len(l.cmd.Subcommands) > 0 && len(l.positional) == 0:
		for _, s := range l.cmd.Subcommands {
			out = append(out, s.Name)
		}
	default:
		out = l.argValues(ctx, env)
	}
	return slices.DeleteFunc(out, func(v string) bool { return !strings.HasPrefix(v, r.Cur) || !shellSafe(v) })
}

// flags are the flags that may come next, as typed: the command's own then the global ones
// (at the top level, only those, and --version), --help, and no flag already given unless
// it repeats. Short
// names are offered only for a lone "-".
func (l *line) flags(cur string) []string {
	sets := [][]cmdtree.Flag{l.cmd.Flags}
	if l.cmd != l.root {
		sets = append(sets, l.root.Flags)
	}
	var out []string
	for _, set := range sets {
		for _, f := range set {
			if l.given[f.Names[0]] && !f.Many {
				continue
			}
			for _, n := range f.Names {
				if len(n) > 1 || cur == "-" {
					out = append(out, cmdtree.Dashed(n))
				}
			}
		}
	}
	if out = append(out, "--help"); l.cmd == l.root {
		out = append(out, "--version")
	}
	return out
}

// argValues are the values of the command's next argument, by the names its ArgsUsage gives
// the arguments in order ("KEY FIELD=VALUE...": a KEY, then fields; a name ending in "..."
// takes every later position): KEY and ID from the home (those given left out), FIELD=VALUE
// the fields the home's generation reads ("suspended=", its value typed after), SHELL the
// shells.
func (l *line) argValues(ctx context.Context, env Env) []string {
	var slots []string
	for _, w := range strings.Fields(l.cmd.ArgsUsage) {
		if w != "|" && !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "[") {
			slots = append(slots, w)
		}
	}
	n := len(l.positional)
	if len(slots) == 0 {
		return nil
	}
	slot := slots[min(n, len(slots)-1)]
	many := strings.HasSuffix(slot, "...")
	if n >= len(slots) && !many {
		return nil
	}
	var values []string
	switch strings.TrimSuffix(slot, "...") {
	case "SHELL":
		return slices.Clone(Shells)
	case "KEY":
		values = keys(ctx, l.options(env))
	case "ID":
		values = sessionIDs(ctx, l.options(env))
	case "FIELD=VALUE":
		for _, f := range fields(ctx, l.options(env)) {
			values = append(values, f+"=")
		}
	}
	return slices.DeleteFunc(values, func(v string) bool { return slices.Contains(l.positional, v) })
}

// options are the home the request names (--home, --profile, else the environment's), read
// as completion reads: the zero Home when it cannot be resolved (no values).
func (l *line) options(env Env) home.Options {
	o := home.Options{Clock: sessionsjson.ClockFromTime(env.Now), Command: "completion"}
	if dir, set := l.globals["home"]; set && dir == "" {
		return o
	}
	h, err := sessionsjson.ResolveHome(sessionsjson.HomeOptions{Home: l.globals["home"], Profile: l.globals["profile"], Getenv: env.Getenv})
	if err == nil {
		o.Home = h
	}
	return o
}

// fields are the entry fields the home's generation reads.
func fields(ctx context.Context, o home.Options) []string {
	h, err := home.Open(ctx, o, home.Read)
	if err != nil {
		return nil
	}
	defer h.Close()
	return h.Rules.FieldNames()
}
