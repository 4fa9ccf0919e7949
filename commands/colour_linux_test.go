//go:build linux

package commands

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestColourOnlyOnATerminal: colour is on when stdout is a terminal, and never on another
// writer, under NO_COLOR, TERM=dumb or --no-color.
func TestColourOnlyOnATerminal(t *testing.T) {
	term, _ := openPTY(t)
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "") // empty: unset, as no-color.org defines it
	if !useColor(false, term) {
		t.Error("a terminal, NO_COLOR unset: no colour")
	}
	if useColor(true, term) {
		t.Error("--no-color on a terminal: colour")
	}
	if useColor(false, &bytes.Buffer{}) {
		t.Error("not a terminal: colour")
	}
	t.Setenv("TERM", "dumb")
	if useColor(false, term) {
		t.Error("TERM=dumb: colour")
	}
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "1")
	if useColor(false, term) {
		t.Error("NO_COLOR=1 on a terminal: colour")
	}
}

// TestColourEndToEnd: check's severities are coloured on a terminal, and not under NO_COLOR.
func TestColourEndToEnd(t *testing.T) {
	home := fixtureHome(t, genDB)
	args := []string{"sessionctl", "--home", home, "--now", fixtureNow, "check", "--fail-on", "never"}
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "")
	if out := runOnTerminal(t, args); !strings.Contains(out, "\x1b[") {
		t.Errorf("on a terminal: no colour in\n%s", out)
	}
	t.Setenv("NO_COLOR", "1")
	if out := runOnTerminal(t, args); strings.Contains(out, "\x1b[") || !strings.Contains(out, "WARN ") {
		t.Errorf("NO_COLOR=1: colour, or no findings, in\n%q", out)
	}
}

// runOnTerminal runs args with a terminal as stdout and returns what it wrote there.
func runOnTerminal(t *testing.T, args []string) string {
	term, ctl := openPTY(t)
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(&out, ctl) // ends with EIO once the terminal end is closed
		close(done)
	}()
	run(context.Background(), args, term, io.Discard, settings{})
	term.Close()
	<-done
	return out.String()
}

// openPTY opens a pseudo-terminal: the terminal end a program writes to, and the controlling
// end that reads it. The test is skipped where there is none.
func openPTY(t *testing.T) (term, ctl *os.File) {
	t.Helper()
	term, ctl, err := newPTY()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ctl.Close(); term.Close() })
	return term, ctl
}

// newPTY opens a pseudo-terminal: its terminal end and its controlling end.
func newPTY() (term, ctl *os.File, err error) {
	ctl, err = os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	var n uint32
	for _, req := range []struct {
		op  uintptr
		arg unsafe.Pointer
	}{{syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)}, {syscall.TIOCGPTN, unsafe.Pointer(&n)}} {
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ctl.Fd(), req.op, uintptr(req.arg)); errno != 0 {
			ctl.Close()
			return nil, nil, errno
		}
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ctl.Close()
		return nil, nil, err
	}
	return term, ctl, nil
}
