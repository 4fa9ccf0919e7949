package sessionsjson

// pyFormatter writes values the way Python's json.dump/dumps does for a given layout.
type pyFormatter struct {
	ascii  bool
	indent bool   // indent=2 layout; otherwise one line
	item   string // item separator when not indenting
	key    string // key separator
}

// dumpsFormatter is json.dumps(obj) with default separators.
func dumpsFormatter(ascii bool) pyFormatter {
	return pyFormatter{ascii: ascii, item: ", ", key: ": "}
}

// dumpFormatter is json.dump(obj, indent=2).
func dumpFormatter(ascii bool) pyFormatter {
	return pyFormatter{ascii: ascii, indent: true, item: ",", key: ": "}
}

// compactFormatter is the canonical form without spaces (journals, comparisons).
var compactFormatter = pyFormatter{ascii: true, item: ",", key: ":"}

// compactPy returns the canonical compact form of a valid raw JSON value.
func compactPy(raw []byte) []byte {
	return compactFormatter.value(nil, raw, 0)
}

// value appends a valid raw JSON value whose own line is indented at level.
func (f pyFormatter) value(dst, raw []byte, level int) []byte {
	switch raw[0] {
	case '{':
		return f.object(dst, dedupeFields(objectFields(raw, 0)), level)
	case '[':
		return f.array(dst, arrayItems(raw), level)
	case '"':
		return appendPyRawString(dst, raw, f.ascii)
	case 't', 'f', 'n':
		return append(dst, raw...)
	}
	return appendPyNumber(dst, raw)
}

func (f pyFormatter) newline(dst []byte, level int) []byte {
	if !f.indent {
		return dst
	}
	dst = append(dst, '\n')
	for i := 0; i < level; i++ {
		dst = append(dst, ' ', ' ')
	}
	return dst
}

func (f pyFormatter) separator(dst []byte, i int) []byte {
	if i == 0 {
		return dst
	}
	return append(dst, f.item...)
}

func (f pyFormatter) object(dst []byte, fields []Field, level int) []byte {
	if len(fields) == 0 {
		return append(dst, '{', '}')
	}
	dst = append(dst, '{')
	for i, fl := range fields {
		dst = f.separator(dst, i)
		dst = f.newline(dst, level+1)
		dst = f.name(dst, fl)
		dst = append(dst, f.key...)
		dst = f.value(dst, fl.Raw, level+1)
	}
	dst = f.newline(dst, level)
	return append(dst, '}')
}

// name appends a member name, re-encoded from its raw form when it was decoded from a file.
func (f pyFormatter) name(dst []byte, fl Field) []byte {
	if fl.rawName != nil {
		return appendPyRawString(dst, fl.rawName, f.ascii)
	}
	return appendPyString(dst, fl.Name, f.ascii)
}

func (f pyFormatter) array(dst []byte, items [][]byte, level int) []byte {
	if len(items) == 0 {
		return append(dst, '[', ']')
	}
	dst = append(dst, '[')
	for i, it := range items {
		dst = f.separator(dst, i)
		dst = f.newline(dst, level+1)
		dst = f.value(dst, it, level+1)
	}
	dst = f.newline(dst, level)
	return append(dst, ']')
}

// dedupeFields applies Python dict semantics to an object's members: a repeated name keeps
// the position of its first occurrence and the value of its last.
func dedupeFields(fields []Field) []Field {
	if !hasDuplicateNames(fields) {
		return fields
	}
	pos := make(map[string]int, len(fields))
	out := make([]Field, 0, len(fields))
	for _, fl := range fields {
		if i, ok := pos[fl.Name]; ok {
			out[i].Raw = fl.Raw
			continue
		}
		pos[fl.Name] = len(out)
		out = append(out, fl)
	}
	return out
}

func hasDuplicateNames(fields []Field) bool {
	if len(fields) > 64 {
		seen := make(map[string]bool, len(fields))
		for _, fl := range fields {
			if seen[fl.Name] {
				return true
			}
			seen[fl.Name] = true
		}
		return false
	}
	for i := 1; i < len(fields); i++ {
		for j := 0; j < i; j++ {
			if len(fields[i].Name) == len(fields[j].Name) && fields[i].Name == fields[j].Name {
				return true
			}
		}
	}
	return false
}
