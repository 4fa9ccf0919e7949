package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// jsonDoc is what docs/json.md documents: the envelope's top-level fields, and per command
// the members of data it names.
type jsonDoc struct {
	envelope map[string]bool
	data     map[string]map[string]bool // command → data members
	optional map[string]map[string]bool // command → members documented "(when present)"
}

// readJSONDoc parses docs/json.md: the rows of the "Envelope fields" table, and the bullets of
// "`data` per command" whose bold names one or more commands in backticks. A bullet's members
// are `{a, b, c}` when it starts with one, else the backticked names outside parentheses up
// to the first full stop; `data.x` anywhere in the bullet names member x too.
func readJSONDoc(t *testing.T) jsonDoc {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "docs", "json.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	doc := jsonDoc{envelope: map[string]bool{}, data: map[string]map[string]bool{}, optional: map[string]map[string]bool{}}
	envSection, dataSection, ok := strings.Cut(text, "## `data` per command")
	if !ok {
		t.Fatal("docs/json.md has no \"## `data` per command\" section")
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(envSection, -1) {
		doc.envelope[m[1]] = true
	}
	dataSection, _, _ = strings.Cut(dataSection, "\n## ")
	for _, bullet := range regexp.MustCompile(`(?m)^- `).Split(dataSection, -1)[1:] {
		head, body, ok := strings.Cut(bullet, ":")
		if !ok {
			continue
		}
		commands := backticked(head)
		if len(commands) == 0 {
			continue
		}
		members, optional := dataMembers(strings.Join(strings.Fields(body), " "))
		for _, m := range regexp.MustCompile("`data\\.([a-z_]+)`").FindAllStringSubmatch(bullet, -1) {
			members[m[1]] = true
		}
		for _, group := range commands {
			for _, cmd := range expandCommands(group) {
				doc.data[cmd] = members
				doc.optional[cmd] = optional
			}
		}
	}
	return doc
}

// backticked lists the `code` spans of s.
func backticked(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// expandCommands turns "resume mark|clear" into both commands.
func expandCommands(group string) []string {
	words := strings.Fields(group)
	last := words[len(words)-1]
	var out []string
	for _, alt := range strings.Split(last, "|") {
		out = append(out, strings.Join(append(words[:len(words)-1:len(words)-1], alt), " "))
	}
	return out
}

// dataMembers reads the members a bullet's body names (see readJSONDoc) and which of them
// are documented as present only sometimes.
func dataMembers(body string) (members, optional map[string]bool) {
	members, optional = map[string]bool{}, map[string]bool{}
	body = strings.TrimSpace(body)
	if strings.HasPrefix(body, "`{") {
		inner, _, _ := strings.Cut(strings.TrimPrefix(body, "`{"), "}`")
		for _, name := range strings.Split(inner, ",") {
			members[strings.TrimSpace(name)] = true
		}
		return members, optional
	}
	depth, inCode, start, last := 0, false, 0, ""
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '`':
			if inCode && depth == 0 {
				last = body[start:i]
				members[last] = true
			}
			inCode, start = !inCode, i+1
		case inCode:
		case c == '(':
			if depth == 0 && strings.HasPrefix(body[i:], "(when present)") {
				optional[last] = true
			}
			depth++
		case c == ')':
			depth--
		case c == '.' && depth == 0 && (i+1 == len(body) || body[i+1] == ' '):
			return members, optional
		}
	}
	return members, optional
}

