package sessionsjson

import "strings"

// SessionIDProblem returns why the runtime's path-safety check (06-21+) rejects a session_id,
// or "" when it is acceptable.
func SessionIDProblem(id string) string {
	return pathProblem(id, false)
}

// SessionKeyProblem returns why the runtime's path-safety check rejects a session_key, or ""
// when it is acceptable. allowInteriorSlash selects the 07-06+ rule (r0715 and newer), under
// which only "..", a leading "/" or "\" and a leading "<letter>:" are rejected.
func SessionKeyProblem(key string, allowInteriorSlash bool) string {
	return pathProblem(key, allowInteriorSlash)
}

func pathProblem(s string, allowInteriorSlash bool) string {
	switch {
	case s == "":
		return "empty"
	case strings.Contains(s, ".."):
		return `contains ".."`
	case s[0] == '/' || s[0] == '\\':
		return "starts with a path separator"
	case len(s) >= 2 && s[1] == ':' && isASCIILetter(s[0]):
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

func isASCIILetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
