package write

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/store"
)

// rowLog keeps, per table, every row mutation a writer sent, so a
// baseline can send the same ones: those of Mutate and Batch, and those of
// the check-and-mutates that took (bounded counter rows), which a baseline
// sends as plain puts. The orders example has no fast-mode increments.
// They are kept encoded in one pointer-free arena per table, as cellLog
// keeps cells: held through the writer's timed runs, a row mutation per
// allocation (with its cells, qualifiers and values) would be marked by
// every garbage collection the writer causes, a cost production does not
// have. The baseline's side decodes them (rows) just before it runs.
type rowLog struct {
	store.Store
	mu     sync.Mutex
	tables []string
	rows   map[string][]byte
	cells  int
}

func (l *rowLog) keep(table string, m store.RowMutation) {
	buf, ok := l.rows[table]
	if !ok {
		l.tables = append(l.tables, table)
	}
	buf = append(buf, byte(m.Durability))
	buf = appendChunk(buf, m.Row)
	buf = binary.AppendUvarint(buf, uint64(len(m.Mutations)))
	for _, x := range m.Mutations {
		buf = append(buf, byte(x.Kind))
		buf = binary.BigEndian.AppendUint64(buf, uint64(x.Timestamp))
		buf = appendChunk(buf, []byte(x.Family))
		buf = appendChunk(buf, x.Qualifier)
		buf = appendChunk(buf, x.Value)
	}
	l.rows[table] = buf
	l.cells += len(m.Mutations)
}

