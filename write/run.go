package write

import (
	"context"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
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
	// DeadLettersKnown counts refused events that the dead letter already
	// held from an earlier run over the same records: not written again.
	DeadLettersKnown int
	Batches          int
}

// Run applies a log until it ends or ctx is done: read a batch, decode,
// send the invalid to the dead letter, apply the rest, make the dead
// letters durable, commit. A store failure stops the run with the batch
// uncommitted, so the next run replays it. On a log that reads ahead
// (Ahead) the next batch is read and staged while one is written
// (runAhead); any other log is read a batch at a time.
func Run(ctx context.Context, w *Writer, src Source, dl DeadLetters, opts RunOptions) (RunStats, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1000
	}
	ah, ok := src.(Ahead)
	if !ok {
		ah = oneAtATime{src}
	}
	return runAhead(ctx, w, ah, dl, opts)
}

// oneAtATime is a Source as an Ahead that never reads ahead: a mark
// commits with Commit, which covers everything Next returned, and Next is
// only called once the batch in hand is committed.
type oneAtATime struct{ Source }

func (oneAtATime) Mark() any { return nil }

func (o oneAtATime) CommitMark(ctx context.Context, _ any) error { return o.Commit(ctx) }

func (oneAtATime) Ready() bool { return false }

// decodeChunk is how many records one goroutine decodes at a time.
const decodeChunk = 64

// decode decodes a batch's records on the writer's goroutines: parsing a
// JSON line is a third of what `denorm apply` spends on an event, and one
// record needs no other. Results are by record, so the dead letters still
// go out in log order. The error is ctx's, when it ended the decoding.
func (w *Writer) decode(ctx context.Context, recs []source.Record) ([]*event.Event, []error, error) {
	evs := make([]*event.Event, len(recs))
	errs := make([]error, len(recs))
	err := eachOn(ctx, w.opts.Readers, (len(recs)+decodeChunk-1)/decodeChunk, func(_ context.Context, c int) error {
		for i := c * decodeChunk; i < min(len(recs), (c+1)*decodeChunk); i++ {
			evs[i], errs[i] = event.Decode(w.plan, recs[i].Data)
		}
		return nil
	})
	return evs, errs, err
}

// applyIsolating applies a batch; when the store refuses a mutation for
// what it carries (store.IsRefused: a key or a cell over a limit that the
// writer's own checks did not foresee), it halves the batch until the
// refused events stand alone, rejects those with the store's reason, and
// applies the rest. Without this one such event would fail its batch on
// every retry and block the log for good. Applying is idempotent, so the
// halves may repeat writes that the failed attempt made.
func applyIsolating(ctx context.Context, w *Writer, evs []*event.Event) (Stats, []Rejected, error) {
	st, rej, err := w.Apply(ctx, evs)
	if !onlyRefused(err) {
		return st, rej, err
	}
	return isolate(ctx, w, evs, err)
}

// onlyRefused reports whether err is the store refusing mutations and
// nothing else. A batch that also failed otherwise (a counter row's put
// lost to the network beside a refused index row) must
// be retried whole: isolated, its refused event would go to the dead
// letter with its primary row's bounded counter record written and not
// counted, which the counter rows' bookkeeping cannot tell from one that
// was (docs/writer.md, "a refused event's record").
func onlyRefused(err error) bool {
	switch x := err.(type) {
	case nil:
		return false
	case interface{ Unwrap() []error }:
		for _, e := range x.Unwrap() {
			if e != nil && !onlyRefused(e) {
				return false
			}
		}
		return store.IsRefused(err)
	case interface{ Unwrap() error }:
		if c := x.Unwrap(); c != nil {
			return onlyRefused(c)
		}
	}
	return store.IsRefused(err)
}

// isolate is applyIsolating after the whole batch was refused with err.
func isolate(ctx context.Context, w *Writer, evs []*event.Event, err error) (Stats, []Rejected, error) {
	if len(evs) == 1 {
		st := newStats(1)
		st.Rejected = 1
		return st, []Rejected{{Index: 0, Event: evs[0], Reason: err}}, nil
	}
	mid := len(evs) / 2
	a, ra, err := applyIsolating(ctx, w, evs[:mid])
	if err != nil {
		return a, ra, err
	}
	b, rb, err := applyIsolating(ctx, w, evs[mid:])
	for _, r := range rb {
		r.Index += mid
		ra = append(ra, r)
	}
	a.Add(b)
	return a, ra, err
}

// onceDeadLetters keeps a resumed run from writing again the dead letters
// that a killed run wrote for the uncommitted tail it is replaying: the
// records from where this run started up to the last dead letter already
// in the file (dead letters of one log are written in log order).
type onceDeadLetters struct {
	DeadLetters
	start   int64 // offset of the first record this run read
	started bool
}

// lastDeadLetter is what a dead-letter sink that can tell its last entry
// offers (source.DeadLetterFile does).
type lastDeadLetter interface {
	Last() (source.DeadLetter, bool)
}

// add sends a refused record to the dead letter unless the dead letter
// holds it already, and counts which of the two it was.
func (o *onceDeadLetters) add(ctx context.Context, rec source.Record, reason error, total *RunStats) error {
	if l, ok := o.DeadLetters.(lastDeadLetter); ok {
		if last, ok := l.Last(); ok && source.SameLog(last.Where, rec.Where) && rec.Offset <= last.Offset && rec.Offset >= o.start {
			total.DeadLettersKnown++
			return nil
		}
	}
	if err := o.DeadLetters.Add(ctx, rec, reason); err != nil {
		return err
	}
	total.DeadLetters++
	return nil
}
