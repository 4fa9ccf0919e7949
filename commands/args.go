package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/suggest"
	"github.com/urfave/cli/v2"
)

// normaliseArgs reorders args so that urfave/cli sees every flag: global flags given after
// the command move before it, and a command's own flags move before its positional
// arguments (urfave/cli v2 stops parsing flags at the first positional argument, while the
// contract lets flags appear anywhere: `resume mark KEY --apply`). A flag the command does
// not know, or a flag left without its value (`--reason` last, or followed by another flag:
// `--reason --apply`), is a usage error here, with the nearest flag suggested, before urfave
// could take the next flag as the value.
func normaliseArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	globals, rest := splitLeadingFlags(args[1:], app.Flags)
	if err := checkFlags(globals, app.Flags, nil, ""); err != nil {
		return nil, err
	}
	if len(rest) > 1 && rest[0] == "help" && findCommand(app.Commands, rest[1]) != nil {
		rest = append(append([]string(nil), rest[1:]...), "--help")
	}
	if len(rest) == 0 {
		return args, nil
	}
	cmd := findCommand(app.Commands, rest[0])
	if cmd == nil {
		return args, nil
	}
	path := []string{rest[0]}
	rest = rest[1:]
	for len(cmd.Subcommands) > 0 {
		_, tail := splitLeadingFlags(rest, cmd.Flags)
		if len(tail) == 0 {
			break
		}
		sub := findCommand(cmd.Subcommands, tail[0])
		if sub == nil {
			return nil, errUnknownSubcommand(cmd, tail[0])
		}
		path = append(path, tail[0])
		rest = tail[1:]
		cmd = sub
	}
	movedGlobals, own, positional := partitionArgs(rest, app.Flags, cmd.Flags)
	if len(cmd.Subcommands) == 0 { // a group without a known subcommand: its action says so
		if err := checkFlags(own, cmd.Flags, app.Flags, strings.Join(path, " ")); err != nil {
			return nil, err
		}
		if err := checkFlags(movedGlobals, app.Flags, cmd.Flags, strings.Join(path, " ")); err != nil {
			return nil, err
		}
	}
	out := []string{args[0]}
	out = append(out, globals...)
	out = append(out, movedGlobals...)
	out = append(out, path...)
	out = append(out, own...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out, nil
}

// builtinFlags are urfave/cli's own flags (read here, not from cli.HelpFlag, which urfave
// writes on every run).
var builtinFlags = []string{"help", "h", "version", "v"}

// checkFlags checks the flag tokens of one group (as split by splitLeadingFlags or
// partitionArgs): each must be a flag of flags (or, for the next-token test, of other), and
// a flag that takes a value must have one that is not itself a flag. cmd names the command
// for the messages ("" for the global flags).
func checkFlags(tokens []string, flags, other []cli.Flag, cmd string) error {
	isFlag := func(tok string) bool {
		if tok == "--" {
			return true
		}
		name := flagName(tok)
		return isFlagToken(tok) && (lookupFlag(flags, tok) != nil || lookupFlag(other, tok) != nil || slices.Contains(builtinFlags, name))
	}
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		if !isFlagToken(tok) || tok == "--" {
			continue
		}
		f := lookupFlag(flags, tok)
		if f == nil {
			if slices.Contains(builtinFlags, flagName(tok)) {
				continue
			}
			return unknownFlag(tok, flags, other, cmd)
		}
		if flagWidth(tokens, i, flags) == 1 {
			continue
		}
		if i+1 >= len(tokens) || isFlag(tokens[i+1]) {
			return usagef("%s needs a value%s", dashed(flagName(tok)), flagHint(f))
		}
		i++
	}
	return nil
}

// unknownFlag is the usage error for a flag the command does not know, suggesting the nearest.
func unknownFlag(tok string, flags, other []cli.Flag, cmd string) error {
	var names []string
	for _, f := range append(append([]cli.Flag(nil), flags...), other...) {
		for _, n := range f.Names() {
			names = append(names, dashed(n))
		}
	}
	where, help := "", "sessionctl --help"
	if cmd != "" {
		where, help = cmd+": ", "sessionctl "+cmd+" --help"
	}
	name := dashed(flagName(tok))
	if near := suggest.Nearest(name, names); near != "" && len(name) > 3 {
		return usagef("%sunknown flag %s; did you mean %s? (see %s)", where, name, near, help)
	}
	return usagef("%sunknown flag %s (see %s)", where, name, help)
}

// flagHint is the values a flag takes when its usage text lists them ("`R`: a, b or c"),
// as " (a, b or c)".
func flagHint(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	usage := df.GetUsage()
	if i := strings.Index(usage, "`: "); i > 0 && strings.HasPrefix(usage, "`") {
		return " (" + usage[i+3:] + ")"
	}
	return ""
}

func flagName(tok string) string {
	name := strings.TrimLeft(tok, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

// dashed writes a flag name as typed: -q, --home.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// splitLeadingFlags returns the flag tokens at the start of args and the remainder.
func splitLeadingFlags(args []string, flags []cli.Flag) (leading, rest []string) {
	i := 0
	for i < len(args) && isFlagToken(args[i]) {
		if args[i] == "--" {
			break
		}
		i += flagWidth(args, i, flags)
	}
	if i > len(args) {
		i = len(args)
	}
	return args[:i], args[i:]
}

// partitionArgs separates global flags, the command's own flags and positional arguments.
func partitionArgs(args []string, global, own []cli.Flag) (globals, flags, positional []string) {
	for i := 0; i < len(args); {
		tok := args[i]
		if tok == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !isFlagToken(tok) {
			positional = append(positional, tok)
			i++
			continue
		}
		target := &flags
		set := own
		if lookupFlag(own, tok) == nil && lookupFlag(global, tok) != nil {
			target, set = &globals, global
		}
		w := flagWidth(args, i, set)
		end := min(i+w, len(args))
		*target = append(*target, args[i:end]...)
		i = end
	}
	return globals, flags, positional
}

func isFlagToken(tok string) bool {
	return len(tok) > 1 && strings.HasPrefix(tok, "-")
}

// flagWidth is the number of tokens the flag at args[i] uses: 2 when it takes a value that
// is given as the next token, else 1.
func flagWidth(args []string, i int, flags []cli.Flag) int {
	tok := args[i]
	if strings.Contains(tok, "=") {
		return 1
	}
	f := lookupFlag(flags, tok)
	if f == nil {
		return 1
	}
	if _, isBool := f.(*cli.BoolFlag); isBool {
		return 1
	}
	return 2
}

func lookupFlag(flags []cli.Flag, tok string) cli.Flag {
	name := flagName(tok)
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// didYouMean is `; did you mean "X"?` for the candidate nearest to word, or "".
func didYouMean(word string, candidates []string) string {
	if near := suggest.Nearest(word, candidates); near != "" {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}