func appendChunk(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// mutations decodes the row mutations kept for table, in the order sent.
// A nil qualifier or value comes back empty, which every store reads the
// same way.
func (l *rowLog) mutations(table string) []store.RowMutation {
	buf := l.rows[table]
	chunk := func() []byte {
		n, k := binary.Uvarint(buf)
		b := buf[k : k+int(n) : k+int(n)]
		buf = buf[k+int(n):]
		return b
	}
	var out []store.RowMutation
	for len(buf) > 0 {
		m := store.RowMutation{Durability: store.Durability(buf[0])}
		buf = buf[1:]
		m.Row = chunk()
		n, k := binary.Uvarint(buf)
		buf = buf[k:]
		m.Mutations = make([]store.Mutation, n)
		for i := range m.Mutations {
			x := &m.Mutations[i]
			x.Kind = store.Kind(buf[0])
			x.Timestamp = int64(binary.BigEndian.Uint64(buf[1:9]))
			buf = buf[9:]
			x.Family = string(chunk())
			x.Qualifier = chunk()
			x.Value = chunk()
		}
		out = append(out, m)
	}
	return out
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
	plan := hbasePlan(b)
	ctx := context.Background()
	const per, events = 1000, 5000
	// The stream stays as lines, decoded a batch at a time and untimed, as
	// in BenchmarkApplyPaired: the heap holds what Run holds. Positioned,
	// as Run's events are: the pipelined side stages batches without the
	// writer's lanes.
	ls := benchLines(b)
	get := func(k int) []*event.Event {
		if k*per >= events {
			return nil
		}
		evs := ls.batch(b, plan, k*per, min(per, events-k*per))
		for i, ev := range evs {
			ev.Stream, ev.Offset = "bench", int64(k*per+i)*100
		}
		return evs
	}
	pst := openBench(b)
	defer pst.Close()
	log := &rowLog{Store: pst, rows: map[string][]byte{}}
	rec := New(plan, log, Options{})
	for k := 0; k*per < events; k++ {
		if _, _, err := rec.Apply(ctx, get(k)); err != nil {
			b.Fatal(err)
		}
	}
	var tWriter, tSerial, tBuffered, cpuWriter time.Duration
	// The pipelined side is timed step by step, as applyAhead times it:
	// pipelined decodes the next batch (get) between steps.
	timed := func(fn func()) {
		start, cpu0 := time.Now(), processCPU()
		fn()
		tWriter += time.Since(start)
		cpuWriter += processCPU() - cpu0
	}
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
		runtime.GC()
		b.StartTimer()
		if err := pipelined(ctx, w, get, timed, nil); err != nil {
			b.Fatal(err)
		}

		b.StopTimer()
		dropTables(b, hb)
		hb = liveHBase(b)
		w = New(plan, hb, Options{})
		runtime.GC()
		b.StartTimer()
		for k := 0; k*per < events; k++ {
			b.StopTimer()
			evs := get(k)
			b.StartTimer()
			start := time.Now()
			if _, _, err := w.Apply(ctx, evs); err != nil {
				b.Fatal(err)
			}
			tSerial += time.Since(start)
		}

		b.StopTimer()
		dropTables(b, hb)
		raw := liveHBase(b)
		rows := make([][]store.RowMutation, len(log.tables))
		for i, t := range log.tables {
			rows[i] = log.mutations(t)
		}
		runtime.GC()
		b.StartTimer()
		start := time.Now()
		errs := make([]error, len(log.tables))
		var wg sync.WaitGroup
		for i, t := range log.tables {
			wg.Add(1)
			go func() {
				defer wg.Done()
				bm := store.NewBufferedMutator(raw, t, store.BufferedOptions{})
				for _, m := range rows[i] {
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
	cells := float64(b.N * log.cells)
	b.ReportMetric(float64(b.N*events)/tWriter.Seconds(), "events/s")
	b.ReportMetric(cells/tWriter.Seconds(), "writer-cells/s")
	b.ReportMetric(cells/tBuffered.Seconds(), "buffered-cells/s")
	b.ReportMetric(tBuffered.Seconds()/tWriter.Seconds(), "ratio")
	b.ReportMetric(tBuffered.Seconds()/tSerial.Seconds(), "serial-ratio")
	// The writer's own CPU (this process's, the server's apart) an event:
	// on a machine where the server shares the writer's cores, what the
	// writer leaves the server.
	b.ReportMetric(float64(cpuWriter.Microseconds())/float64(b.N*events), "writer-cpu-us/event")
	b.ReportMetric(0, "ns/op")
}

// dropTables drops a measured set of tables, untimed (testenv.DropTables).
func dropTables(b *testing.B, st *nsStore) {
	b.Helper()
	if err := st.DropTables(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// The baseline must send the very mutations the writer sent: whatever rows
// a log keeps, in whatever tables, it gives back equal, table by table in
// the order kept.
func TestRowLogGivesBackWhatItKept(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	bytesOf := func(n int) []byte {
		b := make([]byte, rng.IntN(n))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	l := &rowLog{rows: map[string][]byte{}}
	want := map[string][]store.RowMutation{}
	for range 300 {
		table := fmt.Sprintf("t%d", rng.IntN(4))
		m := store.RowMutation{Row: bytesOf(40), Durability: store.Durability(rng.IntN(4))}
		for range rng.IntN(6) {
			m.Mutations = append(m.Mutations, store.Mutation{
				Kind:      store.Kind(rng.IntN(5)),
				Family:    string(bytesOf(4)),
				Qualifier: bytesOf(300),
				Timestamp: rng.Int64() - rng.Int64(),
				Value:     bytesOf(70000),
			})
		}
		l.keep(table, m)
		want[table] = append(want[table], m)
	}
	cells := 0
	for _, table := range l.tables {
		got := l.mutations(table)
		if len(got) != len(want[table]) {
			t.Fatalf("table %s: %d rows back, kept %d", table, len(got), len(want[table]))
		}
		for i, g := range got {
			w := want[table][i]
			if !bytes.Equal(g.Row, w.Row) || g.Durability != w.Durability || len(g.Mutations) != len(w.Mutations) {
				t.Fatalf("table %s row %d: got %+v, kept %+v", table, i, g, w)
			}
			for j, x := range g.Mutations {
				y := w.Mutations[j]
				if x.Kind != y.Kind || x.Family != y.Family || x.Timestamp != y.Timestamp || !bytes.Equal(x.Qualifier, y.Qualifier) || !bytes.Equal(x.Value, y.Value) {
					t.Fatalf("table %s row %d mutation %d: got %+v, kept %+v", table, i, j, x, y)
				}
			}
			cells += len(g.Mutations)
		}
	}
	if len(l.tables) != len(want) || cells != l.cells {
		t.Fatalf("%d tables and %d cells back, kept %d tables and %d cells", len(l.tables), cells, len(want), l.cells)
	}
}
