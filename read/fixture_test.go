package read

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/rowkey"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// fixture is the orders example after a generated stream was applied, with
// a model of the final orders computed from the events alone.
type fixture struct {
	plan     *schema.Plan
	st       store.Store
	orders   map[string]map[string]any // orderId -> newest state; deleted orders absent
	products map[string]string         // sku -> newest name
}

func ordersPlan(t testing.TB) *schema.Plan {
	t.Helper()
	p, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newFixture(t testing.TB, opts gen.OrdersOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := pebble.Open(ctx, filepath.Join(dir, "db"), pebble.Options{Durability: store.AsyncWAL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return applyStream(t, st, dir, ordersPlan(t), opts)
}

func applyStream(t testing.TB, st store.Store, dir string, plan *schema.Plan, opts gen.OrdersOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	var buf bytes.Buffer
	if err := gen.Orders(&buf, opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenFile(path, source.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dl, err := source.OpenDeadLetterFile(path + ".dead")
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	stats, err := write.Run(ctx, write.New(plan, st, write.Options{}), src, dl, write.RunOptions{BatchSize: 97})
	if err != nil {
		t.Fatal(err)
	}
	if stats.DeadLetters > 0 {
		t.Fatalf("%d dead letters", stats.DeadLetters)
	}
	f := &fixture{plan: plan, st: st, orders: map[string]map[string]any{}, products: map[string]string{}}
	versions := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		ev, err := event.Decode(plan, sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Entity {
		case "order":
			id := ev.Key["orderId"].(string)
			if ev.Version <= versions["o"+id] {
				continue
			}
			versions["o"+id] = ev.Version
			if ev.Op == event.Delete {
				delete(f.orders, id)
			} else {
				f.orders[id] = ev.State
			}
		case "product":
			sku := ev.Key["sku"].(string)
			if ev.Version <= versions["p"+sku] {
				continue
			}
			versions["p"+sku] = ev.Version
			if name, ok := ev.State["name"].(string); ok {
				f.products[sku] = name
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return f
}

// newestFirst sorts orders as the keys [.., reverse(placedAt), orderId] do.
func newestFirst(os []map[string]any) {
	sort.Slice(os, func(i, j int) bool {
		a, b := os[i], os[j]
		if a["placedAt"].(int64) != b["placedAt"].(int64) {
			return a["placedAt"].(int64) > b["placedAt"].(int64)
		}
		return a["orderId"].(string) < b["orderId"].(string)
	})
}

func (f *fixture) where(pred func(map[string]any) bool) []map[string]any {
	var out []map[string]any
	for _, o := range f.orders {
		if pred(o) {
			out = append(out, o)
		}
	}
	newestFirst(out)
	return out
}

func ids(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i], _ = r["orderId"].(string)
	}
	return out
}

// dayOf is the UTC day of a timestamp as the day() key part counts it.
func dayOf(ms int64) int32 { return rowkey.DayNumber(ms) }

// unitsKey names one daily_units counter: a SKU on a day.
type unitsKey struct {
	sku string
	day int32
}

// dailyUnits is the model of the daily_units counters: the quantity sold
// per SKU and day over the final orders, and a placedAt on each day.
func (f *fixture) dailyUnits() (want, at map[unitsKey]int64) {
	want, at = map[unitsKey]int64{}, map[unitsKey]int64{}
	for _, o := range f.orders {
		items, _ := o["items"].([]map[string]any)
		for _, it := range items {
			k := unitsKey{it["sku"].(string), dayOf(o["placedAt"].(int64))}
			want[k] += it["quantity"].(int64)
			at[k] = o["placedAt"].(int64)
		}
	}
	return want, at
}
