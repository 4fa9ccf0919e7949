package complete

import "testing"

// TestShellSafe: routing keys and session ids as the runtime writes them complete; a value
// bash's compgen -W would expand or split (found by a helper's audit: a key holding
// "$(touch …)" ran on TAB) is left out.
func TestShellSafe(t *testing.T) {
	for v, want := range map[string]bool{
		"agent:main:slack:dm:D043095675":               true,
		"agent:main:telegram:group:-100123:456":        true,
		"20260713_221054_f44293":                       true,
		"agent:main:discord:dm:名前":                     true,
		"user@example.com/x=1,y%2":                     true,
		"":                                             false,
		"agent:main:slack:dm:$(touch${IFS}/tmp/pwned)": false,
		"a`id`":       false,
		"two words":   false,
		"new\nline":   false,
		"esc\x1b[31m": false,
		"quote'":      false,
		"glob*":       false,
		"~home":       false,
		"semi;colon":  false,
	} {
		if got := shellSafe(v); got != want {
			t.Errorf("shellSafe(%q) = %v, want %v", v, got, want)
		}
	}
}
