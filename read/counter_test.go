package read

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
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
	text := strings.Replace(string(src), "mode: bounded", "mode: fast", 1)
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

// A counter moved from mode fast to mode exact keeps, until reconcile
// deletes it, the total mode fast incremented under the bare qualifier; the
// contributions count every entity again, so a read must not add it.
func TestDailyUnitsExactIgnoresFastTotals(t *testing.T) {
	src, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := schema.Parse("orders_exact.yaml", []byte(strings.Replace(string(src), "mode: bounded", "mode: exact", 1)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	st, err := pebble.Open(ctx, filepath.Join(dir, "db"), pebble.Options{Durability: store.AsyncWAL})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := applyStream(t, st, dir, plan, gen.OrdersOptions{Events: 800, Seed: 8, SKUs: 15})
	var rows [][]byte
	testenv.EachRow(t, ctx, st, "daily_units", func(r store.Row) { rows = append(rows, bytes.Clone(r.Key)) })
	for _, row := range rows {
		m := store.Mutation{Kind: store.Put, Family: "c", Qualifier: []byte("u"), Timestamp: 1, Value: layout.Int64Cell(1000)}
		if err := st.Mutate(ctx, "daily_units", store.RowMutation{Row: row, Mutations: []store.Mutation{m}}); err != nil {
			t.Fatal(err)
		}
	}
	r := New(f.plan, f.st, Options{})
	want, at := f.dailyUnits()
	if len(want) == 0 || len(rows) == 0 {
		t.Fatal("no counters in the fixture")
	}
	for k, sum := range want {
		res, err := r.Run(ctx, Request{Query: "daily_units", Values: map[string]any{"items.sku": k.sku, "placedAt": at[k]}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0]["c:u"] != sum {
			t.Fatalf("%v: got %+v, want %d", k, res.Rows, sum)
		}
	}
}

// getCounter counts the store calls a read makes.
type getCounter struct {
	store.Store
	gets, scans int
}

func (g *getCounter) Get(ctx context.Context, table string, get store.Get) (store.Row, error) {
	g.gets++
	return g.Store.Get(ctx, table, get)
}

func (g *getCounter) Scan(ctx context.Context, table string, sc store.Scan) (store.Scanner, error) {
	g.scans++
	return g.Store.Scan(ctx, table, sc)
}

// In bounded mode a counter is the total in its rows' state cells: exact
// on a stream with replays and duplicates, and, in one bucket, one Get of a
// row of at most 1 + adds cells.
func TestDailyUnitsBoundedMode(t *testing.T) {
	src, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, buckets := range []string{"4", "1"} {
		t.Run("buckets"+buckets, func(t *testing.T) {
			text := strings.Replace(string(src), "buckets: 1", "buckets: "+buckets, 1)
			plan, err := schema.Parse("orders_bounded.yaml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			if !plan.Table("daily_units").Counter.Bounded() || plan.Table("daily_units").Counter.Buckets != int(buckets[0]-'0') {
				t.Fatal("the counter is not bounded")
			}
			dir := t.TempDir()
			st, err := pebble.Open(context.Background(), filepath.Join(dir, "db"), pebble.Options{Durability: store.AsyncWAL})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			f := applyStream(t, st, dir, plan, gen.OrdersOptions{Events: 800, Seed: 8, SKUs: 15, Reorder: 0.1, Duplicate: 0.1})
			gc := &getCounter{Store: f.st}
			r := New(f.plan, gc, Options{})
			want, at := f.dailyUnits()
			if len(want) == 0 {
				t.Fatal("no counters in the fixture")
			}
			for k, sum := range want {
				gc.gets, gc.scans = 0, 0
				res, err := r.Run(context.Background(), Request{Query: "daily_units", Values: map[string]any{"items.sku": k.sku, "placedAt": at[k]}})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Rows) != 1 || res.Rows[0]["c:u"] != sum {
					t.Fatalf("%v: got %+v, want %d", k, res.Rows, sum)
				}
				if buckets == "1" && (gc.gets != 1 || gc.scans != 0) {
					t.Fatalf("%v: %d gets and %d scans, want one get", k, gc.gets, gc.scans)
				}
			}
		})
	}
}
