package sessionsjson

import "errors"

// ErrNotFound reports that a home, profile or file does not exist.
var ErrNotFound = errors.New("not found")

// ErrCorrupt reports data the runtime could not load either: invalid JSON, a UTF-8 BOM, a top
// level that is not an object, or a directory where a file should be.
var ErrCorrupt = errors.New("corrupt")

// ErrLocked reports that another sessionctl process holds the tool lock.
var ErrLocked = errors.New("locked")

// ErrInvalid reports a bad argument, such as an invalid profile name or an unsupported value.
var ErrInvalid = errors.New("invalid")
