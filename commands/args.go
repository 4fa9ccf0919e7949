package commands

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// normaliseArgs reorders args so that urfave/cli sees every flag: global flags given after
// the command move before it, and a command's own flags move before its positional
// arguments (urfave/cli v2 stops parsing flags at the first positional argument, while the
// contract lets flags appear anywhere: `resume mark KEY --apply`).
func normaliseArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	globals, rest := splitLeadingFlags(args[1:], app.Flags)
	if len(rest) > 1 && rest[0] == "help" && findCommand(app.Commands, rest[1]) != nil {
		rest = append(append([]string(nil), rest[1:]...), "--help")
	}
	if len(rest) == 0 {
		return args
	}
	cmd := findCommand(app.Commands, rest[0])
	if cmd == nil {
		return args
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
			break
		}
		path = append(path, tail[0])
		rest = tail[1:]
		cmd = sub
	}
	movedGlobals, own, positional := partitionArgs(rest, app.Flags, cmd.Flags)
	out := []string{args[0]}
	out = append(out, globals...)
	out = append(out, movedGlobals...)
	out = append(out, path...)
	out = append(out, own...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
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
	name := strings.TrimLeft(tok, "-")
	if k := strings.IndexByte(name, '='); k >= 0 {
		name = name[:k]
	}
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

// didYouMean is ` (did you mean "X"?)` for the candidate nearest to word, or "" when none is
// near enough: an edit distance of at most a third of the word (at least 1), or a candidate
// that starts with word.
func didYouMean(word string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(word, c)
		if strings.HasPrefix(c, word) && len(word) >= 2 {
			d = min(d, 1)
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" || bestDist > max(1, len(word)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
