package write

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// storeCall is one write the writer made to the store: a Batch (or a
// Mutate, as a Batch of one row) or an Increment, with its bytes copied
// out of the writer's reused buffers.
type storeCall struct {
	table string
	ms    []store.RowMutation
	inc   *store.Increment
}

// callLog records the writer's store writes call by call, and where each
// of the writer's batches ended.
type callLog struct {
	store.Store
	mu    sync.Mutex
	calls []storeCall
	ends  []int
}

func ownMutations(ms []store.RowMutation) []store.RowMutation {
	out := make([]store.RowMutation, len(ms))
	for i, m := range ms {
		out[i] = store.RowMutation{Row: bytes.Clone(m.Row), Durability: m.Durability, Mutations: make([]store.Mutation, len(m.Mutations))}
		for j, x := range m.Mutations {
			x.Qualifier, x.Value = bytes.Clone(x.Qualifier), bytes.Clone(x.Value)
			out[i].Mutations[j] = x
		}
	}
	return out
}

func (s *callLog) add(c storeCall) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

func (s *callLog) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	s.add(storeCall{table: table, ms: ownMutations(ms)})
	return s.Store.Batch(ctx, table, ms)
}

func (s *callLog) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	s.add(storeCall{table: table, ms: ownMutations([]store.RowMutation{m})})
	return s.Store.Mutate(ctx, table, m)
}

func (s *callLog) Increment(ctx context.Context, table string, inc store.Increment) ([]int64, error) {
	own := store.Increment{Row: bytes.Clone(inc.Row)}
	for _, c := range inc.Columns {
		own.Columns = append(own.Columns, store.IncrementColumn{Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Delta: c.Delta})
	}
	s.add(storeCall{table: table, inc: &own})
	return s.Store.Increment(ctx, table, inc)
}

func (s *callLog) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	return store.GetMany(ctx, s.Store, table, gets)
}

func (s *callLog) Sync(ctx context.Context) error { return s.Store.(store.Syncer).Sync(ctx) }

// replay makes call c on st.
func (c storeCall) replay(ctx context.Context, st store.Store) error {
	if c.inc != nil {
		_, err := st.Increment(ctx, c.table, *c.inc)
		return err
	}
	errs, err := st.Batch(ctx, c.table, c.ms)
	if err != nil {
		return err
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// BenchmarkStoreReplayPaired is the ceiling of BenchmarkApplyPaired's
// ratio: the store calls the writer made for the generated stream, replayed
// into a fresh store with none of the writer's own work (no events, no
// reads, no derives), against raw Pebble writing the same cells as
// BenchmarkApplyPaired's raw side does. serial-ratio replays each batch's
// calls one after another, concurrent-ratio all of a batch's calls at once
// (more at once than the writer, which writes primary rows before derived
// rows); each batch ends with one log sync, as the writer's do. What the
// writer's ratio lacks of these is its own work.
func BenchmarkStoreReplayPaired(b *testing.B) {
	ls := benchLines(b)
	const per = 1000
	plan := ordersPlan(b)
	ctx := context.Background()
	// One apply of the stream records both: the calls, and below them the
	// cells raw Pebble writes.
	st := openBench(b)
	cells := &cellLog{}
	rec := &callLog{Store: &logStore{Store: st, log: cells}}
	w := New(plan, rec, Options{})
	for off := 0; off < ls.events(); off += per {
		if _, _, err := w.Apply(ctx, ls.batch(b, plan, off, per)); err != nil {
			b.Fatal(err)
		}
		rec.ends = append(rec.ends, len(rec.calls))
		cells.batches = append(cells.batches, cells.cells())
	}
	st.Close()
	var tSerial, tConcurrent, tRaw time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, concurrent := range []bool{false, true} {
			b.StopTimer()
			st := openBench(b)
			runtime.GC()
			b.StartTimer()
			start := time.Now()
			from := 0
			for _, to := range rec.ends {
				if err := replayBatch(ctx, st, rec.calls[from:to], concurrent); err != nil {
					b.Fatal(err)
				}
				if err := st.Sync(ctx); err != nil {
					b.Fatal(err)
				}
				from = to
			}
			if concurrent {
				tConcurrent += time.Since(start)
			} else {
				tSerial += time.Since(start)
			}
			b.StopTimer()
			st.Close()
			b.StartTimer()
		}
		tRaw += cells.timeRaw(b)
	}
	b.ReportMetric(float64(len(rec.calls))/float64(len(rec.ends)), "calls/batch")
	b.ReportMetric(tRaw.Seconds()/tSerial.Seconds(), "serial-ratio")
	b.ReportMetric(tRaw.Seconds()/tConcurrent.Seconds(), "concurrent-ratio")
	b.ReportMetric(0, "ns/op")
}

// replayBatch makes one batch's calls on st, in order or all at once.
func replayBatch(ctx context.Context, st store.Store, calls []storeCall, concurrent bool) error {
	if !concurrent {
		for _, c := range calls {
			if err := c.replay(ctx, st); err != nil {
				return err
			}
		}
		return nil
	}
	return eachOn(ctx, len(calls), len(calls), func(ctx context.Context, k int) error { return calls[k].replay(ctx, st) })
}
