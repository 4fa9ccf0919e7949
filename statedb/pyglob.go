package statedb

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The runtime removes a pruned session's request dumps with
// `sessions_dir.glob(f"request_dump_{session_id}_*.json")` (hermes_state.py
// _remove_session_files, at 3b750715a, 3914089d5, 52d0d671e and c2a3b9ce5): the id becomes
// part of a glob pattern, so '*', '?' and '[…]' in it match other names. sessionctl matches
// the id literally (TranscriptFiles); RuntimeDumpFiles says what the runtime's pattern
// matches instead. The rules are Python's fnmatch, as pathlib applies them to one path
// component on POSIX: case-sensitive, hidden names included.

// globToken is one element of a parsed pattern.
type globToken struct {
	kind   byte // 'l' literal rune, '*' any run, '?' any one rune, '[' a class
	r      rune
	negate bool
	items  []runeRange // class members (a reversed range matches nothing)
}

type runeRange struct{ lo, hi rune }

// parsePyGlob parses pattern as fnmatch.translate reads it: '*', '?', and '[' … ']' where a
// leading '!' negates, a ']' right after '[' or '[!' is a member, and a '[' with no closing ']'
// is a literal; inside a class, x-y is a range unless the '-' comes first or last, and
// everything else (a backslash, '^') is itself.
func parsePyGlob(pattern string) []globToken {
	p := []rune(pattern)
	var out []globToken
	for i := 0; i < len(p); {
		c := p[i]
		i++
		switch c {
		case '*':
			if len(out) == 0 || out[len(out)-1].kind != '*' {
				out = append(out, globToken{kind: '*'})
			}
		case '?':
			out = append(out, globToken{kind: '?'})
		case '[':
			j := i
			if j < len(p) && p[j] == '!' {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				j++
			}
			if j >= len(p) {
				out = append(out, globToken{kind: 'l', r: '['})
				continue
			}
			out = append(out, parseClass(p[i:j]))
			i = j + 1
		default:
			out = append(out, globToken{kind: 'l', r: c})
		}
	}
	return out
}

// parseClass reads the members of a class (the text between '[' and ']').
func parseClass(stuff []rune) globToken {
	t := globToken{kind: '['}
	if len(stuff) > 0 && stuff[0] == '!' {
		t.negate, stuff = true, stuff[1:]
	}
	for k := 0; k < len(stuff); {
		if k+2 < len(stuff) && stuff[k+1] == '-' {
			t.items = append(t.items, runeRange{stuff[k], stuff[k+2]})
			k += 3
			continue
		}
		t.items = append(t.items, runeRange{stuff[k], stuff[k]})
		k++
	}
	return t
}

func (t globToken) matchOne(r rune) bool {
	switch t.kind {
	case '?':
		return true
	case 'l':
		return r == t.r
	}
	in := false
	for _, it := range t.items {
		if it.lo <= r && r <= it.hi {
			in = true
			break
		}
	}
	return in != t.negate
}

// pyGlobMatch reports whether name matches the parsed pattern whole (each invalid UTF-8 byte
// is one character, as Python's surrogate escapes make it).
func pyGlobMatch(tokens []globToken, name string) bool {
	runes := make([]rune, 0, len(name))
	for s := name; len(s) > 0; {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			r = 0xDC00 + rune(s[0]) // a surrogate escape: never equal to a valid character
		}
		runes, s = append(runes, r), s[size:]
	}
	return matchFrom(tokens, runes)
}

// matchFrom matches name against tokens whole, in linear time: on a mismatch it returns to
// the last '*' and lets it take one more character.
func matchFrom(tokens []globToken, name []rune) bool {
	ti, ni, star, mark := 0, 0, -1, 0
	for ni < len(name) {
		switch {
		case ti < len(tokens) && tokens[ti].kind == '*':
			star, mark = ti, ni
			ti++
		case ti < len(tokens) && tokens[ti].matchOne(name[ni]):
			ti++
			ni++
		case star >= 0:
			mark++
			ti, ni = star+1, mark
		default:
			return false
		}
	}
	for ti < len(tokens) && tokens[ti].kind == '*' {
		ti++
	}
	return ti == len(tokens)
}

// dumpPattern is the runtime's request-dump pattern for id.
func dumpPattern(id string) string {
	return "request_dump_" + id + "_*.json"
}

// GlobID reports whether id, put into the runtime's request-dump pattern, holds glob syntax
// Python acts on: a '*', a '?', or a '[' closed by a later ']'. For any other id the pattern
// matches exactly the names sessionctl matches literally.
func GlobID(id string) bool {
	for _, t := range parsePyGlob(id) {
		if t.kind != 'l' {
			return true
		}
	}
	return false
}

// GlobRaises reports an id whose pattern Python 3.11 and 3.12's pathlib refuses ("'**' can
// only be an entire path component": a ValueError _remove_session_files does not catch).
func GlobRaises(id string) bool {
	return strings.Contains(dumpPattern(id), "**")
}

// RuntimeDumpFiles returns the paths in sessionsDir the runtime's request-dump pattern for
// id matches, sorted (nil when the directory does not exist). The id must be a safe file
// name (UnsafeFileID).
func RuntimeDumpFiles(sessionsDir, id string) ([]string, error) {
	if why := UnsafeFileID(id); why != "" {
		return nil, fmt.Errorf("runtime dump files of %q: id %s", id, why)
	}
	names, err := readDirNames(sessionsDir)
	if err != nil {
		return nil, fmt.Errorf("runtime dump files: %w", err)
	}
	tokens := parsePyGlob(dumpPattern(id))
	var out []string
	for _, n := range names {
		if pyGlobMatch(tokens, n) {
			out = append(out, filepath.Join(sessionsDir, n))
		}
	}
	return out, nil
}
