package write

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// boundedPlan is the orders example, whose daily_units is in mode bounded.
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

// positioned gives each entry of a log its own copy of the event, at its
// position in the log (a duplicate is another record at another offset).
func positioned(log []*event.Event, stream string) []*event.Event {
	out := make([]*event.Event, len(log))
	for i, e := range log {
		c := *e
		c.Stream, c.Offset = stream, int64(i)*100
		out[i] = &c
	}
	return out
}

// unpositioned strips a log's positions, as events applied directly come.
func unpositioned(log []*event.Event) []*event.Event {
	out := make([]*event.Event, len(log))
	for i, e := range log {
		c := *e
		c.Stream, c.Offset = "", 0
		out[i] = &c
	}
	return out
}

// partitioned spreads a log over two streams by entity, as a keyed Kafka
// topic with two partitions does: each stream's offsets grow in log order.
func partitioned(log []*event.Event) []*event.Event {
	out := make([]*event.Event, len(log))
	next := map[string]int64{}
	for i, e := range log {
		c := *e
		c.Stream = fmt.Sprintf("part-%d", rowkey.SaltBucket([]byte(entityOf(e)), 2))
		c.Offset = next[c.Stream]
		next[c.Stream]++
		out[i] = &c
	}
	return out
}

// boundedUnits reads every bounded daily_units row (whose key holds ns): the totals its state
// cell holds, by "day|sku" summed over buckets. It fails the test when a
// row holds more than its state cell and one total cell per add column, or
// when a total cell disagrees with the state cell.
func boundedUnits(t testing.TB, ctx context.Context, st store.Store, p *schema.Plan, ns string) map[string]int64 {
	t.Helper()
	tbl := p.Table("daily_units")
	fam := layout.CounterStateFamily(tbl)
	out := map[string]int64{}
	eachRow(t, ctx, st, tbl.Name, func(row store.Row) {
		if ns != "" && !bytes.Contains(row.Key, []byte(ns)) {
			return // another run's row in shared tables
		}
		if n := len(row.Cells); n > 1+len(tbl.Counter.Adds) {
			t.Fatalf("bounded counter row %s has %d cells, more than its state cell and %d totals", store.Printable(row.Key), n, len(tbl.Counter.Adds))
		}
		c, ok := row.Latest(fam, layout.QualCounterState)
		if !ok {
			t.Fatalf("bounded counter row %s has no state cell", store.Printable(row.Key))
		}
		cs, err := layout.DecodeCounterState(c.Value)
		if err != nil {
			t.Fatal(err)
		}
		key, _ := layout.CounterKey(tbl, row.Key)
		parts, err := tbl.Key.Decode(key)
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string]any{}
		for _, d := range parts {
			vals[d.Part.Field] = d.Value
		}
		for _, a := range tbl.Counter.Adds {
			v := cs.Total(a.Family, []byte(a.Qualifier))
			if tc, ok := row.Latest(a.Family, []byte(a.Qualifier)); ok {
				if n, _ := layout.CellInt64(tc.Value); n != v {
					t.Fatalf("row %s: total cell %d, state cell %d", store.Printable(row.Key), n, v)
				}
			}
			out[fmt.Sprintf("%d|%s", rowkey.DayNumber(vals["placedAt"].(int64)), vals["items.sku"])] += v
		}
	})
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// TestConvergenceBounded is TestConvergence for bounded counters: in log
// order, shuffled with duplicates (each a record of its own at its own
// offset), and with a crash after every possible write (the counter rows'
// check-and-mutates included) followed by a resume in batches of other
// sizes, every history ends with the model's rows and exact daily totals,
// in rows that never hold more than their state and total cells.
func TestConvergenceBounded(t *testing.T) {
	seed := int64(20261201)
	// Each history runs five logs with a crash after every write of each
	// (about five times TestConvergence's work per history): a fifth of
	// its count by default, all of -histories when given.
	n := historyCount()
	if *histories == 0 {
		n = max(n/5, 10)
	}
	t.Logf("%d histories from seed %d", n, seed)
	setup := func(t testing.TB) *fixture {
		f := newFixture(t)
		f.plan = boundedPlan(t)
		return f
	}
	inShards(t, n, setup, func(t *testing.T, f *fixture, h int) { convergeBounded(t, f, seed, h) })
}

