package write

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// cellLog is what a writer sent to the store, one key and value per cell or
// delete marker, kept in one pointer-free arena: the garbage collector does
// not scan it, so holding it costs the writer's timed run nothing.
type cellLog struct {
	buf []byte
	// ends holds, per cell, the end of its key and then of its value in buf.
	ends []int
	// batches holds, per Apply, the number of cells recorded by its end.
	batches []int
}

func (l *cellLog) add(table string, row []byte, x store.Mutation) {
	l.buf = append(append(append(append(l.buf, table...), row...), x.Family...), x.Qualifier...)
	l.buf = binary.BigEndian.AppendUint64(append(l.buf, byte(x.Kind)), uint64(x.Timestamp))
	l.ends = append(l.ends, len(l.buf))
	l.buf = append(l.buf, x.Value...)
	l.ends = append(l.ends, len(l.buf))
}

func (l *cellLog) cells() int { return len(l.ends) / 2 }

// commit writes cells [from, to) into db in one synced batch, as raw
// Pebble's side of a paired benchmark.
func (l *cellLog) commit(db *pdb.DB, from, to int) error {
	return l.commitWith(db, from, to, pdb.Sync)
}

// commitWith is commit with the batch's write options.
func (l *cellLog) commitWith(db *pdb.DB, from, to int, wo *pdb.WriteOptions) error {
	batch := db.NewBatch()
	defer batch.Close()
	for c := from; c < to; c++ {
		k, v := l.cell(c)
		if err := batch.Set(k, v, nil); err != nil {
			return err
		}
	}
	return batch.Commit(wo)
}

// timeRaw returns how long raw Pebble takes to write the logged cells into
// a fresh database opened with the store's memtable size, one synced commit
// per logged batch: the baseline of the paired benchmarks. The timer runs
// only while the cells are written.
func (l *cellLog) timeRaw(b *testing.B) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	db, err := pdb.Open(filepath.Join(b.TempDir(), "raw"), &pdb.Options{MemTableSize: pebble.DefaultMemTableSize, Logger: quietPebble{pdb.DefaultLogger}})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	runtime.GC()
	b.StartTimer()
	start := time.Now()
	from := 0
	for _, to := range l.batches {
		if err := l.commit(db, from, to); err != nil {
			b.Fatal(err)
		}
		from = to
	}
	d := time.Since(start)
	b.StopTimer()
	return d
}

// reset forgets every cell, keeping the arena.
func (l *cellLog) reset() {
	l.buf, l.ends, l.batches = l.buf[:0], l.ends[:0], l.batches[:0]
}

// cell returns cell i's key and value.
func (l *cellLog) cell(i int) (k, v []byte) {
	start := 0
	if i > 0 {
		start = l.ends[2*i-1]
	}
	return l.buf[start:l.ends[2*i]], l.buf[l.ends[2*i]:l.ends[2*i+1]]
}

// logStore records every cell and delete marker written through it (rows
// of Mutate and Batch, counter increments as one cell each) and passes
// everything on, Sync included, so the writer behaves as on the store.
type logStore struct {
	store.Store
	mu  sync.Mutex
	log *cellLog
}

func (s *logStore) record(table string, m store.RowMutation) {
	for _, x := range m.Mutations {
		s.log.add(table, m.Row, x)
	}
}

func (s *logStore) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	s.mu.Lock()
	s.record(table, m)
	s.mu.Unlock()
	return s.Store.Mutate(ctx, table, m)
}

func (s *logStore) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	s.mu.Lock()
	for _, m := range ms {
		s.record(table, m)
	}
	s.mu.Unlock()
	return s.Store.Batch(ctx, table, ms)
}

func (s *logStore) Increment(ctx context.Context, table string, inc store.Increment) ([]int64, error) {
	s.mu.Lock()
	for _, c := range inc.Columns {
		s.log.add(table, inc.Row, store.Mutation{Kind: store.Put, Family: c.Family, Qualifier: c.Qualifier, Value: binary.BigEndian.AppendUint64(nil, uint64(c.Delta))})
	}
	s.mu.Unlock()
	return s.Store.Increment(ctx, table, inc)
}

