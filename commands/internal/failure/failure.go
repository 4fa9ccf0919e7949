// Package failure classifies the engine's errors by what they mean for the operator: a usage
// mistake, a refusal, a data or environment problem, or a write that failed. The CLI maps the
// class to an exit code in one place (commands.exitCode); nothing else chooses exit codes.
package failure

import "errors"

// Class is what an error means for the run.
type Class int

// Classes, from the contract's exit codes: usage 2, refused 3, data 4, write 5.
const (
	// Data: the environment or the data is missing, unreadable, corrupt or unsupported.
	Data Class = iota + 1
	// Usage: the command line asks for something impossible.
	Usage
	// Refused: the run would be unsafe (a gateway or another sessionctl writes the home, or
	// the data changed since a journal was written).
	Refused
	// Write: a write failed and was rolled back.
	Write
)

// classified carries a class through wrapping without changing the error's text.
type classified struct {
	class Class
	err   error
}

func (c *classified) Error() string { return c.err.Error() }
func (c *classified) Unwrap() error { return c.err }

// Mark gives err a class (nil stays nil). The outermost class of a chain wins.
func Mark(class Class, err error) error {
	if err == nil {
		return nil
	}
	return &classified{class: class, err: err}
}

// ClassOf returns the outermost class marked on err's chain.
func ClassOf(err error) (Class, bool) {
	var c *classified
	if errors.As(err, &c) {
		return c.class, true
	}
	return 0, false
}
