package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// loadPlan is the orders example with daily_units in mode exact (the mode
// these tests inject contribution faults into), or fast if asked; the
// example's own mode, bounded, has its tests in bounded_test.go.
func loadPlan(t testing.TB, fast bool) *schema.Plan {
	t.Helper()
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "mode: bounded", "mode: exact", 1)
	if fast {
		src = strings.Replace(string(b), "mode: bounded", "mode: fast", 1)
	}
	p, err := schema.Parse("orders.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hbasePlan is the orders example as the test HBase holds it (GZ for
// SNAPPY, see testenv.HBaseSchema), with fast counters if asked.
func hbasePlan(t testing.TB, fast bool) *schema.Plan {
	t.Helper()
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ReplaceAll(string(b), "compression: SNAPPY", "compression: GZ")
	if fast {
		src = strings.Replace(src, "mode: bounded", "mode: fast", 1)
	} else {
		src = strings.Replace(src, "mode: bounded", "mode: exact", 1)
	}
	p, err := schema.Parse("orders.yaml (GZ, fast)", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openStore(t testing.TB, plan *schema.Plan) store.Store {
	t.Helper()
	st, err := pebble.Open(context.Background(), t.TempDir(), pebble.Options{Durability: store.AsyncWAL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := ddl.Create(context.Background(), st, plan); err != nil {
		t.Fatal(err)
	}
	return st
}

// genEvents decodes a generated orders stream.
func genEvents(t testing.TB, plan *schema.Plan, opts gen.OrdersOptions) []*event.Event {
	t.Helper()
	var buf bytes.Buffer
	if err := gen.Orders(&buf, opts); err != nil {
		t.Fatal(err)
	}
	var evs []*event.Event
	for _, line := range bytes.Split(buf.Bytes(), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		ev, err := event.Decode(plan, line)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func apply(t testing.TB, ctx context.Context, w *write.Writer, evs []*event.Event) {
	t.Helper()
	_, rej, err := w.Apply(ctx, evs)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	for _, r := range rej {
		t.Errorf("apply: event %s refused: %v", r.Event.ID, r.Reason)
	}
	if len(rej) > 0 {
		t.FailNow()
	}
}

// snapshot is every visible cell of every table, as "table row fam:qual @ts = value" lines.
func snapshot(t testing.TB, ctx context.Context, st store.Store, plan *schema.Plan) []string {
	t.Helper()
	var out []string
	for _, tbl := range plan.Tables {
		sc, err := st.Scan(ctx, tbl.Name, store.Scan{})
		if err != nil {
			t.Fatal(err)
		}
		for sc.Next(ctx) {
			r := sc.Row()
			for _, c := range r.Cells {
				out = append(out, fmt.Sprintf("%s %s %s:%s @%d = %s", tbl.Name, store.Printable(r.Key), c.Family, store.Printable(c.Qualifier), c.Timestamp, store.Printable(c.Value)))
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		sc.Close()
	}
	sort.Strings(out)
	return out
}

// primaries lists the live entities of the primary table with their rows.
type entityRow struct {
	row   store.Row
	state *layout.State
}

func primaries(t testing.TB, ctx context.Context, st store.Store, plan *schema.Plan) []entityRow {
	t.Helper()
	ent := plan.Entity("order")
	prim := plan.Primary("order")
	sc, err := st.Scan(ctx, prim.Name, store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var out []entityRow
	for sc.Next(ctx) {
		row := copyRow(sc.Row())
		s, err := layout.ReadState(plan, ent, prim, row)
		if err != nil {
			t.Fatal(err)
		}
		if s.Exists() {
			out = append(out, entityRow{row, s})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mutate(t testing.TB, ctx context.Context, st store.Store, table string, row []byte, ms ...store.Mutation) {
	t.Helper()
	if err := st.Mutate(ctx, table, store.RowMutation{Row: row, Mutations: ms}); err != nil {
		t.Fatal(err)
	}
}

func run(t testing.TB, ctx context.Context, plan *schema.Plan, st store.Store, opts Options) *Report {
	t.Helper()
	rep, err := Run(ctx, plan, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// historyStores opens the embedded stores of one history, and closes and
// removes them all when the history ends (close): a soak of thousands of
// histories must not hold every history's store open until its test ends.
type historyStores struct {
	t     testing.TB
	clock func() int64
	done  []func()
}

func (h *historyStores) open() store.Store {
	h.t.Helper()
	dir, err := os.MkdirTemp("", "history")
	if err != nil {
		h.t.Fatal(err)
	}
	st, err := pebble.Open(context.Background(), dir, pebble.Options{Durability: store.AsyncWAL, Clock: h.clock, MemTableSize: 1 << 20})
	if err != nil {
		os.RemoveAll(dir)
		h.t.Fatal(err)
	}
	h.done = append(h.done, func() {
		st.Close()
		os.RemoveAll(dir)
	})
	return st
}

// create opens a store with the tables of p.
func (h *historyStores) create(p *schema.Plan) store.Store {
	h.t.Helper()
	st := h.open()
	if _, err := ddl.Create(context.Background(), st, p); err != nil {
		h.t.Fatal(err)
	}
	return st
}

func (h *historyStores) close() {
	for _, f := range h.done {
		f()
	}
	h.done = nil
}
