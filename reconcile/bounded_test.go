package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

func boundedPlan(t testing.TB) *schema.Plan {
	t.Helper()
	p, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Table("daily_units").Counter.Bounded() {
		t.Fatal("daily_units in orders.yaml is not bounded")
	}
	return p
}

// logged gives events the positions a log would.
func logged(evs []*event.Event) []*event.Event {
	for i, e := range evs {
		e.Stream, e.Offset = "test-log", int64(i)
	}
	return evs
}

// boundedTotals is every daily_units row's total, merged from its state
// cells. It fails the test on a row holding a cell of another kind.
func boundedTotals(t testing.TB, ctx context.Context, st store.Store) map[string]int64 {
	t.Helper()
	return mergedTotals(t, ctx, st, true)
}

// mergedTotals is boundedTotals, failing on other cells only when strict.
func mergedTotals(t testing.TB, ctx context.Context, st store.Store, strict bool) map[string]int64 {
	t.Helper()
	sc, err := st.Scan(ctx, "daily_units", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	out := map[string]int64{}
	for sc.Next(ctx) {
		for _, c := range sc.Row().Cells {
			if strict && !layout.IsCounterState(c.Qualifier) {
				t.Fatalf("counter row %s holds cell %s:%q", store.Printable(sc.Row().Key), c.Family, c.Qualifier)
			}
		}
		cc, err := layout.ReadCounterCells(sc.Row(), "c")
		if err != nil {
			t.Fatal(err)
		}
		if v := cc.Merged().Total("c", []byte("u")); v != 0 {
			out[string(sc.Row().Key)] = v
		}
	}
	return out
}

// setCells writes cells into a bounded row, at a timestamp above the
// writer's.
func setCells(t testing.TB, ctx context.Context, st store.Store, row []byte, cells map[string][]byte) {
	t.Helper()
	m := store.RowMutation{Row: row}
	for q, v := range cells {
		m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: "c", Qualifier: []byte(q), Timestamp: 4_000_000_000_000, Value: v})
	}
	if err := st.Mutate(ctx, "daily_units", m); err != nil {
		t.Fatal(err)
	}
}

// A bounded counter with a wrong total (a base cell that adds 5), a plain
// total cell (as writers before part cells kept), a missing row and an
// extra row: reconcile finds the four and repairs them to the totals the
// writer wrote, with no plain cell left.
func TestBoundedCounterFaults(t *testing.T) {
	ctx := context.Background()
	plan := boundedPlan(t)
	st := openStore(t, plan)
	evs := logged(genEvents(t, plan, gen.OrdersOptions{Events: 500, Seed: 4, SKUs: 20, Reorder: 0.1, Duplicate: 0.1}))
	w := write.New(plan, st, write.Options{})
	for i := 0; i < len(evs); i += 50 {
		apply(t, ctx, w, evs[i:min(i+50, len(evs))])
	}
	// The stream moves on (here a duplicate of an order event, later in
	// the log): its batch tells the rows it counts in that everything
	// before it is settled.
	for i := len(evs) - 1; ; i-- {
		if evs[i].Entity == "order" && evs[i].Op == event.Upsert {
			again := *evs[i]
			again.Offset = 1_000_000
			apply(t, ctx, w, []*event.Event{&again})
			break
		}
	}
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("differences after a clean apply:\n%s", text(rep))
	}
	want := boundedTotals(t, ctx, st)
	var rows [][]byte
	sc, err := st.Scan(ctx, "daily_units", store.Scan{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	for sc.Next(ctx) {
		rows = append(rows, bytes.Clone(sc.Row().Key))
	}
	sc.Close()
	if len(rows) != 3 {
		t.Fatalf("%d counter rows", len(rows))
	}
	// A wrong total: a base cell beside the writer's parts adds 5.
	wrong := &layout.CounterState{}
	wrong.Add("c", []byte("u"), 5)
	setCells(t, ctx, st, rows[0], map[string][]byte{string(layout.QualCounterState): layout.EncodeCounterState(wrong)})
	// A plain total cell, right or not, which nothing updates.
	setCells(t, ctx, st, rows[1], map[string][]byte{"u": layout.Int64Cell(want[string(rows[1])])})
	// A missing row.
	if err := st.Mutate(ctx, "daily_units", store.RowMutation{Row: rows[2], Mutations: []store.Mutation{{Kind: store.DeleteRow, Timestamp: 4_000_000_000_000}}}); err != nil {
		t.Fatal(err)
	}
	// An extra row, which no order counts in.
	tbl := plan.Table("daily_units")
	key, err := tbl.Key.Encode(map[string]any{"items.sku": "no-such-sku", "placedAt": int64(1_760_000_000_000)})
	if err != nil {
		t.Fatal(err)
	}
	extra := &layout.CounterState{}
	extra.Add("c", []byte("u"), 9)
	setCells(t, ctx, st, append(key, 0), map[string][]byte{string(layout.QualCounterState): layout.EncodeCounterState(extra), "u": layout.Int64Cell(9)})

	faults := map[string]Counts{KindCounter: {Drifted: 4}}
	checkCounts(t, "dry run", run(t, ctx, plan, st, Options{DryRun: true}), faults)
	// The deleted row's delete marker masks a repair at a lower timestamp:
	// on Pebble, as on HBase, until a major compaction purges it.
	if err := st.MajorCompact(ctx, "daily_units"); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, "repair", run(t, ctx, plan, st, Options{}), faults)
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("differences after the repair:\n%s", text(rep))
	}
	if got := boundedTotals(t, ctx, st); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("totals after the repair:\n%v\nwant\n%v", got, want)
	}
}

