package cmdtree

import (
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// builtinFlags are the flags urfave/cli gives the program itself, as --help shows them.
var builtinFlags = []Flag{
	{Names: []string{"help", "h"}, Synopsis: "--help, -h", Help: "show help"},
	{Names: []string{"version", "v"}, Synopsis: "--version, -v", Help: "print the version"},
}

// environment is what the page says of the variables the flags' help does not explain.
var environment = [][2]string{
	{"HERMES_HOME", "the Hermes home when --home is not given (else ~/.hermes), as the runtime reads it"},
	{"NO_COLOR", "plain output when set and not empty (no-color.org), as --no-color"},
}

// Man is the man page (section 8) of root in roff (man(7)): NAME, SYNOPSIS, the root's
// description, the global options, every command as a subsection of COMMANDS (its usage text
// as --help shows it: the synopsis and the examples; then its options, --help included), and
// ENVIRONMENT. The
// text is escaped for roff: a backslash, a line's leading dot or quote, and every character
// beyond ASCII (as \[uXXXX]). date is the page's date (YYYY-MM-DD), version the program's.
func Man(root *Command, date, version string) string {
	var b strings.Builder
	prog := root.Name
	fmt.Fprintf(&b, ".TH %s 8 \"%s\" %s \"System Administration\"\n", strings.ToUpper(prog), date, quoteArg(prog+" "+version))
	fmt.Fprintf(&b, ".SH NAME\n%s", fill(prog+" \\- "+escape(root.Usage)))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n[\\fIglobal options\\fR] \\fIcommand\\fR\n[\\fIcommand options\\fR] [\\fIarguments\\fR ...]\n", prog)
	b.WriteString(".SH DESCRIPTION\n")
	paragraphs(&b, root.Description, false)
	b.WriteString(".SH GLOBAL OPTIONS\n")
	options(&b, append(append([]Flag(nil), root.Flags...), builtinFlags...))
	b.WriteString(".SH COMMANDS\n")
	root.Walk(func(path string, c *Command) {
		fmt.Fprintf(&b, ".SS %s\n%s", quoteArg(path), fill(escape(c.Usage)))
		b.WriteString(".PP\n.nf\n.RS 4\n")
		for _, l := range strings.Split(c.UsageText, "\n") {
			b.WriteString(noFill(escape(l)))
		}
		b.WriteString(".RE\n.fi\n")
		if c.Description != "" {
			paragraphs(&b, c.Description, true)
		}
		b.WriteString(".PP\nOptions:\n")
		options(&b, append(append([]Flag(nil), c.Flags...), builtinFlags[0]))
	})
	b.WriteString(".SH ENVIRONMENT\n")
	for _, f := range root.Flags {
		for _, v := range f.EnvVars {
			fmt.Fprintf(&b, ".TP\n.B %s\nas %s (a flag on the command line wins)\n", v, escape(Dashed(f.Names[0])))
		}
	}
	for _, e := range environment {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s", e[0], fill(escape(e[1])))
	}
	return b.String()
}

// options writes flags as a tagged list: the flag as --help shows it, bold names and italic
// value, then its help.
func options(b *strings.Builder, flags []Flag) {
	for _, f := range flags {
		var tag []string
		for _, word := range strings.Fields(f.Synopsis) {
			word, comma := strings.CutSuffix(word, ",")
			font := `\fI`
			if strings.HasPrefix(word, "-") {
				font = `\fB`
			}
			if tag = append(tag, font+escape(word)+`\fR`); comma {
				tag[len(tag)-1] += ","
			}
		}
		fmt.Fprintf(b, ".TP\n%s\n%s", strings.Join(tag, " "), fill(escape(f.Help)))
	}
}

// paragraphs writes text: blank lines part paragraphs, a line "- item" is a list item;
// first says whether the text begins a new paragraph (it follows other text).
func paragraphs(b *strings.Builder, text string, first bool) {
	parted := first
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			parted = true
		case strings.HasPrefix(l, "- "):
			b.WriteString(".IP \\(bu 2\n" + fill(escape(l[2:])))
			parted = false
		default:
			if parted {
				b.WriteString(".PP\n")
			}
			b.WriteString(fill(escape(l)))
			parted = false
		}
	}
}

// lineWidth is the longest input line the page has (man pages are read and diffed at 80
// columns; mandoc -Tlint holds a longer text line against it).
const lineWidth = 80

// fill is roff text s in filled lines of at most lineWidth bytes, broken between words (a
// word longer is a line of its own), each guarded against reading as a request.
func fill(s string) string {
	var b strings.Builder
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > lineWidth {
			b.WriteString(guard(line) + "\n")
			line = ""
		}
		line = strings.TrimPrefix(line+" "+w, " ")
	}
	b.WriteString(guard(line) + "\n")
	return b.String()
}

// noFill is roff text s, one line of no-fill text (.nf), in input lines of at most lineWidth
// bytes: each but the last is broken after a space and ends with \c, which joins it to the
// next.
func noFill(s string) string {
	var b strings.Builder
	for len(s) > lineWidth {
		cut := strings.LastIndex(s[:lineWidth-2], " ")
		if cut <= 0 {
			break
		}
		b.WriteString(guard(s[:cut+1]) + "\\c\n")
		s = s[cut+1:]
	}
	b.WriteString(guard(s) + "\n")
	return b.String()
}

// guard makes the text line l safe to start a line: a leading dot or quote is prefixed with
// \& (else roff reads a request).
func guard(l string) string {
	if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
		return `\&` + l
	}
	return l
}

// glyphs are the characters beyond ASCII the help uses, as roff writes them so that every
// output device has them (groff's ascii device, LC_ALL=C man, drops \[u2026]).
var glyphs = map[rune]string{'…': "...", '—': `\(em`, '–': `\(en`, '→': `\(->`, '≥': `\(>=`, '≤': `\(<=`, '×': `\(mu`}

// escape is s as roff text: backslashes as \e, hyphens as \- (so that options are copied
// and searched as typed), the glyphs as glyphs has them and every other character beyond
// ASCII as \[uXXXX].
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch g, ok := glyphs[r]; {
		case ok:
			b.WriteString(g)
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7e:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// quoteArg is s as one argument of a roff request.
func quoteArg(s string) string {
	return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"`
}

// Date is the page's date: the day of the commit the binary was built from, as Go records it
// (a release), else today's (a build without VCS information, such as a test's).
func Date(now time.Time) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if t, err := time.Parse(time.RFC3339, s.Value); s.Key == "vcs.time" && err == nil {
				return t.UTC().Format(time.DateOnly)
			}
		}
	}
	return now.UTC().Format(time.DateOnly)
}
