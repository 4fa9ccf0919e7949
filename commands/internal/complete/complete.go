// Package complete is what a shell completes sessionctl's command lines with: the scripts
// that ask sessionctl for candidates (urfave/cli v2's own, adapted: see scripts/), and the
// candidates a home holds for a command's arguments (routing KEYs, session ids). Completion
// is read-only and never fails loudly: a home that cannot be read has no candidates.
package complete

import (
	"context"
	_ "embed" // the scripts
	"slices"
	"strings"
	"unicode"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/statedb"
)

// The scripts, with PROG for the program's name (and, in fish's, WORDS for the commands
// whose arguments are completed from the home).
var (
	//go:embed scripts/bash
	bashScript string
	//go:embed scripts/zsh
	zshScript string
	//go:embed scripts/powershell
	powershellScript string
	//go:embed scripts/fish
	fishValues string
)

// Shells are the shells sessionctl completes in: Script's and fish (urfave/cli's
// ToFishCompletion, then FishValues).
var Shells = []string{"bash", "zsh", "fish", "powershell"}

// Script is the completion script of shell for the program prog, false for a shell it has
// none for (fish: see Shells).
func Script(shell, prog string) (string, bool) {
	script, ok := map[string]string{"bash": bashScript, "zsh": zshScript, "powershell": powershellScript}[shell]
	return strings.ReplaceAll(script, "PROG", prog), ok
}

// FishValues is the part of fish's script that completes the arguments of the commands
// named words from the home, by asking prog.
func FishValues(prog string, words []string) string {
	return strings.NewReplacer("PROG", prog, "WORDS", strings.Join(words, " ")).Replace(fishValues)
}

// Kind is what an argument's values are.
type Kind int

// Kinds of completed arguments.
const (
	Key       Kind = iota + 1 // a routing KEY
	SessionID                 // a state.db session id
)

// Arg is a positional argument whose values are completed from the home.
type Arg struct {
	Kind Kind
	Many bool // it repeats (KEY...): every position takes one
}

// ForArgs is the completed argument that a command's ArgsUsage names first ("KEY...", "ID",
// "KEY FIELD=VALUE"), false when its first word is none of KEY, KEY..., ID and ID....
func ForArgs(argsUsage string) (Arg, bool) {
	word, _, _ := strings.Cut(strings.TrimSpace(argsUsage), " ")
	name, many := strings.CutSuffix(word, "...")
	switch name {
	case "KEY":
		return Arg{Kind: Key, Many: many}, true
	case "ID":
		return Arg{Kind: SessionID, Many: many}, true
	}
	return Arg{}, false
}

// Values lists what the next argument completes to, given the arguments already typed: the
// home's values not given yet, and none once a single argument is given or when the home
// cannot be read.
func (a Arg) Values(ctx context.Context, o home.Options, given []string) []string {
	if !a.Many && len(given) > 0 {
		return nil
	}
	var all []string
	switch a.Kind {
	case Key:
		all = keys(ctx, o)
	case SessionID:
		all = sessionIDs(ctx, o)
	}
	return slices.DeleteFunc(all, func(v string) bool { return slices.Contains(given, v) || !shellSafe(v) })
}

// shellSafe reports whether v is a word every shell's completion takes as it is: letters,
// digits and ":._-@+/=,%" only. A value from the home with anything else (a space, a quote,
// "$(…)", a control character) is left out: bash's compgen -W would expand it, running what
// a hostile routing key holds.
func shellSafe(v string) bool {
	return v != "" && !strings.ContainsFunc(v, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(":._-@+/=,%", r)
	})
}

// keys are the routing index's keys, in order, as the runtime reads the index.
func keys(ctx context.Context, o home.Options) []string {
	h, err := home.Open(ctx, o, home.Read)
	if err != nil {
		return nil
	}
	defer h.Close()
	out := make([]string, len(h.Routing.Entries))
	for i, e := range h.Routing.Entries {
		out[i] = e.Key
	}
	return out
}

// sessionIDs are state.db's session ids, newest first.
func sessionIDs(ctx context.Context, o home.Options) []string {
	if o.Home.Validate() != nil {
		return nil
	}
	db, err := statedb.OpenReadOnly(ctx, o.Home.StateDB())
	if err != nil {
		return nil
	}
	defer db.Close()
	ids, _ := db.SessionIDs(ctx)
	return ids
}
