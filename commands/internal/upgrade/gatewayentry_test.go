package upgrade

import (
	"testing"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// TestGatewayEntryOfPythonConstants: the v18 step reads sessions.json members as json.load
// does (issue 29 item 6): an entry holding NaN or Infinity updates its row like any other.
func TestGatewayEntryOfPythonConstants(t *testing.T) {
	for _, raw := range []string{
		`{"session_id": "s1", "session_key": "k", "input_tokens": NaN}`,
		`{"session_id": "s1", "estimated_cost_usd": Infinity, "x": [-Infinity]}`,
	} {
		e, ok, stop := gatewayEntryOf(sessionsjson.Member{Key: "k", Raw: []byte(raw)})
		if !ok || stop || e.id != "s1" || e.values["session_key"] != "k" {
			t.Errorf("%s: ok %v, stop %v, entry %+v", raw, ok, stop, e)
		}
	}
}
