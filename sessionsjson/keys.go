package sessionsjson

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SessionIDProblem returns why the runtime's path-safety check (06-21+) rejects a session_id
// (Python's str() of the value), or "" when it is acceptable.
func SessionIDProblem(id string) string {
	return pathProblem(id, false)
}

// SessionKeyProblem returns why the runtime's path-safety check rejects a session_key, or ""
// when it is acceptable. allowInteriorSlash selects the 07-06+ rule (r0715 and newer), under
// which only "..", a leading "/" or "\" and a leading "<letter>:" are rejected.
func SessionKeyProblem(key string, allowInteriorSlash bool) string {
	return pathProblem(key, allowInteriorSlash)
}

// pathProblem is gateway/session.py _is_path_unsafe (4d4ba0831) and, with
// allowInteriorSlash, _is_session_key_unsafe (83f14b2f2) on Python's str() of the value: ""
// (any falsy value) passes; the drive-letter test is Python's str.isalpha on the first
// character, so "é:x" is rejected as "C:x" is.
func pathProblem(s string, allowInteriorSlash bool) string {
	switch {
	case s == "":
		return ""
	case strings.Contains(s, ".."):
		return `contains ".."`
	case s[0] == '/' || s[0] == '\\':
		return "starts with a path separator"
	case startsWithDrive(s):
		return "starts with a drive letter"
	case allowInteriorSlash:
		return ""
	case strings.ContainsRune(s, '/'):
		return `contains "/"`
	case strings.ContainsRune(s, '\\'):
		return `contains "\"`
	}
	return ""
}

// startsWithDrive reports len(s) >= 2 and s[0].isalpha() and s[1] == ":" on Python code
// points (str.isalpha is the Unicode letter categories Lu, Ll, Lt, Lm and Lo, as
// unicode.IsLetter).
func startsWithDrive(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) && len(s) > n && s[n] == ':'
}
