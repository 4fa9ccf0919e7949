// Command gendocs writes docs/cli.md, the command reference, from sessionctl's command table
// (urfave/cli's ToMarkdown). Run it from the module root after changing a command, a flag or
// a usage text: go run ./scripts/gendocs (go generate ./... runs it too).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/sessionctl/sessionctl/commands"
)

func main() {
	out := flag.String("o", "docs/cli.md", "the `FILE` to write")
	flag.Parse()
	md, err := commands.Markdown()
	if err == nil {
		err = os.WriteFile(*out, []byte(md), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