func convergeBounded(t *testing.T, f *fixture, seed int64, h int) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed + int64(h)))
	evs := historyOf(r, 1+r.Intn(4), "", true)
	want, wantUnits := model(t, f.plan, evs)
	delete(want, "daily_units") // bounded rows hold totals, checked below
	check := func(name string) {
		t.Helper()
		got := readAll(t, ctx, f.ns, f.plan)
		delete(got, "daily_units")
		if d := got.diff(want); d != "" {
			t.Fatalf("history %d (seed %d), %s: store differs from the model:\n%s", h, seed+int64(h), name, d)
		}
		if gu := boundedUnits(t, ctx, f.ns, f.plan, ""); fmt.Sprint(gu) != fmt.Sprint(wantUnits) {
			t.Fatalf("history %d (seed %d), %s: units %v, want %v", h, seed+int64(h), name, gu, wantUnits)
		}
	}

	f.reset(t, ctx)
	raw := interleave(r, evs)
	inOrder := positioned(raw, "log")
	cs := &crashStore{Store: refuseStore{f.ns}, budget: -1}
	run(t, ctx, New(f.plan, withSyncOf(cs, f.st), Options{}), inOrder, rand.New(rand.NewSource(int64(h))))
	check("in order")
	total := cs.writes

	f.reset(t, ctx)
	shuffled := positioned(withDuplicates(r, append([]*event.Event(nil), evs...), evs), "log")
	run(t, ctx, New(f.plan, withSyncOf(refuseStore{f.ns}, f.st), Options{}), shuffled, rand.New(rand.NewSource(int64(h))))
	check("shuffled with duplicates")

	// The shuffled log replayed whole once more (a resume from an offset
	// file that was lost): every event a duplicate of one counted.
	run(t, ctx, New(f.plan, withSyncOf(refuseStore{f.ns}, f.st), Options{}), shuffled, rand.New(rand.NewSource(int64(h)+1)))
	check("shuffled, replayed from the start")

	for _, lg := range []struct {
		name string
		log  []*event.Event
	}{{"in order", inOrder}, {"shuffled", shuffled}, {"two streams", partitioned(shuffled)},
		// No positions: the writer's lanes, a fresh one after each failure.
		{"no positions", raw}, {"shuffled, no positions", unpositioned(shuffled)}} {
		cs := &crashStore{Store: refuseStore{f.ns}, budget: -1}
		f.reset(t, ctx)
		run(t, ctx, New(f.plan, withSyncOf(cs, f.st), Options{}), lg.log, rand.New(rand.NewSource(int64(h))))
		total := cs.writes
		for k := 0; k < total; k++ {
			f.reset(t, ctx)
			cs := &crashStore{Store: refuseStore{f.ns}, budget: k}
			w := New(f.plan, withSyncOf(cs, f.st), Options{})
			sizes := rand.New(rand.NewSource(int64(h)))
			crashed := false
			for off := 0; off < len(lg.log); {
				end := min(off+1+sizes.Intn(6), len(lg.log))
				_, _, err := applyIsolating(ctx, w, lg.log[off:end])
				if errors.Is(err, errCrash) {
					crashed = true
					cs.mu.Lock()
					cs.budget = -1
					cs.mu.Unlock()
					continue // resume at the batch's start, in batches of other sizes
				}
				if err != nil {
					t.Fatal(err)
				}
				off = end
			}
			if !crashed {
				t.Fatalf("history %d: crash at write %d of %d never happened", h, k, total)
			}
			check(fmt.Sprintf("%s, crash after write %d of %d", lg.name, k, total))
		}
	}
	_ = total
}
