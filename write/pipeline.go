package write

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/source"
)

// Ahead is a Source that can hand out records before the ones it handed
// out are committed, and commit up to a point. Run then reads, decodes and
// stages the next batch while the last one is written (stage.go), so that
// a batch's reads and CPU work overlap the previous batch's writes and log
// sync instead of following them.
type Ahead interface {
	Source
	// Mark names everything Next has returned so far.
	Mark() any
	// CommitMark makes the records up to a mark the restart point.
	CommitMark(ctx context.Context, mark any) error
	// Ready reports whether Next may be called while records are in
	// hand: it would not wait for the log to grow, and holding one more
	// batch stops nothing else (a consumer group's rebalance).
	Ready() bool
}

// inHand is a batch read from the log: its records, its events, and where
// it stands.
type inHand struct {
	recs  []source.Record
	evs   []*event.Event
	where []int   // evs[i] came from recs[where[i]]
	derrs []error // by record: why it did not decode
	mark  any
	// b is the staged batch; nil when the batch needs a lane (events of a
	// bounded counter without a log position), which only Apply gives.
	b *staged
}

// runAhead is Run's loop: while batch k is written, batch k+1 is read,
// decoded and staged, when the source is Ready (oneAtATime never is).
// Batches still commit one by one in log order, each after its writes and
// dead letters are durable.
func runAhead(ctx context.Context, w *Writer, src Ahead, dl DeadLetters, opts RunOptions) (RunStats, error) {
	var total RunStats
	total.Cells, total.Deletes = map[string]int{}, map[string]int{}
	once := &onceDeadLetters{DeadLetters: dl}
	var cur *inHand
	for {
		if cur == nil {
			h, err := w.readBatch(ctx, src, opts.BatchSize, nil)
			if err != nil || h == nil {
				return total, err
			}
			cur = h
		}
		if !once.started {
			once.start, once.started = cur.recs[0].Offset, true
		}
		// Write cur; meanwhile read and stage the next batch, unless the
		// source says to wait.
		var next *inHand
		var nextErr error
		var st Stats
		var rejected []Rejected
		var err error
		ahead := cur.b != nil && src.Ready()
		if ahead {
			bz := busyOf(cur.b)
			done := make(chan struct{})
			go func() {
				defer close(done)
				next, nextErr = w.readBatch(ctx, src, opts.BatchSize, bz)
			}()
			st, rejected, err = w.finishBatch(ctx, cur)
			<-done
		} else {
			st, rejected, err = w.finishBatch(ctx, cur)
		}
		if err != nil {
			if next != nil && next.b != nil {
				next.b.release()
			}
			return total, fmt.Errorf("write: apply batch starting at %s: %w", cur.recs[0].Where, err)
		}
		if err := deadLetters(ctx, once, cur.recs, cur.derrs, cur.where, rejected, &total); err != nil {
			return total, err
		}
		if err := src.CommitMark(ctx, cur.mark); err != nil {
			return total, err
		}
		st.Events = len(cur.recs)
		total.Stats.Add(st)
		total.Batches++
		if opts.Progress != nil {
			opts.Progress(total.Stats)
		}
		if nextErr != nil {
			if next != nil && next.b != nil {
				next.b.release()
			}
			return total, nextErr
		}
		cur = next
		if cur == nil && ahead {
			return total, nil // the log ended
		}
	}
}

// readBatch reads the next batch, decodes it and stages it against the
// batch bz names (nil: none is being written). It returns nil at the end
// of the log.
func (w *Writer) readBatch(ctx context.Context, src Ahead, size int, bz *busy) (*inHand, error) {
	var recs []source.Record
	for len(recs) == 0 {
		var err error
		recs, err = src.Next(ctx, size)
		if errors.Is(err, io.EOF) && len(recs) == 0 {
			return nil, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	h, err := w.decodeBatch(ctx, recs)
	if err != nil {
		return nil, err
	}
	h.mark = src.Mark()
	if w.unsupported != nil || w.needsLane(h.evs) {
		return h, nil // applied whole by Apply, which says why it cannot
	}
	b, err := w.stage(ctx, h.evs, nil, newStats(len(h.evs)), bz)
	if err != nil {
		b.release()
		return nil, fmt.Errorf("write: read batch starting at %s: %w", recs[0].Where, err)
	}
	h.b = b
	return h, nil
}

// decodeBatch decodes a batch's records and gives the events the log
// position of their records.
func (w *Writer) decodeBatch(ctx context.Context, recs []source.Record) (*inHand, error) {
	decoded, derrs, err := w.decode(ctx, recs)
	if err != nil {
		return nil, err
	}
	h := &inHand{recs: recs, derrs: derrs}
	h.evs = make([]*event.Event, 0, len(recs))
	h.where = make([]int, 0, len(recs))
	for i, rec := range recs {
		if derrs[i] != nil {
			continue
		}
		ev := decoded[i]
		ev.Stream, ev.Offset = rec.Stream, rec.Offset
		h.evs = append(h.evs, ev)
		h.where = append(h.where, i)
	}
	return h, nil
}

// finishBatch writes a batch read by readBatch; one the store refuses
// part of is applied again in halves (applyIsolating).
func (w *Writer) finishBatch(ctx context.Context, h *inHand) (Stats, []Rejected, error) {
	if h.b == nil {
		return applyIsolating(ctx, w, h.evs)
	}
	st, rej, err := w.finish(ctx, h.b)
	err = w.afterRefusal(ctx, h.evs, nil, err)
	if onlyRefused(err) {
		return isolate(ctx, w, h.evs, err)
	}
	return st, rej, err
}

// deadLetters sends a batch's refused records to the dead letter in log
// order (those that did not decode and those the writer rejected, merged),
// and makes them durable.
func deadLetters(ctx context.Context, once *onceDeadLetters, recs []source.Record, derrs []error, where []int, rejected []Rejected, total *RunStats) error {
	type refusal struct {
		at     int
		reason error
	}
	var all []refusal
	for i, err := range derrs {
		if err != nil {
			all = append(all, refusal{i, err})
		}
	}
	for _, r := range rejected {
		all = append(all, refusal{where[r.Index], r.Reason})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	for _, r := range all {
		if err := once.add(ctx, recs[r.at], r.reason, total); err != nil {
			return err
		}
	}
	return once.Flush(ctx)
}
