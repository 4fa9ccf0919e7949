package sessionsjson

import "errors"

// ErrNotFound reports that a home, profile or file does not exist.
var ErrNotFound = errors.New("not found")

// ErrCorrupt reports data the runtime could not load either: invalid JSON, a UTF-8 BOM, a top
// level that is not an object, or a directory where a file should be.
var ErrCorrupt = errors.New("corrupt")

// ErrLocked reports that another sessionctl process holds the tool lock.
var ErrLocked = errors.New("locked")

// ErrNotDurable reports a file that was replaced, but whose directory could not be synced:
// the new content is in place, and may not survive a crash.
var ErrNotDurable = errors.New("the file was replaced, but its directory could not be synced")

// ErrInvalid reports a bad argument, such as an invalid profile name or an unsupported value.
var ErrInvalid = errors.New("invalid")

// Problem is what makes a sessions.json file unloadable.
type Problem int

// Problems a FormatError names.
const (
	// ProblemBOM: the file starts with a UTF-8 byte order mark (strict UTF-8 rejects it).
	ProblemBOM Problem = iota + 1
	// ProblemEncoding: the file is not valid UTF-8.
	ProblemEncoding
	// ProblemSyntax: the file is not valid JSON.
	ProblemSyntax
	// ProblemNotObject: the top level is valid JSON but not an object (Found names it).
	ProblemNotObject
)

// FormatError is a sessions.json the runtime cannot load, and why. It is an ErrCorrupt.
type FormatError struct {
	Problem Problem
	Detail  string // what is wrong, e.g. "invalid JSON at byte 12: …"
	Found   string // ProblemNotObject: the kind of the top-level value
}

func (e *FormatError) Error() string { return e.Detail + ": " + ErrCorrupt.Error() }

// Unwrap makes a FormatError an ErrCorrupt.
func (e *FormatError) Unwrap() error { return ErrCorrupt }
