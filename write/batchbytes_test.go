package write

import (
	"context"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// batchLog keeps what describe makes of every store Batch call, in the
// order the calls came.
type batchLog[T any] struct {
	store.Store
	describe func(table string, ms []store.RowMutation) T
	mu       sync.Mutex
	calls    []T
}

func (b *batchLog[T]) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	d := b.describe(table, ms)
	b.mu.Lock()
	b.calls = append(b.calls, d)
	b.mu.Unlock()
	return b.Store.Batch(ctx, table, ms)
}

// rowSizes describes a Batch call by the Size of each of its rows.
func rowSizes(_ string, ms []store.RowMutation) []int {
	sizes := make([]int, len(ms))
	for i, m := range ms {
		sizes[i] = m.Size()
	}
	return sizes
}

// A writer with a byte cap sends no Batch call over it (but for a row that
// is over it alone), no call over the row cap, and writes exactly what a
// writer with the defaults writes.
func TestBatchBytesCapsEveryCall(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := rand.New(rand.NewSource(3))
	evs := historyNS(r, 300, "")
	f.reset(t, ctx)
	if _, _, err := New(f.plan, f.ns, Options{}).Apply(ctx, evs); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, ctx, f.ns, f.plan)

	f.reset(t, ctx)
	const capBytes, capRows = 2048, 40
	rec := &batchLog[[]int]{Store: f.ns, describe: rowSizes}
	w := New(f.plan, withSyncOf(rec, f.st), Options{BatchBytes: capBytes, BatchRows: capRows})
	for lo := 0; lo < len(evs); lo += 500 {
		if _, _, err := w.Apply(ctx, evs[lo:min(lo+500, len(evs))]); err != nil {
			t.Fatal(err)
		}
	}
	split, alone := 0, 0
	for _, sizes := range rec.calls {
		total := 0
		for _, n := range sizes {
			total += n
		}
		if len(sizes) > capRows {
			t.Fatalf("a Batch call of %d rows, cap %d", len(sizes), capRows)
		}
		if total > capBytes {
			if len(sizes) > 1 {
				t.Fatalf("a Batch call of %d rows and %d bytes, cap %d", len(sizes), total, capBytes)
			}
			alone++
		}
		if len(sizes) < capRows && total+sizes[0] > capBytes {
			split++ // ended by bytes, not rows (or by the end of the table's rows)
		}
	}
	if split == 0 {
		t.Fatalf("no Batch call was cut by the byte cap in %d calls", len(rec.calls))
	}
	if got := readAll(t, ctx, f.ns, f.plan); got.diff(want) != "" {
		t.Fatalf("stores differ:\n%s", got.diff(want))
	}
	t.Logf("%d calls, %d alone over the cap", len(rec.calls), alone)
}

func TestChunkEnd(t *testing.T) {
	w := &Writer{opts: Options{BatchRows: 3, BatchBytes: 100}}
	row := func(n int) store.RowMutation {
		return store.RowMutation{Row: make([]byte, n-9-1), Mutations: []store.Mutation{{Family: "f"}}}
	}
	ms := []store.RowMutation{row(40), row(40), row(30), row(150), row(10), row(10), row(10), row(10)}
	var got []int
	for start, end := 0, 0; start < len(ms); start = end {
		end = w.chunkEnd(ms, start, w.opts.BatchRows)
		got = append(got, end)
	}
	want := []int{2, 3, 4, 7, 8} // 80 bytes; 30; 150 alone; three rows; the last
	if len(got) != len(want) {
		t.Fatalf("chunk ends %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("chunk ends %v, want %v", got, want)
		}
	}
}

// inFlight records, per table, the most store Batch calls it had under way
// at once, holding each call until a second arrives (or a moment passes),
// so that calls sent side by side are seen together even on one core.
type inFlight struct {
	store.Store
	mu    sync.Mutex
	now   map[string]int
	most  map[string]int
	rows  map[string]int
	calls int
}

func (f *inFlight) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	f.mu.Lock()
	f.now[table]++
	f.most[table] = max(f.most[table], f.now[table])
	f.rows[table] += len(ms)
	f.calls++
	f.mu.Unlock()
	for i := 0; i < 2000; i++ {
		f.mu.Lock()
		n := f.now[table]
		f.mu.Unlock()
		if n > 1 {
			break
		}
		time.Sleep(50 * time.Microsecond)
	}
	errs, err := f.Store.Batch(ctx, table, ms)
	f.mu.Lock()
	f.now[table]--
	f.mu.Unlock()
	return errs, err
}

// A table's rows of one Apply go to the store in several calls side by
// side, not one call after another, and the store ends up as a writer that
// sends each table's rows in one call leaves it.
func TestBatchCallsGoSideBySide(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	evs := historyNS(rand.New(rand.NewSource(5)), 600, "")
	f.reset(t, ctx)
	if _, _, err := New(f.plan, f.ns, Options{Readers: 1, BatchRows: 1 << 20}).Apply(ctx, evs); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, ctx, f.ns, f.plan)

	f.reset(t, ctx)
	rec := &inFlight{Store: f.ns, now: map[string]int{}, most: map[string]int{}, rows: map[string]int{}}
	if _, _, err := New(f.plan, withSyncOf(rec, f.st), Options{Readers: 4}).Apply(ctx, evs); err != nil {
		t.Fatal(err)
	}
	side := false
	for table, n := range rec.most {
		t.Logf("%s: %d rows, at most %d calls at once", table, rec.rows[table], n)
		if rec.rows[table] >= 4*minCallRows && n > 1 {
			side = true
		}
	}
	if !side {
		t.Fatalf("no table of %d Batch calls had two under way at once: %v", rec.calls, rec.most)
	}
	if got := readAll(t, ctx, f.ns, f.plan); got.diff(want) != "" {
		t.Fatalf("stores differ:\n%s", got.diff(want))
	}
}
