package commands

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// progressDelay keeps a bar off the screen for work that ends sooner.
const progressDelay = 500 * time.Millisecond

// showProgress decides whether long work draws a progress bar: only on a terminal stderr,
// and neither under -q nor under --json.
func showProgress(stderrTerminal, quiet, json bool) bool {
	return stderrTerminal && !quiet && !json
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// progress draws the engine's progress reports as one bar on stderr (schollz/progressbar),
// from progressDelay after the first report; a new kind of work or total starts a new bar.
type progress struct {
	w     io.Writer
	start time.Time
	bar   *progressbar.ProgressBar
	what  string
	total int64
}

// report is the engine's home.Options.Progress.
func (p *progress) report(what string, done, total int64) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	if time.Since(p.start) < progressDelay {
		return
	}
	if p.bar == nil || what != p.what || total != p.total {
		p.end()
		max := total
		if max == 0 {
			max = -1 // a spinner: the total is not known
		}
		p.bar = progressbar.NewOptions64(max, progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		p.what, p.total = what, total
	}
	_ = p.bar.Set64(done)
}

// end clears the bar, if one is drawn.
func (p *progress) end() {
	if p != nil && p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
		p.bar = nil
	}
}
