package sessionsjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// maxIntDigits is Python's default sys.int_max_str_digits.
const maxIntDigits = 4300

// maxDepth mirrors CPython's default recursion limit: deeper nesting makes json.load raise
// RecursionError, so the runtime fails to load the file.
const maxDepth = 1000

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// scanner is a strict, allocation-light JSON validator over a byte slice. It accepts exactly
// what Python's json.loads accepts (the runtime reads sessions.json, the counts file and
// entry_json with its defaults): JSON, plus the constants NaN, Infinity and -Infinity as
// values (parse_constant), minus integers of more than maxIntDigits digits.
//
// maxIntDigits is Python's int_max_str_digits (3.11 and later; the runtime requires
// Python >= 3.11): json.loads raises ValueError on a longer integer literal, so the runtime
// cannot load a file that holds one. Floats have no such limit.
type scanner struct {
	data  []byte
	pos   int
	depth int

	// collectDepth > 0 makes the scanner append the members of objects at that depth to
	// collected, so callers can decode entries in the same pass that validates them. The
	// caller resets collected when it has used them.
	collectDepth int
	collected    []rawField
	// keyStart is where the key of the member members visits starts: its opening quote.
	keyStart int
}

func (s *scanner) errorf(format string, args ...any) error {
	return &FormatError{Problem: ProblemSyntax, Detail: fmt.Sprintf("invalid JSON at byte %d: %s", s.pos, fmt.Sprintf(format, args...))}
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	s.ws()
	if s.peek() != c {
		return s.unexpected(fmt.Sprintf("expected %q", c))
	}
	s.pos++
	return nil
}

func (s *scanner) unexpected(what string) error {
	if s.pos >= len(s.data) {
		return s.errorf("unexpected end of data, %s", what)
	}
	return s.errorf("unexpected %q, %s", s.data[s.pos], what)
}

// value skips one JSON value starting after optional whitespace and returns its range.
func (s *scanner) value() (start, end int, err error) {
	s.ws()
	start = s.pos
	switch c := s.peek(); {
	case c == '"':
		err = s.str()
	case c == '{':
		err = s.container('}', true)
	case c == '[':
		err = s.container(']', false)
	case c == '-' && bytes.HasPrefix(s.data[s.pos:], []byte("-Infinity")):
		err = s.literal("-Infinity")
	case c == '-' || c >= '0' && c <= '9':
		err = s.number()
	case c == 'N':
		err = s.literal("NaN")
	case c == 'I':
		err = s.literal("Infinity")
	case c == 't':
		err = s.literal("true")
	case c == 'f':
		err = s.literal("false")
	case c == 'n':
		err = s.literal("null")
	default:
		err = s.unexpected("expected a value")
	}
	return start, s.pos, err
}

func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return s.unexpected("expected a value")
	}
	s.pos += len(word)
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
		n++
	}
	return n
}

func (s *scanner) number() error {
	if s.peek() == '-' {
		s.pos++
	}
	intDigits := 0
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		intDigits = s.digits()
	default:
		return s.unexpected("expected a digit")
	}
	if c := s.peek(); intDigits > maxIntDigits && c != '.' && c != 'e' && c != 'E' {
		return s.errorf("integer of %d digits: Python's json refuses integers of more than %d digits (ValueError)", intDigits, maxIntDigits)
	}
	if s.peek() == '.' {
		s.pos++
		if s.digits() == 0 {
			return s.unexpected("expected a digit")
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if s.digits() == 0 {
			return s.unexpected("expected a digit")
		}
	}
	return nil
}

// str skips a string starting at its opening quote.
func (s *scanner) str() error {
	s.pos++
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return nil
		case c == '\\':
			if err := s.escape(); err != nil {
				return err
			}
		case c < 0x20:
			return s.errorf("control character in string")
		default:
			s.pos++
		}
	}
	return s.errorf("unterminated string")
}

