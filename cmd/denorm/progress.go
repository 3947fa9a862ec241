package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// bar is a progress bar on stderr, drawn only when stderr is a terminal:
// output that goes to a file or a pipe, or a supervisor's log, gets none.
// The zero bar (not a terminal) does nothing. A bar with a total shows its
// share and the time left; one without shows a spinner, the count and the
// rate. Methods are safe for concurrent use (progress callbacks may come
// from workers).
type bar struct {
	mu sync.Mutex
	pb *progressbar.ProgressBar
	// unknown: the total is not known (a spinner); done counts what Add
	// was given, since such a bar keeps its own count modulo its width.
	unknown bool
	done64  int64
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newBar starts a bar on w when w is a terminal. total < 0 means unknown;
// bytes counts in bytes (KB, MB) rather than in unit.
func newBar(w io.Writer, total int64, desc, unit string, bytes bool) *bar {
	if !isTerminal(w) {
		return &bar{}
	}
	return startBar(w, total, desc, unit, bytes)
}

// startBar draws on w whatever it is (newBar decides whether to).
func startBar(w io.Writer, total int64, desc, unit string, bytes bool) *bar {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(150 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSpinnerType(14),
	}
	if bytes {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit))
	}
	return &bar{pb: progressbar.NewOptions64(total, opts...), unknown: total < 0}
}

// set moves the bar to n done; past a known total, the total grows (an
// estimate that fell short).
func (b *bar) set(n int64) {
	if b == nil || b.pb == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.moveTo(n)
}

// add moves the bar on by n.
func (b *bar) add(n int64) {
	if b == nil || b.pb == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.moveTo(b.done64 + n)
}

func (b *bar) moveTo(n int64) {
	if n < b.done64 && b.unknown {
		return
	}
	if !b.unknown && n > b.pb.GetMax64() {
		b.pb.ChangeMax64(n)
	}
	if b.unknown {
		_ = b.pb.Add64(n - b.done64)
	} else {
		_ = b.pb.Set64(n)
	}
	b.done64 = n
}

// done clears the bar's line, so the command's output starts clean.
func (b *bar) done() {
	if b == nil || b.pb == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = b.pb.Finish()
}

// countingWriter counts the lines written through it onto a bar.
type countingWriter struct {
	w   io.Writer
	bar *bar
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	var lines int64
	for _, b := range p[:n] {
		if b == '\n' {
			lines++
		}
	}
	if lines > 0 {
		c.bar.add(lines)
	}
	return n, err
}

// spinner turns on w, when it is a terminal, until stop is called: for work
// that reports no progress, it shows the time taken.
func spinner(w io.Writer, desc string) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	pb := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
	)
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				_ = pb.Finish()
				return
			case <-t.C:
				_ = pb.RenderBlank() // redraws: the spinner turns, the time grows
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-finished
		})
	}
}
