package commands

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInvalidRoutingRowSkipped (issue 29 items 2 and 4): a gateway_routing row whose
// entry_json is not JSON ends no read: the runtime's load skips it (json.loads raises, the
// row is passed over) and imports the sessions.json entry of its key where there is one. So
// status, check and entries list exit 0 or 1; check reports the row without a mirror entry
// as skipped, naming it; the key with a mirror entry lists as legacy. sessions list reads
// state.db's sessions only and lists them as before.
func TestInvalidRoutingRowSkipped(t *testing.T) {
	home := fixtureHome(t, genDB)
	const first = "agent:main:discord:dm:0" // sorts before keyBoth
	execSQL(t, filepath.Join(home, "state.db"),
		`UPDATE gateway_routing SET entry_json = '{"session_key": ' WHERE session_key = '`+keyBoth+`'`,
		`INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at)
			SELECT scope, '`+first+`', '[1, 2', updated_at FROM gateway_routing WHERE session_key = '`+keyBoth+`'`)
	for _, args := range [][]string{{"status"}, {"--json", "check"}, {"--json", "entries", "list", "--limit", "0"}} {
		code, stdout, stderr := runCLI(t, append([]string{"--home", home, "--now", fixtureNow}, args...)...)
		what := strings.Join(args, " ")
		if code != ExitOK && code != ExitFindings {
			t.Errorf("%s: exit %d, stderr %q", what, code, stderr)
		}
		switch args[len(args)-1] {
		case "check":
			if !strings.Contains(stdout, `"subject": "`+first+`"`) || !strings.Contains(stdout, "entry_json is not valid JSON") {
				t.Errorf("check names no skipped row %s:\n%s", first, stdout)
			}
		case "0":
			if !strings.Contains(stdout, `"skipped_by_runtime": "entry_json is not valid JSON"`) || !strings.Contains(stdout, `"legacy": true`) {
				t.Errorf("entries list: the bad row not skipped, or its key's mirror entry not loaded:\n%s", stdout)
			}
		}
	}
	if code, _, stderr := runCLI(t, "--home", home, "--now", fixtureNow, "sessions", "list", "--limit", "0"); code != ExitOK || stderr != "" {
		t.Errorf("sessions list: exit %d, stderr %q", code, stderr)
	}
}