func (s *scanner) escape() error {
	s.pos++
	switch s.peek() {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.pos++
		return nil
	case 'u':
		if s.pos+5 > len(s.data) || !isHex4(s.data[s.pos+1:s.pos+5]) {
			return s.errorf("invalid \\u escape")
		}
		s.pos += 5
		return nil
	}
	return s.errorf("invalid escape")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if hexVal(c) < 0 {
			return false
		}
	}
	return true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// container skips an object or array starting at its opening bracket.
func (s *scanner) container(closer byte, object bool) error {
	return s.members(closer, object, nil)
}

// members walks an object or array starting at its opening bracket. For objects, visit is
// called with the raw key and the value range of every member.
func (s *scanner) members(closer byte, object bool, visit func(key []byte, start, end int)) error {
	s.depth++
	if s.depth > maxDepth {
		return s.errorf("nesting deeper than %d", maxDepth)
	}
	s.pos++
	s.ws()
	if s.peek() == closer {
		s.pos++
		s.depth--
		return nil
	}
	for {
		var key []byte
		keyStart := 0
		if object {
			k, err := s.key()
			if err != nil {
				return err
			}
			key, keyStart = k, s.keyStart
		}
		start, end, err := s.value()
		if err != nil {
			return err
		}
		s.keyStart = keyStart // the value's own members read keys too
		if object && s.depth == s.collectDepth {
			s.collected = append(s.collected, rawField{name: key, value: s.data[start:end]})
		}
		if visit != nil {
			visit(key, start, end)
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.pos++
		case closer:
			s.pos++
			s.depth--
			return nil
		default:
			return s.unexpected(fmt.Sprintf("expected ',' or %q", closer))
		}
	}
}

// key reads `"key" :` and returns the raw key including quotes.
func (s *scanner) key() ([]byte, error) {
	s.ws()
	if s.peek() != '"' {
		return nil, s.unexpected("expected a string key")
	}
	start := s.pos
	s.keyStart = start
	if err := s.str(); err != nil {
		return nil, err
	}
	k := s.data[start:s.pos]
	return k, s.expect(':')
}

// end checks that only whitespace follows.
func (s *scanner) end() error {
	s.ws()
	if s.pos != len(s.data) {
		return s.errorf("extra data after the JSON value")
	}
	return nil
}

// checkText rejects what Python's strict UTF-8 text read rejects before json parsing.
func checkText(data []byte) error {
	if bytes.HasPrefix(data, utf8BOM) {
		return &FormatError{Problem: ProblemBOM, Detail: "starts with a UTF-8 BOM"}
	}
	if !utf8.Valid(data) {
		return &FormatError{Problem: ProblemEncoding, Detail: fmt.Sprintf("not valid UTF-8 (at byte %d)", invalidUTF8At(data))}
	}
	return nil
}

// utf8Window is how much checkTextReleasing validates before it releases it.
const utf8Window = 1 << 20

// checkTextReleasing is checkText validating data a window at a time (each window ends at
// the start of a character) and releasing each window once checked.
func checkTextReleasing(data []byte, release func(upTo int)) error {
	if bytes.HasPrefix(data, utf8BOM) {
		return checkText(data)
	}
	for i := 0; i < len(data); {
		end := min(i+utf8Window, len(data))
		for end < len(data) && end > i && !utf8.RuneStart(data[end]) {
			end--
		}
		if end == i { // no character starts in the window: let checkText say where it fails
			return checkText(data)
		}
		if !utf8.Valid(data[i:end]) {
			return checkText(data)
		}
		release(end)
		i = end
	}
	return nil
}

func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// validJSON validates one complete JSON text (no BOM, UTF-8, nothing after the value).
func validJSON(data []byte) error {
	if err := checkText(data); err != nil {
		return err
	}
	s := scanner{data: data}
	if _, _, err := s.value(); err != nil {
		return err
	}
	return s.end()
}