// failCounters fails every write of a counter row: a writer that dies
// after a batch's primary rows and before its counter rows.
type failCounters struct{ store.Store }

var errDied = errors.New("writer died")

func (f failCounters) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	if table == "daily_units" {
		return nil, errDied
	}
	return f.Store.Batch(ctx, table, ms)
}

// While a crashed batch awaits its replay, its primary rows record counts
// the totals do not hold yet. Reconcile must see that as consistent and
// leave the totals alone: setting them to the states' sum would make the
// replay count the batch twice.
func TestBoundedCounterInFlight(t *testing.T) {
	ctx := context.Background()
	plan := boundedPlan(t)
	st := openStore(t, plan)
	evs := logged(genEvents(t, plan, gen.OrdersOptions{Events: 400, Seed: 5, SKUs: 10}))
	first, tail := evs[:300], evs[300:]
	apply(t, ctx, write.New(plan, st, write.Options{}), first)
	if _, _, err := write.New(plan, failCounters{st}, write.Options{}).Apply(ctx, tail); !errors.Is(err, errDied) {
		t.Fatalf("apply of the tail: %v, want the injected death", err)
	}
	rep := run(t, ctx, plan, st, Options{})
	if c := rep.Kinds[KindCounter]; c.Drifted != 0 || c.Repaired != 0 {
		t.Fatalf("reconcile changed the counters of an unreplayed batch:\n%s", text(rep))
	}
	// The replay completes the batch; the totals are then the states' sum.
	apply(t, ctx, write.New(plan, st, write.Options{}), tail)
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("differences after the replay:\n%s", text(rep))
	}
	want := boundedTotals(t, ctx, st)
	fresh := openStore(t, plan)
	apply(t, ctx, write.New(plan, fresh, write.Options{}), evs)
	if got := boundedTotals(t, ctx, fresh); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("totals after crash, reconcile and replay differ from a clean apply")
	}
}

// Rows written before part cells (one state cell for every stream, and a
// plain total cell beside it): a writer of today counts on in them, its
// parts merging with the old cell, and the totals end as a clean apply's.
// Reconcile then finds the plain total cells, which nothing updates any
// more, as drift, and its repair deletes them, leaving the totals alone.
func TestBoundedRowsFromBeforeParts(t *testing.T) {
	ctx := context.Background()
	plan := boundedPlan(t)
	st := openStore(t, plan)
	evs := logged(genEvents(t, plan, gen.OrdersOptions{Events: 600, Seed: 8, SKUs: 12, Reorder: 0.1, Duplicate: 0.1, Deletes: 0.03}))
	first, rest := evs[:300], evs[300:]
	apply(t, ctx, write.New(plan, st, write.Options{}), first)
	// The rows as the code before part cells left them.
	sc, err := st.Scan(ctx, "daily_units", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []store.Row
	for sc.Next(ctx) {
		rows = append(rows, sc.Row().Clone())
	}
	sc.Close()
	if len(rows) == 0 {
		t.Fatal("no counter rows")
	}
	for _, r := range rows {
		cc, err := layout.ReadCounterCells(r, "c")
		if err != nil {
			t.Fatal(err)
		}
		merged := cc.Merged()
		var ts int64
		m := store.RowMutation{Row: r.Key}
		for _, c := range r.Cells {
			ts = max(ts, c.Timestamp)
			m.Mutations = append(m.Mutations, store.Mutation{Kind: store.DeleteColumn, Family: c.Family, Qualifier: bytes.Clone(c.Qualifier), Timestamp: c.Timestamp})
		}
		m.Mutations = append(m.Mutations,
			store.Mutation{Kind: store.Put, Family: "c", Qualifier: layout.QualCounterState, Timestamp: ts, Value: layout.EncodeCounterState(merged)},
			store.Mutation{Kind: store.Put, Family: "c", Qualifier: []byte("u"), Timestamp: ts, Value: layout.Int64Cell(merged.Total("c", []byte("u")))})
		if err := st.Mutate(ctx, "daily_units", m); err != nil {
			t.Fatal(err)
		}
	}
	apply(t, ctx, write.New(plan, st, write.Options{}), rest)

	fresh := openStore(t, plan)
	apply(t, ctx, write.New(plan, fresh, write.Options{}), evs)
	want := boundedTotals(t, ctx, fresh)
	if got := mergedTotals(t, ctx, st, false); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("totals over the old rows:\n%v\nwant\n%v", got, want)
	}
	dry := run(t, ctx, plan, st, Options{DryRun: true})
	if c := dry.Kinds[KindCounter]; c.Drifted != int64(len(rows)) {
		t.Fatalf("dry run: %d drifted, want the %d rows with a plain total cell:\n%s", c.Drifted, len(rows), text(dry))
	}
	run(t, ctx, plan, st, Options{})
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("differences after the repair:\n%s", text(rep))
	}
	if got := boundedTotals(t, ctx, st); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("totals after the repair:\n%v\nwant\n%v", got, want)
	}
}
