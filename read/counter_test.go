package read

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// In fast mode the counter is the incremented cell of each bucket row; on a
// clean stream (no replays, which fast mode may count twice) the sum over
// the buckets is exact.
func TestDailyUnitsFastMode(t *testing.T) {
	src, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "mode: exact", "mode: fast", 1)
	plan, err := schema.Parse("orders_fast.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if plan.Table("daily_units").Counter.Mode != schema.CounterFast {
		t.Fatal("the counter is not in fast mode")
	}
	dir := t.TempDir()
	st, err := pebble.Open(context.Background(), filepath.Join(dir, "db"), pebble.Options{Durability: store.AsyncWAL})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := applyStream(t, st, dir, plan, gen.OrdersOptions{Events: 800, Seed: 8, SKUs: 15})
	r := New(f.plan, f.st, Options{})
	want, at := f.dailyUnits()
	if len(want) == 0 {
		t.Fatal("no counters in the fixture")
	}
	for k, sum := range want {
		res, err := r.Run(context.Background(), Request{Query: "daily_units", Values: map[string]any{"items.sku": k.sku, "placedAt": at[k]}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0]["c:u"] != sum {
			t.Fatalf("%v: got %+v, want %d", k, res.Rows, sum)
		}
	}
}
