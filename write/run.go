package write

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/source"
)

// Source is a replayable log: Next returns the following records (io.EOF
// at the end), Commit makes everything returned so far the restart point.
type Source interface {
	Next(ctx context.Context, max int) ([]source.Record, error)
	Commit(ctx context.Context) error
}

// DeadLetters takes refused events; Flush makes them durable.
type DeadLetters interface {
	Add(ctx context.Context, rec source.Record, reason error) error
	Flush(ctx context.Context) error
}

// RunOptions tune Run.
type RunOptions struct {
	// BatchSize is the events per Apply; 0 means 1000.
	BatchSize int
	// Progress, when set, is called after every committed batch with the
	// totals so far.
	Progress func(Stats)
}

// RunStats are the totals of a Run.
type RunStats struct {
	Stats
	DeadLetters int
	Batches     int
}

// Run applies a log until it ends or ctx is done: read a batch, decode,
// send the invalid to the dead letter, apply the rest, make the dead
// letters durable, commit. A store failure stops the run with the batch
// uncommitted, so the next run replays it.
func Run(ctx context.Context, w *Writer, src Source, dl DeadLetters, opts RunOptions) (RunStats, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1000
	}
	var total RunStats
	total.Cells, total.Deletes = map[string]int{}, map[string]int{}
	for {
		recs, err := src.Next(ctx, opts.BatchSize)
		if errors.Is(err, io.EOF) && len(recs) == 0 {
			return total, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return total, err
		}
		evs := make([]*event.Event, 0, len(recs))
		where := make([]int, 0, len(recs)) // evs[i] came from recs[where[i]]
		for i, rec := range recs {
			ev, derr := event.Decode(w.plan, rec.Data)
			if derr != nil {
				if err := dl.Add(ctx, rec, derr); err != nil {
					return total, err
				}
				total.DeadLetters++
				continue
			}
			evs = append(evs, ev)
			where = append(where, i)
		}
		st, rejected, err := w.Apply(ctx, evs)
		if err != nil {
			return total, fmt.Errorf("write: apply batch starting at %s: %w", recs[0].Where, err)
		}
		for _, r := range rejected {
			if err := dl.Add(ctx, recs[where[r.Index]], r.Reason); err != nil {
				return total, err
			}
			total.DeadLetters++
		}
		if err := dl.Flush(ctx); err != nil {
			return total, err
		}
		if err := src.Commit(ctx); err != nil {
			return total, err
		}
		st.Events = len(recs)
		total.Stats.Add(st)
		total.Batches++
		if opts.Progress != nil {
			opts.Progress(total.Stats)
		}
	}
}
