package write

import (
	"context"
	"errors"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/store"
)

// afterRefusal is what a batch's error becomes: when the store refused a
// lone event (which goes to the dead letter next), the event's counting is
// finished first (countRefused), and a failure of that joins the error,
// so that the batch is retried whole unless it is a refusal too.
func (w *Writer) afterRefusal(ctx context.Context, evs []*event.Event, ln *lane, err error) error {
	if len(evs) != 1 || !onlyRefused(err) {
		return err
	}
	if cerr := w.countRefused(ctx, evs[0], ln); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// countRefused finishes the bounded counting of a lone event the store
// refused part of, before it goes to the dead letter. The refusal may
// have come after the event's primary row, with its Counted record, was
// written (a vacated row of a move, refused for what it carries), and the
// counter rows are written only after every primary row of the batch is:
// the record would then stay uncounted while the log moves past it. The
// counter rows' bookkeeping cannot tell such a record from one a completed
// batch counted, and a later batch of the stream would take it as counted
// (docs/writer.md, "a refused event's record"). So the event is staged
// again and, when the newest record of its entity is its own, counted as
// a replay would count it: the rows where it is not counted yet get its
// Now - Base and a sequence past it. Nothing else is written. An event
// whose record was not written (its primary row was what the store
// refused) counts nothing.
func (w *Writer) countRefused(ctx context.Context, ev *event.Event, ln *lane) error {
	if !w.hasBounded(ev.Entity) {
		return nil
	}
	b, err := w.stage(ctx, []*event.Event{ev}, ln, newStats(1), nil)
	defer b.release()
	if err != nil || len(b.rejected) > 0 {
		return err
	}
	var plans []*entityPlan
	for _, ep := range b.eps {
		if ep == nil {
			continue
		}
		win := winner(ep)
		old, _ := newestCounted(ep.g)
		if win == nil || win.stream == "" || old == nil || old.Stream != win.streamID || old.Offset != win.offset {
			continue // the record is not this event's: nothing of it to count
		}
		plans = append(plans, ep)
	}
	if len(plans) == 0 {
		return nil
	}
	bb, err := w.planBounded(ctx, plans, b.firsts)
	if err != nil {
		return err
	}
	for _, ep := range plans {
		if ep.counted != nil {
			// The record would be rewritten: the event's state is not the
			// one the record holds, which its own write cannot leave.
			return errors.New("write: counting a refused event: its entity's record differs from the event's (a bug)")
		}
	}
	var stats Stats
	if err := w.applyBounded(ctx, bb, &stats); err != nil {
		return err
	}
	if sy, ok := w.st.(store.Syncer); ok && w.deferSync() {
		return sy.Sync(ctx)
	}
	return nil
}