// GetMany passes a multi-get on as one call, as the writer makes it: the
// growth benchmark times the writer through a logStore.
func (s *logStore) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	return store.GetMany(ctx, s.Store, table, gets)
}

func (s *logStore) Sync(ctx context.Context) error {
	if sy, ok := s.Store.(store.Syncer); ok {
		return sy.Sync(ctx)
	}
	return nil
}

// lineStream is the generated stream as JSON lines in one pointer-free
// arena: the benchmark decodes one batch at a time, untimed, so that the
// heap holds what `denorm apply` holds (one batch of events), not the whole
// stream, which every garbage collection in the timed run would mark.
type lineStream struct {
	buf  []byte
	ends []int
}

func benchLines(b *testing.B) *lineStream {
	b.Helper()
	var buf bytes.Buffer
	if err := gen.Orders(&buf, gen.OrdersOptions{Events: benchEvents, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	ls := &lineStream{buf: buf.Bytes()}
	for i, c := range ls.buf {
		if c == '\n' {
			ls.ends = append(ls.ends, i+1)
		}
	}
	return ls
}

func (ls *lineStream) events() int { return len(ls.ends) }

// batch decodes events [off, off+n).
func (ls *lineStream) batch(b *testing.B, plan *schema.Plan, off, n int) []*event.Event {
	evs := make([]*event.Event, 0, n)
	for i := off; i < min(off+n, len(ls.ends)); i++ {
		start := 0
		if i > 0 {
			start = ls.ends[i-1]
		}
		ev, err := event.Decode(plan, bytes.TrimSpace(ls.buf[start:ls.ends[i]]))
		if err != nil {
			b.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// recordStream applies the stream once, in batches of per events, and
// returns what the writer wrote, batch by batch.
func recordStream(b *testing.B, ls *lineStream, per int) *cellLog {
	st := openBench(b)
	defer st.Close()
	plan := ordersPlan(b)
	rs := &logStore{Store: st, log: &cellLog{}}
	w := New(plan, rs, Options{})
	for off := 0; off < ls.events(); off += per {
		if _, _, err := w.Apply(context.Background(), ls.batch(b, plan, off, per)); err != nil {
			b.Fatal(err)
		}
		rs.log.batches = append(rs.log.batches, rs.log.cells())
	}
	return rs.log
}

// BenchmarkApplyPaired alternates, inside every iteration, the writer
// applying the generated stream (batches of 1,000 events) to a fresh store,
// as Run does on a log that reads ahead (each batch staged while the one
// before it is written), the same writer applying it with Apply batch by
// batch to another fresh store, and raw Pebble writing the exact cells and
// delete markers the writer wrote, one synced commit per writer batch, into
// a fresh database opened with the store's memtable size. Each side is
// timed on its own, so the ratios (writer cells/s over raw cells/s) hold up
// when the machine's load changes from second to second: ratio for the
// writer as Run drives it, serial-ratio for Apply. Events are decoded
// outside the timed spans. Allocations and CPU are the pipelined side's.
func BenchmarkApplyPaired(b *testing.B) {
	ls := benchLines(b)
	const per = 1000
	log := recordStream(b, ls, per)
	plan := ordersPlan(b)
	ctx := context.Background()
	var tAhead, tSerial, tRaw, cpuAhead time.Duration
	var mallocs, allocated uint64
	var ms0, ms1 runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st := openBench(b)
		w := New(plan, st, Options{})
		runtime.GC()
		b.StartTimer()
		d, cpu, m, a := applyAhead(b, ctx, w, ls, plan, per, &ms0, &ms1)
		tAhead += d
		cpuAhead += cpu
		mallocs += m
		allocated += a

		b.StopTimer()
		st.Close()
		st = openBench(b)
		w = New(plan, st, Options{})
		runtime.GC()
		b.StartTimer()
		for off := 0; off < ls.events(); off += per {
			b.StopTimer()
			evs := ls.batch(b, plan, off, per)
			b.StartTimer()
			start := time.Now()
			if _, _, err := w.Apply(ctx, evs); err != nil {
				b.Fatal(err)
			}
			tSerial += time.Since(start)
		}

		b.StopTimer()
		st.Close()
		b.StartTimer()
		tRaw += log.timeRaw(b)
	}
	cells := float64(b.N * log.cells())
	b.ReportMetric(float64(b.N*ls.events())/tAhead.Seconds(), "events/s")
	b.ReportMetric(cells/tAhead.Seconds(), "writer-cells/s")
	b.ReportMetric(cells/tRaw.Seconds(), "raw-cells/s")
	b.ReportMetric(tRaw.Seconds()/tAhead.Seconds(), "ratio")
	b.ReportMetric(tRaw.Seconds()/tSerial.Seconds(), "serial-ratio")
	b.ReportMetric(float64(mallocs)/float64(b.N*ls.events()), "allocs/event")
	b.ReportMetric(float64(allocated)/float64(b.N*ls.events()), "B/event")
	b.ReportMetric(float64(cpuAhead.Microseconds())/float64(b.N*ls.events()), "cpu-us/event")
	b.ReportMetric(0, "ns/op")
}

// applyAhead applies the stream as Run does on a log that reads ahead
// (runAhead): batch k+1 is staged while batch k is written. Each batch is
// decoded, untimed, before the step that stages it. It returns the time
// spent, the process CPU used in it, and what the steps allocated.
func applyAhead(b *testing.B, ctx context.Context, w *Writer, ls *lineStream, plan *schema.Plan, per int, ms0, ms1 *runtime.MemStats) (d, cpu time.Duration, mallocs, allocated uint64) {
	b.StopTimer()
	defer b.StartTimer()
	get := func(k int) []*event.Event {
		if k*per >= ls.events() {
			return nil
		}
		return ls.batch(b, plan, k*per, per)
	}
	err := pipelined(ctx, w, get, func(fn func()) {
		runtime.ReadMemStats(ms0)
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		fn()
		d += time.Since(start)
		cpu += processCPU() - cpu0
		b.StopTimer()
		runtime.ReadMemStats(ms1)
		mallocs += ms1.Mallocs - ms0.Mallocs
		allocated += ms1.TotalAlloc - ms0.TotalAlloc
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return d, cpu, mallocs, allocated
}

// pipelined applies batches in order as runAhead does, without a log:
// batch k+1 is staged while batch k is written. get(k) gives batch k (none:
// the stream ended), called outside the steps; step runs each step (staging
// the first batch, then writing batch k beside staging k+1), so that a
// caller can time the steps alone; done, when set, gets each batch's stats
// after its step. Run stages only events that carry their log's positions:
// events without them get positions in a stream of pipelined's own, in
// order, as a log's records would (outside the steps).
func pipelined(ctx context.Context, w *Writer, get func(int) []*event.Event, step func(func()), done func(k int, st Stats)) error {
	var at int64
	get = positionsOf(get, &at)
	evs := get(0)
	if len(evs) == 0 {
		return nil
	}
	var cur *staged
	var err error
	step(func() { cur, err = w.stage(ctx, evs, nil, newStats(len(evs)), nil) })
	for k := 0; err == nil && cur != nil; k++ {
		var next *staged
		var nextErr error
		var st Stats
		evs = get(k + 1)
		step(func() {
			staged := make(chan struct{})
			go func() {
				defer close(staged)
				if len(evs) > 0 {
					next, nextErr = w.stage(ctx, evs, nil, newStats(len(evs)), busyOf(cur))
				}
			}()
			st, _, err = w.finish(ctx, cur)
			<-staged
		})
		if err = errors.Join(err, nextErr); err == nil && done != nil {
			done(k, st)
		}
		cur = next
	}
	return err
}

// positionsOf gives the events get returns without a position the next
// offsets of the stream "pipelined", from *at on.
func positionsOf(get func(int) []*event.Event, at *int64) func(int) []*event.Event {
	return func(k int) []*event.Event {
		evs := get(k)
		for _, ev := range evs {
			if ev.Stream == "" {
				ev.Stream, ev.Offset = "pipelined", *at
			}
			*at++
		}
		return evs
	}
}

// processCPU is the CPU time the process has used, user and system: the
// writer's CPU per event holds up better than its wall time on a machine
// whose other work comes and goes (it counts Pebble's background flushes
// too, which the writer's cells cause).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// quietPebble drops raw Pebble's information lines, as the store does.
type quietPebble struct{ pdb.Logger }

func (quietPebble) Infof(string, ...interface{}) {}
