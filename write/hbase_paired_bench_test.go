package write

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/store"
)

// rowLog keeps, per table, every row mutation a writer sent (copied), so a
// baseline can send the same ones: those of Mutate and Batch, and those of
// the check-and-mutates that took (bounded counter rows), which a baseline
// sends as plain puts. The orders example has no fast-mode increments.
type rowLog struct {
	store.Store
	mu     sync.Mutex
	tables []string
	rows   map[string][]store.RowMutation
}

func (l *rowLog) keep(table string, m store.RowMutation) {
	if _, ok := l.rows[table]; !ok {
		l.tables = append(l.tables, table)
	}
	c := store.RowMutation{Row: append([]byte(nil), m.Row...), Durability: m.Durability}
	for _, x := range m.Mutations {
		x.Qualifier = append([]byte(nil), x.Qualifier...)
		x.Value = append([]byte(nil), x.Value...)
		c.Mutations = append(c.Mutations, x)
	}
	l.rows[table] = append(l.rows[table], c)
}

func (l *rowLog) Mutate(ctx context.Context, table string, m store.RowMutation) error {
	l.mu.Lock()
	l.keep(table, m)
	l.mu.Unlock()
	return l.Store.Mutate(ctx, table, m)
}

func (l *rowLog) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	l.mu.Lock()
	for _, m := range ms {
		l.keep(table, m)
	}
	l.mu.Unlock()
	return l.Store.Batch(ctx, table, ms)
}

func (l *rowLog) CheckAndMutate(ctx context.Context, table string, cond store.Condition, m store.RowMutation) (bool, error) {
	ok, err := l.Store.CheckAndMutate(ctx, table, cond, m)
	if ok && err == nil {
		l.mu.Lock()
		l.keep(table, m)
		l.mu.Unlock()
	}
	return ok, err
}

func (l *rowLog) cells() int {
	n := 0
	for _, ms := range l.rows {
		for _, m := range ms {
			n += len(m.Mutations)
		}
	}
	return n
}

// BenchmarkApplyHBasePaired alternates, inside every iteration and on the
// same real HBase, the writer applying the first 5,000 events of the
// benchmark stream (batches of 1,000) to fresh tables, as Run does on a log
// that reads ahead (each batch staged while the one before it is written),
// the same writer applying them with Apply batch by batch to other fresh
// tables, and HBase's buffered mutator writing the very row mutations the
// writer sent (recorded on the embedded store, where the writer sends the
// same ones) to a third set of fresh tables, one mutator per table, all
// tables at once. ratio is the pipelined writer's cells/s over buffered
// cells/s, serial-ratio Apply's; cells are cells and delete markers. An
// untimed pass of the writer warms the server first, and each set of tables
// is dropped once measured. writer-cpu-us/event is this process's CPU
// time during the pipelined side, an event.
//
//	export $(bash testenv/hbase.sh env)
//	go test ./write -run '^$' -bench ApplyHBasePaired -benchtime 3x
func BenchmarkApplyHBasePaired(b *testing.B) {
	// Positioned, as Run's events are: the pipelined side stages batches
	// without the writer's lanes.
	evs := positioned(benchStream(b)[:5000], "bench")
	plan := hbasePlan(b)
	ctx := context.Background()
	const per = 1000
	pst := openBench(b)
	defer pst.Close()
	log := &rowLog{Store: pst, rows: map[string][]store.RowMutation{}}
	rec := New(plan, log, Options{})
	for off := 0; off < len(evs); off += per {
		if _, _, err := rec.Apply(ctx, evs[off:min(off+per, len(evs))]); err != nil {
			b.Fatal(err)
		}
	}
	var tWriter, tSerial, tBuffered, cpuWriter time.Duration
	get := func(k int) []*event.Event { return evs[min(k*per, len(evs)):min((k+1)*per, len(evs))] }
	// One untimed pass of the writer first: the first run after the server
	// starts goes while its JIT compiles the read and write paths, and it
	// counted against whichever side came first (docs/BENCHMARKS.md,
	// fifteenth session).
	warm := liveHBase(b)
	if err := pipelined(ctx, New(plan, warm, Options{}), get, func(fn func()) { fn() }, nil); err != nil {
		b.Fatal(err)
	}
	dropTables(b, warm)
	for b.Loop() {
		b.StopTimer()
		hb := liveHBase(b)
		w := New(plan, hb, Options{})
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		if err := pipelined(ctx, w, get, func(fn func()) { fn() }, nil); err != nil {
			b.Fatal(err)
		}
		tWriter += time.Since(start)
		cpuWriter += processCPU() - cpu0

		b.StopTimer()
		dropTables(b, hb)
		hb = liveHBase(b)
		w = New(plan, hb, Options{})
		b.StartTimer()
		start = time.Now()
		for off := 0; off < len(evs); off += per {
			if _, _, err := w.Apply(ctx, evs[off:min(off+per, len(evs))]); err != nil {
				b.Fatal(err)
			}
		}
		tSerial += time.Since(start)

		b.StopTimer()
		dropTables(b, hb)
		raw := liveHBase(b)
		b.StartTimer()
		start = time.Now()
		errs := make([]error, len(log.tables))
		var wg sync.WaitGroup
		for i, t := range log.tables {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bm := store.NewBufferedMutator(raw, t, store.BufferedOptions{})
				for _, m := range log.rows[t] {
					if err := bm.Mutate(ctx, m); err != nil {
						errs[i] = err
						break
					}
				}
				if err := bm.Close(ctx); err != nil && errs[i] == nil {
					errs[i] = err
				}
			}()
		}
		wg.Wait()
		tBuffered += time.Since(start)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		dropTables(b, raw)
		b.StartTimer()
	}
	cells := float64(b.N * log.cells())
	b.ReportMetric(float64(b.N*len(evs))/tWriter.Seconds(), "events/s")
	b.ReportMetric(cells/tWriter.Seconds(), "writer-cells/s")
	b.ReportMetric(cells/tBuffered.Seconds(), "buffered-cells/s")
	b.ReportMetric(tBuffered.Seconds()/tWriter.Seconds(), "ratio")
	b.ReportMetric(tBuffered.Seconds()/tSerial.Seconds(), "serial-ratio")
	// The writer's own CPU (this process's, the server's apart) an event:
	// on a machine where the server shares the writer's cores, what the
	// writer leaves the server.
	b.ReportMetric(float64(cpuWriter.Microseconds())/float64(b.N*len(evs)), "writer-cpu-us/event")
	b.ReportMetric(0, "ns/op")
}

// dropTables drops a measured set of tables, untimed (testenv.DropTables).
func dropTables(b *testing.B, st *nsStore) {
	b.Helper()
	if err := st.DropTables(context.Background()); err != nil {
		b.Fatal(err)
	}
}
