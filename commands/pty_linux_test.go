//go:build linux

package commands

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() { scriptCmds["pty"] = cmdPTY }

// escapes are the terminal's control sequences and carriage returns, left out of a
// transcript.
var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r|\x07`)

// cmdPTY runs `pty PROMPT INPUT prog args...`: prog on a pseudo-terminal (its controlling
// terminal, as an interactive shell has), typed INPUT's lines (\t in them is a TAB key): the
// first at once (it sets the prompt to PROMPT, whose %d is the shell's command number), line
// i once a line of the terminal starts with PROMPT for command i+1, until prog exits; its
// transcript, control sequences left out, is the stdout the script matches. A run over 30 s
// is killed and fails.
func cmdPTY(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: pty PROMPT INPUT prog [args...]")
	}
	prompt := args[0]
	input := strings.ReplaceAll(ts.ReadFile(args[1]), `\t`, "\t")
	args = args[1:]
	term, ctl, err := newPTY()
	ts.Check(err)
	defer ctl.Close()
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Dir = ts.Getenv("WORK")
	cmd.Env = []string{"TERM=xterm"}
	for _, k := range []string{"HOME", "PATH", "NO_COLOR", "TZ", "WORK"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	ts.Check(cmd.Start())
	term.Close()
	out := &transcript{}
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, ctl) // ends with EIO once the shell has exited
		close(copied)
	}()
	go func() {
		for i, line := range strings.SplitAfter(input, "\n") {
			for i > 0 && !strings.Contains(out.text(), "\n"+fmt.Sprintf(prompt, i+1)) {
				time.Sleep(20 * time.Millisecond)
			}
			_, _ = io.WriteString(ctl, line)
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		err = os.ErrDeadlineExceeded
	}
	<-copied
	_, _ = io.WriteString(ts.Stdout(), out.text())
	if err != nil {
		ts.Fatalf("%s on a pseudo-terminal: %v", args[1], err)
	}
}

// transcript is what a terminal shows, written by one goroutine while another reads it.
type transcript struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *transcript) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.Write(p)
}

// text is the transcript so far, control sequences left out.
func (t *transcript) text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return escapes.ReplaceAllString(t.buf.String(), "")
}
