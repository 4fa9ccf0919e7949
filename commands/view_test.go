package commands

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInvalidRoutingRowFailsReads: a gateway_routing row whose entry_json is not JSON fails
// every read of a db-primary home with exit 4, naming the first such row in key order, also
// in check, which streams the rows once to compare them with the mirror before decoding them.
// sessions list reads state.db's sessions only, not the routing index, and still lists them.
func TestInvalidRoutingRowFailsReads(t *testing.T) {
	home := fixtureHome(t, genDB)
	const first = "agent:main:discord:dm:0" // sorts before keyBoth
	execSQL(t, filepath.Join(home, "state.db"),
		`UPDATE gateway_routing SET entry_json = '{"session_key": ' WHERE session_key = '`+keyBoth+`'`,
		`INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at)
			SELECT scope, '`+first+`', '[1, 2', updated_at FROM gateway_routing WHERE session_key = '`+keyBoth+`'`)
	for _, args := range [][]string{{"status"}, {"check"}, {"entries", "list", "--json"}} {
		code, _, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
		what := strings.Join(args, " ")
		if code != ExitData || !strings.Contains(stderr, `gateway_routing row "`+first+`"`) {
			t.Errorf("%s: exit %d, stderr %q", what, code, stderr)
		}
		assertErrorLine(t, what, stderr)
	}
	if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "sessions", "list", "--limit", "0"); code != ExitOK || stderr != "" {
		t.Errorf("sessions list: exit %d, stderr %q", code, stderr)
	}
}
