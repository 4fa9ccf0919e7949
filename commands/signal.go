package commands

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Interrupted is the cause of a run's context when a signal stopped it.
type Interrupted struct {
	Signal os.Signal
}

func (i *Interrupted) Error() string { return "interrupted by " + i.Signal.String() }

// NotifyContext returns a context cancelled, with an *Interrupted cause, by the first SIGINT or
// SIGTERM. The engine stops at its next safe point; a second signal has its default effect.
func NotifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-signals:
			signal.Stop(signals)
			cancel(&Interrupted{Signal: s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		cancel(nil)
	}
}

// interruptExit is the exit code of a run stopped by a signal (128 + its number), 0 when
// the run was not interrupted.
func interruptExit(ctx context.Context) int {
	var in *Interrupted
	if ctx.Err() == nil || !errors.As(context.Cause(ctx), &in) {
		return 0
	}
	if s, ok := in.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitInterrupted
}
