// Package complete is what a shell completes sessionctl's command lines with: the scripts
// (bash's, zsh's and PowerShell's after urfave/cli v2's own, see scripts/; fish's written from
// the command table), and the answer to their requests (Answer): flags, a flag's values,
// subcommands, and the values a home holds for a command's arguments (routing KEYs, session
// ids, fields). Completion is read-only and never fails loudly: a home that cannot be read
// has no candidates.
package complete

import (
	"context"
	_ "embed" // the scripts
	"strings"
	"unicode"

	"github.com/sessionctl/sessionctl/commands/internal/cmdtree"
	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/statedb"
)

// The scripts, with PROG for the program's name (fish's is the head of the script fish
// writes).
var (
	//go:embed scripts/bash
	bashScript string
	//go:embed scripts/zsh
	zshScript string
	//go:embed scripts/powershell
	powershellScript string
	//go:embed scripts/fish
	fishScript string
)

// Shells are the shells sessionctl completes in.
var Shells = []string{"bash", "zsh", "fish", "powershell"}

// Script is the completion script of shell for the program root (its command table), false
// for a shell it has none for.
func Script(shell string, root *cmdtree.Command) (string, bool) {
	if shell == "fish" {
		return fish(root), true
	}
	script, ok := map[string]string{"bash": bashScript, "zsh": zshScript, "powershell": powershellScript}[shell]
	return strings.ReplaceAll(script, "PROG", root.Name), ok
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
