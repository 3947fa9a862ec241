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

// boundedTotals is every daily_units row's total, from its state cell.
func boundedTotals(t testing.TB, ctx context.Context, st store.Store) map[string]int64 {
	t.Helper()
	sc, err := st.Scan(ctx, "daily_units", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	out := map[string]int64{}
	for sc.Next(ctx) {
		c, ok := sc.Row().Latest("c", layout.QualCounterState)
		if !ok {
			continue
		}
		cs, err := layout.DecodeCounterState(c.Value)
		if err != nil {
			t.Fatal(err)
		}
		if v := cs.Total("c", []byte("u")); v != 0 {
			out[string(sc.Row().Key)] = v
		}
	}
	return out
}

// setState writes a bounded row's state cell and total cell as given.
func setState(t testing.TB, ctx context.Context, st store.Store, row []byte, cs *layout.CounterState, cell int64) {
	t.Helper()
	ts := int64(4_000_000_000_000)
	err := st.Mutate(ctx, "daily_units", store.RowMutation{Row: row, Mutations: []store.Mutation{
		{Kind: store.Put, Family: "c", Qualifier: layout.QualCounterState, Timestamp: ts, Value: layout.EncodeCounterState(cs)},
		{Kind: store.Put, Family: "c", Qualifier: []byte("u"), Timestamp: ts, Value: layout.Int64Cell(cell)},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

// A bounded counter with a wrong total, a wrong total cell, a missing row
// and an extra row: reconcile finds the four and repairs them to the
// totals the writer wrote.
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
	var states []*layout.CounterState
	for sc.Next(ctx) {
		rows = append(rows, bytes.Clone(sc.Row().Key))
		c, _ := sc.Row().Latest("c", layout.QualCounterState)
		cs, err := layout.DecodeCounterState(c.Value)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, cs)
	}
	sc.Close()
	if len(rows) != 3 {
		t.Fatalf("%d counter rows", len(rows))
	}
	// A wrong total (state and cell agree, both wrong).
	wrong := states[0]
	wrong.Add("c", []byte("u"), 5)
	setState(t, ctx, st, rows[0], wrong, wrong.Total("c", []byte("u")))
	// A total cell that disagrees with a right state cell.
	setState(t, ctx, st, rows[1], states[1], states[1].Total("c", []byte("u"))+1)
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
	setState(t, ctx, st, append(key, 0), extra, 9)

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

// failCounters fails every check-and-mutate: a writer that dies after a
// batch's primary rows and before its counter rows.
type failCounters struct{ store.Store }

var errDied = errors.New("writer died")

func (failCounters) CheckAndMutate(context.Context, string, store.Condition, store.RowMutation) (bool, error) {
	return false, errDied
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
