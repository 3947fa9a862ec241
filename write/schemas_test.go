package write

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// TestConvergenceSchemas holds the writer to the convergence property on
// schemas other than the orders example, with histories made from the
// schema's declarations alone, so that no hand-written model of one schema
// decides what is tried. The orders tests compare the store with a model;
// these compare it with itself: the log shuffled with duplicates, and a
// crash after every write of the log in order and of the shuffled one,
// must each end in the store the log in order makes, and no valid event
// may be refused.
//
// device_events brings a composite entity key whose parts are the whole
// primary row key, epoch-millisecond versions under a TTL, float64 fields
// and a partial index (when). testdata/tickets.yaml adds bool and bytes
// fields, a partial thin index on a salted key, a counter in buckets, an
// index per child element covering an entity field, and two references to
// one entity, from an entity field and from a child field, copied live.
//
// tickets_bounded is tickets.yaml with its counters in mode bounded, whose
// rows hold totals and each log stream's sequence: those are compared as
// totals (boundedTotals), as a reader sums them.
func TestConvergenceSchemas(t *testing.T) {
	now := time.Now().UnixMilli()
	tickets, err := os.ReadFile("testdata/tickets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bounded := strings.ReplaceAll(string(tickets), "mode: exact", "mode: bounded")
	if bounded == string(tickets) {
		t.Fatal("tickets.yaml has no counter in mode exact")
	}
	device, err := os.ReadFile("../examples/device_events.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []struct{ name, text string }{
		{"device_events.yaml", string(device)},
		{"tickets.yaml", string(tickets)},
		{"tickets_bounded.yaml", strings.Replace(bounded, "name: tickets", "name: tickets_bounded", 1)},
	} {
		p, err := schema.Parse(src.name, []byte(src.text))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.Name, func(t *testing.T) {
			seed := int64(20261206)
			n := max(1, historyCount()/5)
			t.Logf("%d histories from seed %d", n, seed)
			setup := func(tb testing.TB) *fixture {
				f := &fixture{plan: p, ns: &nsStore{}, clock: func() int64 { return now }}
				f.open(tb)
				tb.Cleanup(func() { f.close(tb) })
				return f
			}
			// Every table, and live copies where the schema has them, must
			// hold rows after some history, or the histories try too little.
			var mu sync.Mutex
			held := map[string]int{}
			t.Cleanup(func() {
				if n < 50 || t.Failed() {
					return
				}
				var want []string
				for _, tb := range p.Tables {
					want = append(want, tb.Name)
				}
				if hasLive(p) {
					want = append(want, liveCopies)
				}
				for _, k := range want {
					if held[k] == 0 {
						t.Errorf("no history left anything in %s", k)
					}
				}
				t.Logf("histories leaving rows: %v", held)
			})
			inShards(t, n, setup, func(t *testing.T, f *fixture, h int) {
				got := schemaHistoryConverges(t, f, seed, h, now)
				mu.Lock()
				defer mu.Unlock()
				for k := range got {
					held[k]++
				}
			})
		})
	}
}

// liveCopies counts, in TestConvergenceSchemas, the histories that left a
// live copy in a primary row.
const liveCopies = "live copies"

// hasLive reports whether some reference of p copies a field live.
func hasLive(p *schema.Plan) bool {
	for _, e := range p.Entities {
		for _, r := range e.References {
			if len(r.Live) > 0 {
				return true
			}
		}
	}
	return false
}

// schemaHistoryConverges checks one history of TestConvergenceSchemas and
// returns the tables (and liveCopies) the log in order left rows in.
func schemaHistoryConverges(t *testing.T, f *fixture, seed int64, h int, now int64) map[string]bool {
	ctx := context.Background()
	r := rand.New(rand.NewSource(seed + int64(h)))
	evs := testenv.History(t, r, f.plan, testenv.HistoryOptions{Entities: 1 + r.Intn(4), Now: now})

	f.reset(t, ctx)
	inOrder := testenv.Interleave(r, evs, testenv.EntityOf(f.plan))
	run(t, ctx, New(f.plan, withSyncOf(f.ns, f.st), Options{Clock: f.clock}), inOrder, rand.New(rand.NewSource(int64(h))))
	// Bounded counter rows are compared as totals (boundedTotals).
	read := func() tableState {
		ts := readAll(t, ctx, f.ns, f.plan)
		for _, tbl := range f.plan.Tables {
			if tbl.Counter.Bounded() {
				delete(ts, tbl.Name)
			}
		}
		return ts
	}
	want, wantTotals := read(), boundedTotals(t, ctx, f.ns, f.plan)
	held := map[string]bool{}
	for k := range wantTotals {
		held[strings.Fields(k)[0]] = true
	}
	for tb, rows := range want {
		held[tb] = len(rows) > 0
		if f.plan.Table(tb).Role != schema.RolePrimary {
			continue
		}
		for _, cols := range rows {
			for c := range cols {
				if _, q, _ := strings.Cut(c, ":"); layout.IsLive([]byte(q)) {
					held[liveCopies] = true
				}
			}
		}
	}
	check := func(name string) {
		t.Helper()
		if d := read().diff(want); d != "" {
			t.Fatalf("%s history %d (seed %d), %s: store differs from the log applied in order:\n%s", f.plan.Name, h, seed+int64(h), name, d)
		}
		if got := boundedTotals(t, ctx, f.ns, f.plan); fmt.Sprint(got) != fmt.Sprint(wantTotals) {
			t.Fatalf("%s history %d (seed %d), %s: bounded totals %v, want %v as in log order", f.plan.Name, h, seed+int64(h), name, got, wantTotals)
		}
	}

	f.reset(t, ctx)
	shuffled := withDuplicates(r, append([]*event.Event(nil), evs...), evs)
	run(t, ctx, New(f.plan, withSyncOf(f.ns, f.st), Options{Clock: f.clock}), shuffled, rand.New(rand.NewSource(int64(h))))
	check("shuffled with duplicates")

	crashEvery(t, f, h, inOrder, "in order", check)
	crashEvery(t, f, h, positioned(shuffled, "log"), "shuffled", check)

	// Through Run, each batch staged while the last one is written, with
	// a crash after every write (every third for long runs); for every
	// eighth history, as Run's restarts take most of a history's time.
	if h%8 != 0 {
		return held
	}
	crashAhead(t, f, h, inOrder, "in order through Run", check)
	crashAhead(t, f, h, shuffled, "shuffled through Run", check)
	return held
}

// boundedTotals is every nonzero total of the plan's bounded counters, by
// table, row and column, as a reader sums a row's parts. readAll leaves the
// rows out: their cells also hold each log stream's sequence, which depends
// on the order the log came in.
func boundedTotals(t testing.TB, ctx context.Context, st store.Store, p *schema.Plan) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, tbl := range p.Tables {
		if !tbl.Counter.Bounded() {
			continue
		}
		fam := layout.CounterStateFamily(tbl)
		eachRow(t, ctx, st, tbl.Name, func(row store.Row) {
			cc, err := layout.ReadCounterCells(row, fam)
			if err != nil {
				t.Fatal(err)
			}
			cs := cc.Merged()
			for _, a := range tbl.Counter.Adds {
				if v := cs.Total(a.Family, []byte(a.Qualifier)); v != 0 {
					out[fmt.Sprintf("%s %s %s:%s", tbl.Name, store.Printable(row.Key), a.Family, a.Qualifier)] += v
				}
			}
		})
	}
	return out
}
