package write

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A Fence stops a writer whose streams may have moved to another process.
// The proofs in docs/writer.md assume one writer per stream (A4); a Kafka
// member whose session expired while it was paused in the middle of a
// batch breaks that for as long as it keeps writing, and its late writes
// can land over the new owner's (the stalled-owner drift).
//
// Hold is called before every store call that writes. It returns the time
// until which the writer may have writes land, or an error once it may not
// write at all. The call then goes out under a context whose deadline is
// that time, so a process frozen between Hold and the send finds its
// deadline passed when it resumes and sends nothing (a store whose client
// sets the deadline on its socket, as store/hbase does). Reads are not
// fenced: a stalled member's read changes nothing.
//
// Implementations must make the time a bound the coordinator of the
// streams honours: nobody else is handed the streams before it, with room
// for a call sent just before it to be applied (source.Kafka: half the
// session timeout after a heartbeat that the group acknowledged).
type Fence interface {
	Hold(ctx context.Context) (until time.Time, err error)
}

// ErrFenced is what a writer returns when its fence says it may no longer
// write, or when a fence's hold ended while a write was on its way. The
// batch is left unfinished and uncommitted: whoever owns the stream now
// applies it again.
var ErrFenced = errors.New("write: fenced off its streams")

// fenced makes one store call that writes under the writer's fence, if it
// has one: not at all when the fence refuses, and with the hold's end as
// the call's deadline otherwise.
func (w *Writer) fenced(ctx context.Context, call func(context.Context) error) error {
	f := w.opts.Fence
	if f == nil {
		return call(ctx)
	}
	until, err := f.Hold(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFenced, err)
	}
	if !before(time.Now(), until) {
		return fmt.Errorf("%w: its hold ended at %s", ErrFenced, until.Format(time.RFC3339Nano))
	}
	hctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	err = call(hctx)
	if err != nil && ctx.Err() == nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: its hold ended during a write: %w", ErrFenced, err)
	}
	return err
}

// before reports whether now is before until on the monotonic clock and on
// the wall clock both: a process stopped by a signal sees the monotonic
// clock run on, a virtual machine suspended and resumed may see only the
// wall clock's jump.
func before(now, until time.Time) bool {
	return now.Before(until) && now.Round(0).Before(until.Round(0))
}
