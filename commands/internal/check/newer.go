package check

import (
	"fmt"

	"github.com/sessionctl/sessionctl/commands/internal/home"
	"github.com/sessionctl/sessionctl/sessionsjson"
)

// A home written by a generation newer than sessionctl knows (sessionsjson.Rules.Verified
// false) is read by the newest known generation's rules, but what its runtime does is not
// verified. There every finding says what the stores hold and claims nothing the runtime does
// about it — no entry skipped, no field dropped on a save, nothing the next start does — and
// names no sessionctl command that writes, since each is refused (exit 4). One finding says
// that the next-start preview is unknown.

// verified reports whether the home's generation is one sessionctl knows.
func verified(h *home.Home) bool { return h.Rules.Verified() }

// say is a finding's message, or the part of one, on this home: known on a generation
// sessionctl knows (what the runtime does, what fixes it), newer on one it does not (the
// facts alone).
func say(h *home.Home, known, newer string) string {
	if verified(h) {
		return known
	}
	return newer
}

// newer reports a generation newer than sessionctl knows: its sessions.json when no state.db
// says so (db.schema-unknown does when one does), and that the next start is not previewed.
func newer(h *home.Home) []Finding {
	if verified(h) {
		return nil
	}
	var out []Finding
	if h.DB == nil && h.Gen == sessionsjson.GenNewer {
		out = append(out, Finding{SessionsJSONNewer, Error, "sessions.json", fmt.Sprintf(
			"its _README is not one this sessionctl knows: a generation newer than it (%s); reads work, every write is refused (exit 4); upgrade sessionctl",
			newestKnown())})
	}
	return append(out, Finding{StartPreviewUnknown, Info, "next start", PreviewUnknown(h)})
}

// newestKnown names the newest generation sessionctl knows, with its newest schema.
func newestKnown() string {
	v := sessionsjson.NewestKnownSchema()
	return fmt.Sprintf("the newest it knows is %s, schema v%d", sessionsjson.GenerationForSchema(v), v)
}

// PreviewUnknown says why the next gateway start is not previewed on this home ("" when it
// is): a newer generation's start-up rules are not known.
func PreviewUnknown(h *home.Home) string {
	if verified(h) {
		return ""
	}
	what := "the generation of sessions.json (its _README)"
	if h.DB != nil {
		what = fmt.Sprintf("schema v%d", h.Schema.Version)
	}
	return fmt.Sprintf("unknown for a newer generation: %s is newer than this sessionctl knows (%s), and what that runtime's start does (crash recovery, stuck-loop suspension, load-time prune, auto-resume) is not predicted",
		what, newestKnown())
}

// newerMirrorFinding is a difference between the sessions.json mirror and gateway_routing on
// a newer generation: what differs, not what the runtime's next save makes of it.
func newerMirrorFinding(d home.MirrorDiff) Finding {
	switch d.Kind {
	case home.MirrorMissing:
		return Finding{RoutingMirrorMissing, Info, d.Key, "in gateway_routing but not in the sessions.json mirror: tools reading sessions.json miss it"}
	case home.MirrorOnly:
		return Finding{RoutingMirrorOnly, Warn, d.Key, "only in the sessions.json mirror, not in gateway_routing: sessionctl lists it as a legacy entry (sessionctl entries show KEY)"}
	default:
		return Finding{RoutingMirrorDiffers, Info, d.Key, "sessions.json mirror differs from gateway_routing: sessionctl reads gateway_routing"}
	}
}
