package home

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sessionctl/sessionctl/sessionsjson"
)

// lockedHome is a home whose tool lock another holder (a second descriptor of this process:
// flock locks belong to the open file, so it excludes Lock as another process would) takes
// now and releases after hold (or when the test ends); it returns the home's options.
func lockedHome(t *testing.T, hold time.Duration) Options {
	t.Helper()
	h := sessionsjson.Home{Dir: t.TempDir()}
	if err := os.Mkdir(h.SessionsDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	release, err := sessionsjson.AcquireToolLock(h)
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-time.After(hold):
		case <-stop:
		}
		if err := release(); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
	})
	return Options{Home: h}
}

// TestLockWaits: without a wait Lock refuses at once while another sessionctl holds the lock;
// with one it takes the lock once the holder lets go, or fails with ErrLocked when the wait
// runs out first; a ctx done while it waits ends the wait with ctx's cause.
func TestLockWaits(t *testing.T) {
	interrupted := errors.New("interrupted")
	for name, tt := range map[string]struct {
		hold, wait time.Duration
		cancel     bool // cancel the context 100 ms into the wait
		want       error
		min, max   time.Duration // how long Lock took
	}{
		"no wait":          {hold: 2 * time.Second, want: sessionsjson.ErrLocked, max: time.Second},
		"holder lets go":   {hold: 300 * time.Millisecond, wait: 10 * time.Second, min: 250 * time.Millisecond, max: 5 * time.Second},
		"wait runs out":    {hold: 3 * time.Second, wait: 400 * time.Millisecond, want: sessionsjson.ErrLocked, min: 400 * time.Millisecond, max: 2 * time.Second},
		"context is done":  {hold: 3 * time.Second, wait: time.Minute, cancel: true, want: interrupted, min: 100 * time.Millisecond, max: 2 * time.Second},
		"a free lock":      {hold: 0, wait: time.Minute, max: time.Second},
		"free, no waiting": {hold: 0, max: time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			o := lockedHome(t, tt.hold)
			if tt.hold == 0 {
				time.Sleep(50 * time.Millisecond) // the holder has let go
			}
			o.LockWait = tt.wait
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			start := time.Now() // before the cancel's timer: it fires 100 ms or more after start
			if tt.cancel {
				time.AfterFunc(100*time.Millisecond, func() { cancel(interrupted) })
			}
			release, err := Lock(ctx, o)
			took := time.Since(start)
			if release != nil {
				defer release()
			}
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Lock: %v, want %v", err, tt.want)
			}
			if took < tt.min || took > tt.max {
				t.Errorf("Lock took %s, want %s to %s", took, tt.min, tt.max)
			}
			if tt.want == sessionsjson.ErrLocked && tt.wait > 0 && !strings.Contains(err.Error(), "(waited "+tt.wait.String()+")") {
				t.Errorf("message %q does not say how long it waited", err)
			}
		})
	}
}
