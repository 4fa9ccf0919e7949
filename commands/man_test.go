package commands

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestManHoldsHelp: every command --help lists has its subsection in the man page, holding
// every flag its --help shows (its own, and the global ones under GLOBAL OPTIONS), every
// environment variable a help names ([$SESSIONCTL_JSON]) is in ENVIRONMENT, and --version is
// there (issue 32: urfave/cli's ToMan left out --version and the variables).
func TestManHoldsHelp(t *testing.T) {
	code, page, stderr := runCLI(t, "man")
	if code != 0 || stderr != "" {
		t.Fatalf("man: exit %d, stderr %q", code, stderr)
	}
	text := regexp.MustCompile(`\\f[BIR]|\\c\n`).ReplaceAllString(strings.ReplaceAll(page, `\-`, "-"), "")
	sections := map[string]string{}
	for _, part := range regexp.MustCompile(`(?m)^\.S[SH] `).Split(text, -1)[1:] {
		head, body, _ := strings.Cut(part, "\n")
		sections[strings.Trim(head, `"`)] = body
	}
	flagLine := regexp.MustCompile(`(?m)^   (--?[a-z][a-z-]*)`)
	envVar := regexp.MustCompile(`\[\$([A-Z_]+)\]`)
	var check func(path []string)
	check = func(path []string) {
		_, help, _ := runCLI(t, append(path, "--help")...)
		name, section := strings.Join(path, " "), "GLOBAL OPTIONS"
		if len(path) > 0 {
			section = name
		}
		_, ok := sections[section]
		if !ok {
			t.Errorf("the page has no section %q", section)
		}
		own, global, _ := strings.Cut(help, "GLOBAL OPTIONS:")
		for _, part := range []struct{ text, section string }{{own, section}, {global, "GLOBAL OPTIONS"}} {
			for _, m := range flagLine.FindAllStringSubmatch(part.text, -1) {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(sections[part.section]) {
					t.Errorf("%s --help shows %s; the page's %q does not", name, m[1], part.section)
				}
			}
		}
		for _, m := range envVar.FindAllStringSubmatch(help, -1) {
			if !strings.Contains(sections["ENVIRONMENT"], ".B "+m[1]+"\n") {
				t.Errorf("%s --help names $%s; the page's ENVIRONMENT does not", name, m[1])
			}
		}
		_, cmds, found := strings.Cut(help, "COMMANDS:\n")
		if !found {
			return
		}
		cmds, _, _ = strings.Cut(cmds, "\n\n")
		for _, l := range strings.Split(cmds, "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				check(append(append([]string(nil), path...), strings.TrimSuffix(f[0], ",")))
			}
		}
	}
	check(nil)
	if !strings.Contains(sections["GLOBAL OPTIONS"], "--version, -v") {
		t.Error("the page has no --version")
	}
}

// TestNoColorSaidAsDone: the README and --no-color's help say what useColor does (issue 32):
// NO_COLOR turns colour off when set and not empty, as no-color.org defines it, not "set to
// anything" (an empty NO_COLOR= leaves colour on: TestColourOnlyOnATerminal).
func TestNoColorSaidAsDone(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, help, _ := runCLI(t, "--help")
	for what, text := range map[string]string{"README.md": strings.Join(strings.Fields(string(readme)), " "), "--help": help} {
		if strings.Contains(text, "set to anything") || !strings.Contains(text, "NO_COLOR`"+" set and not empty") && !strings.Contains(text, "NO_COLOR is set and not empty") {
			t.Errorf("%s does not say that NO_COLOR turns colour off when set and not empty", what)
		}
	}
}