// topLevelKind names the JSON type of a valid value for error messages.
func topLevelKind(raw []byte) string {
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// objectFields returns the members of a valid raw JSON object in file order (duplicates kept).
func objectFields(raw []byte, capacity int) []Field {
	out := make([]Field, 0, capacity)
	visitObject(raw, func(k []byte, v []byte) {
		out = append(out, Field{Name: internName(k), Raw: json.RawMessage(v), rawName: k})
	})
	return out
}

// visitObject calls visit with the raw name and value of each member of a valid raw object.
func visitObject(raw []byte, visit func(k, v []byte)) {
	s := scanner{data: raw}
	s.ws()
	_ = s.members('}', true, func(k []byte, start, end int) {
		visit(k, raw[start:end])
	})
}

// knownName returns the interned string and to_dict rank (-1 for origin-only names) of a
// member name the runtime writes; ok is false for other names. It does not allocate.
func knownName(b []byte) (name string, rank int, ok bool) {
	switch string(b) {
	case "session_key":
		return "session_key", 0, true
	case "session_id":
		return "session_id", 1, true
	case "created_at":
		return "created_at", 2, true
	case "updated_at":
		return "updated_at", 3, true
	case "display_name":
		return "display_name", 4, true
	case "platform":
		return "platform", 5, true
	case "chat_type":
		return "chat_type", 6, true
	case "metadata":
		return "metadata", 7, true
	case "input_tokens":
		return "input_tokens", 8, true
	case "output_tokens":
		return "output_tokens", 9, true
	case "cache_read_tokens":
		return "cache_read_tokens", 10, true
	case "cache_write_tokens":
		return "cache_write_tokens", 11, true
	case "total_tokens":
		return "total_tokens", 12, true
	case "last_prompt_tokens":
		return "last_prompt_tokens", 13, true
	case "estimated_cost_usd":
		return "estimated_cost_usd", 14, true
	case "cost_status":
		return "cost_status", 15, true
	case "memory_flushed":
		return "memory_flushed", 16, true
	case "expiry_finalized":
		return "expiry_finalized", 17, true
	case "suspended":
		return "suspended", 18, true
	case "resume_pending":
		return "resume_pending", 19, true
	case "resume_reason":
		return "resume_reason", 20, true
	case "last_resume_marked_at":
		return "last_resume_marked_at", 21, true
	case "active_turn_token":
		return "active_turn_token", 22, true
	case "active_turn_started_at":
		return "active_turn_started_at", 23, true
	case "is_fresh_reset":
		return "is_fresh_reset", 24, true
	case "was_auto_reset":
		return "was_auto_reset", 25, true
	case "auto_reset_reason":
		return "auto_reset_reason", 26, true
	case "reset_had_activity":
		return "reset_had_activity", 27, true
	case "prev_session_id":
		return "prev_session_id", 28, true
	case "model_override":
		return "model_override", 29, true
	case "origin":
		return "origin", 30, true
	case "chat_id":
		return "chat_id", -1, true
	case "chat_name":
		return "chat_name", -1, true
	case "user_id":
		return "user_id", -1, true
	case "user_name":
		return "user_name", -1, true
	case "thread_id":
		return "thread_id", -1, true
	case "chat_topic":
		return "chat_topic", -1, true
	case "user_id_alt":
		return "user_id_alt", -1, true
	case "chat_id_alt":
		return "chat_id_alt", -1, true
	case "scope_id":
		return "scope_id", -1, true
	case "guild_id":
		return "guild_id", -1, true
	case "parent_chat_id":
		return "parent_chat_id", -1, true
	case "message_id":
		return "message_id", -1, true
	case "profile":
		return "profile", -1, true
	case "auto_thread_created":
		return "auto_thread_created", -1, true
	case "auto_thread_initial_name":
		return "auto_thread_initial_name", -1, true
	}
	return "", -1, false
}

// internName decodes a raw member name, without allocating for known names.
func internName(k []byte) string {
	if n, _, ok := knownName(k[1 : len(k)-1]); ok {
		return n
	}
	return decodeString(k)
}

// arrayItems returns the items of a valid raw JSON array.
func arrayItems(raw []byte) [][]byte {
	var out [][]byte
	s := scanner{data: raw}
	s.ws()
	s.pos++
	s.ws()
	if s.peek() == ']' {
		return nil
	}
	for {
		start, end, _ := s.value()
		out = append(out, raw[start:end])
		s.ws()
		if s.peek() != ',' {
			return out
		}
		s.pos++
	}
}