// TestJSONDocMatchesEnvelope: the fields docs/json.md documents are exactly those the code
// emits: every top-level key of every envelope (successes, findings, a usage error, a refused
// write) is documented and every documented one is emitted; every data member a command
// emits is documented for it, and every member documented for it is emitted (unless
// documented "(when present)").
func TestJSONDocMatchesEnvelope(t *testing.T) {
	doc := readJSONDoc(t)
	if len(doc.envelope) < 10 || len(doc.data) < 5 {
		t.Fatalf("docs/json.md parsed to %d envelope fields and %d commands: the test no longer reads it", len(doc.envelope), len(doc.data))
	}
	home := fixtureHome(t, genDB)
	other := fixtureHome(t, genJSON)
	run := func(args ...string) map[string]json.RawMessage {
		t.Helper()
		_, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow, "--json"}, args...)...)
		var env map[string]json.RawMessage
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Fatalf("%v: not one JSON document: %v\nstdout: %s\nstderr: %s", args, err, stdout, stderr)
		}
		return env
	}
	runs := [][]string{
		{"status"},
		{"check"},
		{"check", "--fail-on", "warn"},
		{"entries", "list", "--limit", "2"},
		{"entries", "show", keyBoth},
		{"sessions", "list", "--limit", "3"},
		{"sessions", "show", "20260713_181054"},
		{"maintain"},
		{"resume", "mark", keyBoth, "--reason"}, // usage error
		{"suspend", keyBoth},
		{"suspend", keyBoth, "--apply"},
		{"prune-ghosts", "--apply"},
		{"finalize-orphans"},
		{"repoint"},
		{"resume", "clear", "--stale"},
		{"suspend-stuck"},
		{"prune", "--older-than", "7d"},
		{"prune", "--older-than", "7d", "--apply"},
		{"space"},
		{"compact"},
		{"holders"},
		{"backup"},
		{"restore", filepath.Join(home, "sessionctl", "backups", "20260716T093000Z")},
		{"backup", "verify", filepath.Join(home, "sessionctl", "backups", "20260716T093000Z")},
	}
	seen := map[string]bool{}
	for _, args := range runs {
		checkEnvelope(t, doc, args, run(args...), seen)
	}
	// undo, and undo refused: a journal of another home
	js := journals(t, home)
	if len(js) == 0 {
		t.Fatal("no journal written")
	}
	checkEnvelope(t, doc, []string{"undo"}, run("undo", js[0], "--apply"), seen)
	for _, args := range [][]string{{"journal", "list"}, {"journal", "show", js[0]}, {"journal", "prune", "--older-than", "1d"},
		{"entries", "set", keyBoth, "suspended=true"}, {"entries", "rm", keyBoth}, {"relocate"}} {
		checkEnvelope(t, doc, args, run(args...), seen)
	}
	_, stdout, _ := runCLI(t, "--home", other, "--now", fixtureNow, "--json", "undo", js[0], "--apply")
	var refused map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &refused); err != nil {
		t.Fatalf("refused undo: %v\n%s", err, stdout)
	}
	if !strings.Contains(string(refused["error"]), `"kind": "refused"`) {
		t.Errorf("undo of another home's journal: error %s, want kind refused", refused["error"])
	}
	checkEnvelope(t, doc, []string{"undo (refused)"}, refused, seen)

	var missing []string
	for k := range doc.envelope {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/json.md documents envelope fields no run emitted: %v", missing)
	}
}

// checkEnvelope checks one envelope against the documentation and records its keys in seen.
func checkEnvelope(t *testing.T, doc jsonDoc, args []string, env map[string]json.RawMessage, seen map[string]bool) {
	t.Helper()
	for k := range env {
		seen[k] = true
		if !doc.envelope[k] {
			t.Errorf("%v: envelope field %q is not documented in docs/json.md", args, k)
		}
	}
	for k := range doc.envelope {
		if _, ok := env[k]; !ok {
			t.Errorf("%v: documented envelope field %q is missing", args, k)
		}
	}
	var command string
	if err := json.Unmarshal(env["command"], &command); err != nil {
		t.Errorf("%v: command: %v", args, err)
		return
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(env["data"], &data); err != nil || data == nil {
		return // null (or not an object): nothing to compare
	}
	documented, ok := doc.data[command]
	if !ok {
		t.Errorf("%v: docs/json.md documents no data for %q, which emits %v", args, command, sortedKeys(data))
		return
	}
	for k := range data {
		if !documented[k] {
			t.Errorf("%v: data.%s of %q is not documented in docs/json.md", args, k, command)
		}
	}
	if len(documented) > 0 && len(data) > 0 && command != "undo" && !strings.Contains(command, "-") {
		for k := range documented {
			if _, ok := data[k]; !ok && !doc.optional[command][k] {
				t.Errorf("%v: documented data.%s of %q is missing", args, k, command)
			}
		}
	}
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestReadmeOutcomes: README.md has an "Outcomes" section with a row for every exit code the
// CLI can end with, and its cron section explains --fail-on, --ignore and --quiet.
func TestReadmeOutcomes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, outcomes, ok := strings.Cut(string(raw), "\n## Outcomes\n")
	if !ok {
		t.Fatal(`README.md has no "## Outcomes" section`)
	}
	outcomes, _, _ = strings.Cut(outcomes, "\n## ")
	for _, code := range []string{"0", "1", "2", "3", "4", "5", "6", "130, 143"} {
		if !regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(code) + ` \|`).MatchString(outcomes) {
			t.Errorf("README.md's Outcomes has no row for exit code %s", code)
		}
	}
	if !strings.Contains(outcomes, "undo") {
		t.Error("README.md's Outcomes does not say how undo finishes")
	}
	_, cron, ok := strings.Cut(string(raw), "\n## From cron\n")
	if !ok {
		t.Fatal(`README.md has no "## From cron" section`)
	}
	for _, flag := range []string{"--fail-on", "--ignore", "--quiet"} {
		if !strings.Contains(cron, flag) {
			t.Errorf("README.md's cron section does not explain %s", flag)
		}
	}
}
