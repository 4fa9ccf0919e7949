package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// words is the vocabulary of generated message text: chat, coding and
// operations words, so that FTS queries over the benchmark home hit realistic
// posting lists. A few entries are non-ASCII.
var words = strings.Fields(`the a to and of in is it that for on with this you be can I we not
are have but or as if do will so what my at by from just your all there about how use file code
run test error build deploy server config log database query table index commit branch merge
review function return value string list map import package module install update version release
python go rust javascript docker kubernetes nginx postgres sqlite redis cache memory disk cpu
latency timeout retry request response header token api key endpoint json yaml schema migration
backup restore cron schedule gateway session message telegram discord slack restart shutdown
resume suspend compress summary context window model prompt reply agent tool call result output
input path directory permission user group owner please thanks could should would maybe check
again looks works fixed broken issue bug feature plan draft meeting tomorrow today yesterday
week morning evening dinner recipe garlic onion tomato pasta train flight hotel ticket budget
invoice payment receipt tax report chart graph figure paper thesis chapter section paragraph
sentence word translate summarize explain compare list steps example because therefore however
first second next finally note warning important détail café naïve 東京 データ 🙂`)

// toolNames are the tool names of assistant tool calls and tool results.
var toolNames = []string{"terminal", "read_file", "write_file", "web_search", "web_extract",
	"browser_navigate", "execute_code", "search_files", "patch", "memory", "send_message", "todo"}

// textGen draws message contents from its own PCG stream.
type textGen struct {
	r     *rand.Rand
	b     strings.Builder
	scale float64
}

// newTextGen seeds the content stream (independent of the plan stream).
// Every drawn length is multiplied by scale.
func newTextGen(seed uint64, scale float64) *textGen {
	return &textGen{r: rand.New(rand.NewPCG(seed, 0x54_45_58_54)), scale: scale} // "TEXT"
}

// sentences returns prose of at least n bytes.
func (t *textGen) sentences(n int) string {
	t.b.Reset()
	start := true
	for t.b.Len() < n {
		w := words[t.r.IntN(len(words))]
		switch {
		case start:
			t.b.WriteString(capitalize(w))
			start = false
		default:
			t.b.WriteByte(' ')
			t.b.WriteString(w)
		}
		if t.r.IntN(12) == 0 {
			t.b.WriteString(t.pick(".", ".", "?", "!", ".\n\n"))
			if t.b.Len() < n {
				t.b.WriteByte(' ')
			}
			start = true
		}
	}
	return strings.TrimRight(t.b.String(), " ") + "."
}

// pick returns one of the choices.
func (t *textGen) pick(choices ...string) string { return choices[t.r.IntN(len(choices))] }

// length draws a size: base plus an exponential tail with the given mean,
// times the generator's scale.
func (t *textGen) length(base, mean float64) int {
	return int((base + t.r.ExpFloat64()*mean) * t.scale)
}

// user returns the text of a user message.
func (t *textGen) user() string { return t.sentences(t.length(15, 95)) }

// assistant returns the text of an assistant reply, sometimes with code.
func (t *textGen) assistant() string {
	s := t.sentences(t.length(50, 300))
	if t.r.IntN(6) == 0 {
		s += "\n\n```bash\n" + t.pick("ls -la", "git status", "go test ./...", "systemctl restart hermes",
			"sqlite3 ~/.hermes/state.db .tables", "docker compose up -d") + "\n```"
	}
	return s
}

// toolCall returns a tool call id, a tool name and the call's arguments.
func (t *textGen) toolCall() (id, name, args string) {
	id = fmt.Sprintf("call_%016x", t.r.Uint64())
	name = toolNames[t.r.IntN(len(toolNames))]
	args = fmt.Sprintf(`{\"%s\": \"%s\"}`, t.pick("command", "path", "query", "url"), t.pick(
		"ls -la ~/projects", "/home/hermes/notes/todo.md", "sqlite fts5 trigram", "https://example.org/docs",
		"grep -rn TODO .", "python3 -m pytest -q"))
	return id, name, args
}

// toolCallsJSON renders the tool_calls column (json.dumps of the list).
func toolCallsJSON(calls [][3]string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range calls {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"id": "%s", "type": "function", "function": {"name": "%s", "arguments": "%s"}}`, c[0], c[1], c[2])
	}
	b.WriteByte(']')
	return b.String()
}

// toolResult returns the content of a tool result message.
func (t *textGen) toolResult() string {
	out := t.sentences(t.length(30, 200))
	out = strings.ReplaceAll(out, "\n", `\n`)
	out = strings.ReplaceAll(out, `"`, `\"`)
	return fmt.Sprintf(`{"output": "%s", "exit_code": %d}`, out, t.pick1in(8))
}

// pick1in returns 1 with probability 1/n, else 0.
func (t *textGen) pick1in(n int) int {
	if t.r.IntN(n) == 0 {
		return 1
	}
	return 0
}
