package complete

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sessionctl/sessionctl/commands/internal/cmdtree"
)

// fish is fish's script for root: the functions of scripts/fish, then, for every command
// path, its subcommands, its flags and its arguments under the condition that the command
// line is at that path; the global flags everywhere.
func fish(root *cmdtree.Command) string {
	prog := root.Name
	var paths, valueFlags []string
	var b strings.Builder
	for _, f := range root.Flags {
		fishFlag(&b, prog, "", f)
		valueFlags = appendValueFlag(valueFlags, f)
	}
	fishCommand(&b, prog, "", root)
	root.Walk(func(path string, c *cmdtree.Command) {
		paths = append(paths, path)
		for _, f := range c.Flags {
			valueFlags = appendValueFlag(valueFlags, f)
		}
		fishCommand(&b, prog, path, c)
	})
	slices.Sort(valueFlags)
	head := strings.NewReplacer("PROG", prog, "VALUEFLAGS", strings.Join(slices.Compact(valueFlags), " "),
		"PATHS", fishQuoteAll(paths)).Replace(fishScript)
	return head + b.String()
}

// fishCommand writes the subcommands, flags and arguments of c, at path.
func fishCommand(b *strings.Builder, prog, path string, c *cmdtree.Command) {
	cond := fishQuote(strings.TrimSpace("__" + prog + "_at " + path))
	for _, s := range c.Subcommands {
		fmt.Fprintf(b, "complete -c %s -n %s -f -a %s -d %s\n", prog, cond, fishQuote(s.Name), fishQuote(s.Usage))
	}
	if path == "" {
		return
	}
	for _, f := range c.Flags {
		fishFlag(b, prog, cond, f)
	}
	files := len(c.Subcommands) == 0
	for _, w := range strings.Fields(c.ArgsUsage) {
		switch strings.TrimSuffix(w, "...") {
		case "KEY", "ID", "FIELD=VALUE", "SHELL":
			fmt.Fprintf(b, "complete -c %s -n %s -f -a '(__%s_values)'\n", prog, cond, prog)
			files = false
		}
	}
	if !files || strings.TrimSpace(c.ArgsUsage) == "" {
		fmt.Fprintf(b, "complete -c %s -n %s -f\n", prog, cond)
	}
}

// fishFlag writes flag f under cond ("" for everywhere): a value from its choices when it
// has some, else a file.
func fishFlag(b *strings.Builder, prog, cond string, f cmdtree.Flag) {
	fmt.Fprintf(b, "complete -c %s", prog)
	if cond != "" {
		fmt.Fprintf(b, " -n %s", cond)
	}
	for _, n := range f.Names {
		if len(n) == 1 {
			fmt.Fprintf(b, " -s %s", n)
		} else {
			fmt.Fprintf(b, " -l %s", n)
		}
	}
	if choices := f.Choices(); choices != nil {
		fmt.Fprintf(b, " -x -a %s", fishQuote(strings.Join(choices, " ")))
	} else if f.Value {
		b.WriteString(" -r")
	}
	fmt.Fprintf(b, " -d %s\n", fishQuote(strings.ReplaceAll(f.Usage, "`", "")))
}

// appendValueFlag adds f's names as typed to names when f takes a value.
func appendValueFlag(names []string, f cmdtree.Flag) []string {
	if !f.Value {
		return names
	}
	for _, n := range f.Names {
		names = append(names, cmdtree.Dashed(n))
	}
	return names
}

// fishQuote is s as one single-quoted fish word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func fishQuoteAll(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = fishQuote(w)
	}
	return strings.Join(quoted, " ")
}
