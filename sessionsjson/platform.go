package sessionsjson

import (
	"strings"
	"unicode/utf8"
)

// PlatformSet is what one generation's Platform(value) accepts (upstream gateway/config.py
// class Platform): the members of its enum, and the bundled plugin platforms its _missing_
// hook admits — the directories plugins/platforms/<name>/ of that tree holding __init__.py and
// plugin.yaml (Platform._scan_bundled_plugin_platforms). Plugin platforms a user installs
// register at run time (gateway/platform_registry.py); sessionctl cannot see them and treats
// such names as unknown.
type PlatformSet struct {
	builtin, bundled map[string]bool
}

func newPlatformSet(builtin, bundled []string) *PlatformSet {
	s := &PlatformSet{builtin: map[string]bool{}, bundled: map[string]bool{}}
	for _, p := range builtin {
		s.builtin[p] = true
	}
	for _, p := range bundled {
		s.bundled[p] = true
	}
	return s
}

// Builtin reports whether p is a member of the generation's enum.
func (s *PlatformSet) Builtin(p string) bool { return s.builtin[p] }

// Bundled reports whether p is a bundled plugin platform of the generation's tree.
func (s *PlatformSet) Bundled(p string) bool { return s.bundled[p] }

// Resolve is Platform(value) of the generation for a raw JSON value: the member's value and
// true when the runtime resolves it, "" and false when it raises ValueError. An exact value
// of the enum resolves in every generation. With normalise (the _missing_ hook, r0506+),
// a string is stripped and lower-cased as Python does and then resolves when it names a
// member or a bundled plugin platform; a non-string or blank value never resolves.
func (s *PlatformSet) Resolve(raw []byte, normalise bool) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	v := internedString(raw)
	if s.builtin[v] {
		return v, true
	}
	if !normalise {
		return "", false
	}
	v, ok := pyLowerASCII(strings.TrimFunc(v, pyIsSpace))
	if !ok || !(s.builtin[v] || s.bundled[v]) {
		return "", false
	}
	return internedValue(v), true
}

// pyLowerASCII is Python's str.lower() of s when the result is ASCII (every platform name
// is): ok is false when it is not. Only U+212A KELVIN SIGN lower-cases to an ASCII letter
// from outside ASCII; U+0130 becomes "i" and a combining dot, which is not ASCII.
func pyLowerASCII(s string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\u212a':
			b.WriteByte('k')
		case r >= 'A' && r <= 'Z':
			b.WriteByte(byte(r) + 'a' - 'A')
		case r < utf8.RuneSelf:
			b.WriteByte(byte(r))
		default:
			return "", false
		}
	}
	return b.String(), true
}

// The Platform enum of each generation, and the commits that added its members.
var (
	// enumR0418: Platform at cb4addaca.
	enumR0418 = []string{"local", "telegram", "discord", "whatsapp", "slack", "signal", "mattermost",
		"matrix", "homeassistant", "email", "sms", "dingtalk", "api_server", "webhook", "feishu", "wecom",
		"wecom_callback", "weixin", "bluebubbles", "qqbot"}
	// enumR0506: + yuanbao (ab6879634, 2026-04-26); Platform at 3b750715a.
	enumR0506 = append(enumR0418[:len(enumR0418):len(enumR0418)], "yuanbao")
	// enumR0525: + msgraph_webhook (46a6f3902, 2026-05-08); Platform at 3914089d5.
	enumR0525 = append(enumR0506[:len(enumR0506):len(enumR0506)], "msgraph_webhook")
	// enumR0703: + whatsapp_cloud (984e6cb5b, merged after 3914089d5) and relay (b0999c82f,
	// 2026-06-17); Platform at 52d0d671e and c2a3b9ce5.
	enumR0703 = append(enumR0525[:len(enumR0525):len(enumR0525)], "whatsapp_cloud", "relay")
)

// The bundled plugin platforms of each generation's tree (git ls-tree plugins/platforms/ of
// the generation's commit: every directory there has __init__.py and plugin.yaml). Names that
// are also enum members (discord, telegram, …) resolve as members either way.
var (
	// bundledR0506: 3b750715a; the _missing_ hook and irc arrived in 8f144fe36 (2026-04-29),
	// teams in b3137d758.
	bundledR0506 = []string{"irc", "teams"}
	// bundledR0525: 3914089d5; + google_chat (44cd79e79), line (50f9fee98), simplex
	// (09d9724a0), ntfy (6a8e131a0), and discord and mattermost moved into plugins.
	bundledR0525 = []string{"discord", "google_chat", "irc", "line", "mattermost", "ntfy", "simplex", "teams"}
	// bundledR0703: 52d0d671e and c2a3b9ce5; + photon (5b4e431e8), raft (9026a8c78), and more
	// enum members moved into plugins.
	bundledR0703 = []string{"dingtalk", "discord", "email", "feishu", "google_chat", "homeassistant", "irc",
		"line", "matrix", "mattermost", "ntfy", "photon", "raft", "simplex", "slack", "sms", "teams",
		"telegram", "wecom", "whatsapp"}
	// bundledR0817: 481156139; + a2a (837003b1e, merged after c2a3b9ce5) and buzz (66fc2e2a9,
	// 2026-07-25). Its enum is r0703's (no member added or removed up to 481156139).
	bundledR0817 = []string{"a2a", "buzz", "dingtalk", "discord", "email", "feishu",
		"google_chat", "homeassistant", "irc", "line", "matrix", "mattermost", "ntfy", "photon", "raft",
		"simplex", "slack", "sms", "teams", "telegram", "wecom", "whatsapp"}
)

// Per-generation platform sets (the generation table points at them).
var (
	platformsR0418 = newPlatformSet(enumR0418, nil)
	platformsR0506 = newPlatformSet(enumR0506, bundledR0506)
	platformsR0525 = newPlatformSet(enumR0525, bundledR0525)
	platformsR0703 = newPlatformSet(enumR0703, bundledR0703)
	platformsR0817 = newPlatformSet(enumR0703, bundledR0817)
)
