// Package sessionsjson models a Hermes Agent home as the gateway runtime sees it: home and
// profile resolution, runtime generations and their load rules, the routing index
// sessions/sessions.json (decode, byte-preserving edits, Python-compatible encoding),
// timestamps with Python datetime semantics, session key and id safety, the
// .restart_failure_counts file, gateway liveness, atomic writes and the tool's advisory lock.
//
// The package never prints; it returns values and errors wrapping the exported sentinels.
package sessionsjson
