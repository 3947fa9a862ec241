package write

import (
	"context"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
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
func TestConvergenceSchemas(t *testing.T) {
	now := time.Now().UnixMilli()
	for _, file := range []string{"../examples/device_events.yaml", "testdata/tickets.yaml"} {
		p, err := schema.Load(file)
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
	want := readAll(t, ctx, f.ns, f.plan)
	held := map[string]bool{}
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
		if d := readAll(t, ctx, f.ns, f.plan).diff(want); d != "" {
			t.Fatalf("%s history %d (seed %d), %s: store differs from the log applied in order:\n%s", f.plan.Name, h, seed+int64(h), name, d)
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
