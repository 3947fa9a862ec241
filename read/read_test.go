package read

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// shared is the read-only fixture most tests use, built once: applying the
// stream is the slow part, especially under the race detector.
var shared struct {
	once sync.Once
	dir  string
	f    *fixture
	err  error
}

func testFixture(t *testing.T) *fixture {
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "readtest")
		if shared.err != nil {
			return
		}
		st, err := pebble.Open(context.Background(), filepath.Join(shared.dir, "db"), pebble.Options{Durability: store.AsyncWAL})
		if err != nil {
			shared.err = err
			return
		}
		shared.f = applyStream(t, st, shared.dir, ordersPlan(t), gen.OrdersOptions{Events: 4000, Seed: 7, Customers: 150, SKUs: 40, Deletes: 0.03, Renames: 0.03, Reorder: 0.05, Duplicate: 0.02})
	})
	if shared.err != nil || shared.f == nil {
		t.Fatalf("building the shared fixture failed: %v", shared.err)
	}
	return shared.f
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.f != nil {
		shared.f.st.Close()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	if benchShared.f != nil {
		benchShared.f.st.Close()
		os.RemoveAll(benchShared.dir)
	}
	os.Exit(code)
}

func TestRecentOrdersPrefix(t *testing.T) {
	f := testFixture(t)
	r := New(f.plan, f.st, Options{})
	ctx := context.Background()
	checked := 0
	for _, o := range f.orders {
		if checked == 20 {
			break
		}
		cust := o["customerId"].(string)
		want := f.where(func(m map[string]any) bool { return m["customerId"] == cust })
		res, err := r.Run(ctx, Request{Query: "recent_orders", Values: map[string]any{"customerId": cust}})
		if err != nil {
			t.Fatal(err)
		}
		if len(want) > 50 {
			want = want[:50]
		}
		if got := ids(res.Rows); !reflect.DeepEqual(got, ids(want)) {
			t.Fatalf("customer %s: got %v, want %v", cust, got, ids(want))
		}
		for i, row := range res.Rows {
			w := want[i]
			if row["status"] != w["status"] || row["totalCents"] != w["totalCents"] || row["placedAt"] != w["placedAt"] {
				t.Fatalf("order %s: got %v, want %v", w["orderId"], row, w)
			}
			items, _ := row["items"].([]map[string]any)
			wantItems, _ := w["items"].([]map[string]any)
			if len(items) != len(wantItems) {
				t.Fatalf("order %s: %d items, want %d", w["orderId"], len(items), len(wantItems))
			}
			for _, it := range items {
				if name, ok := f.products[it["sku"].(string)]; ok && it["name"] != name {
					t.Fatalf("order %s item %v: name %q, want the live copy %q", w["orderId"], it["line"], it["name"], name)
				}
			}
		}
		checked++
	}
}

func TestOpenOrderGet(t *testing.T) {
	f := testFixture(t)
	r := New(f.plan, f.st, Options{})
	ctx := context.Background()
	n := 0
	for id, o := range f.orders {
		if n == 30 {
			break
		}
		n++
		res, err := r.Run(ctx, Request{Query: "open_order", Values: map[string]any{"customerId": o["customerId"], "placedAt": o["placedAt"], "orderId": id}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0]["orderId"] != id || res.Rows[0]["status"] != o["status"] || res.Next != "" {
			t.Fatalf("order %s: got %+v", id, res)
		}
	}
	res, err := r.Run(ctx, Request{Query: "open_order", Values: map[string]any{"customerId": "nobody", "placedAt": int64(1), "orderId": "none"}})
	if err != nil || len(res.Rows) != 0 {
		t.Fatalf("missing order: %+v, %v", res, err)
	}
}

// The salted index is read as eight ranges; the merged result must be the
// model's orders of that status, newest first, whatever the page sizes.
func TestOrdersByStatusMergeAndPaging(t *testing.T) {
	f := testFixture(t)
	r := New(f.plan, f.st, Options{})
	ctx := context.Background()
	rnd := rand.New(rand.NewSource(11))
	for _, status := range []string{"OPEN", "PAID", "SHIPPED", "CANCELLED"} {
		want := ids(f.where(func(m map[string]any) bool { return m["status"] == status }))
		if len(want) == 0 {
			t.Fatalf("no %s orders in the fixture", status)
		}
		for round := 0; round < 3; round++ {
			var got []string
			next := ""
			for pages := 0; ; pages++ {
				if pages > len(want)+2 {
					t.Fatalf("%s: paging does not end", status)
				}
				limit := 1 + rnd.Intn(40)
				if round == 0 {
					limit = 1000
				}
				res, err := r.Run(ctx, Request{Query: "orders_by_status", Values: map[string]any{"status": status}, Limit: limit, Next: next})
				if err != nil {
					t.Fatal(err)
				}
				if res.DroppedStale != 0 {
					t.Fatalf("%s: %d stale hits on a converged store", status, res.DroppedStale)
				}
				if len(res.Rows) > limit {
					t.Fatalf("%s: %d rows over the limit %d", status, len(res.Rows), limit)
				}
				got = append(got, ids(res.Rows)...)
				if res.Next == "" {
					break
				}
				next = res.Next
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s round %d: %d rows, want %d\n got %v\nwant %v", status, round, len(got), len(want), got, want)
			}
		}
	}
}

func TestRecentOrdersPaging(t *testing.T) {
	f := testFixture(t)
	r := New(f.plan, f.st, Options{})
	ctx := context.Background()
	counts := map[string]int{}
	best := ""
	for _, o := range f.orders {
		c := o["customerId"].(string)
		counts[c]++
		if counts[c] > counts[best] {
			best = c
		}
	}
	want := ids(f.where(func(m map[string]any) bool { return m["customerId"] == best }))
	rnd := rand.New(rand.NewSource(3))
	var got []string
	next := ""
	for {
		res, err := r.Run(ctx, Request{Query: "recent_orders", Values: map[string]any{"customerId": best}, Limit: 1 + rnd.Intn(5), Next: next})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(res.Rows)...)
		if next = res.Next; next == "" {
			break
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestDailyUnitsCounter(t *testing.T) {
	f := testFixture(t)
	r := New(f.plan, f.st, Options{})
	ctx := context.Background()
	want, at := f.dailyUnits()
	n := 0
	for k, sum := range want {
		if n == 40 {
			break
		}
		n++
		res, err := r.Run(ctx, Request{Query: "daily_units", Values: map[string]any{"items.sku": k.sku, "placedAt": at[k]}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0]["c:u"] != sum {
			t.Fatalf("%v: got %+v, want %d", k, res.Rows, sum)
		}
	}
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t, gen.OrdersOptions{Events: 50, Seed: 1})
	r := New(f.plan, f.st, Options{})
	ctx := context.Background()
	for _, req := range []Request{
		{Query: "nope"},
		{Query: "recent_orders"},
		{Query: "recent_orders", Values: map[string]any{"customerId": "c1", "status": "OPEN"}},
		{Query: "recent_orders", Values: map[string]any{"customerId": "c1"}, Next: "%%%"},
		{Query: "recent_orders", Values: map[string]any{"customerId": "c1"}, Next: "e30"},
		{Query: "recent_orders", Values: map[string]any{"customerId": "c1"}, Limit: -1},
		{Query: "open_order", Values: map[string]any{"customerId": "c1", "placedAt": "yesterday", "orderId": "o"}},
	} {
		if _, err := r.Run(ctx, req); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%+v: err %v, want a bad request", req, err)
		}
	}
	if _, err := r.ParseValue("open_order", "placedAt", "2026-01-02T03:04:05Z"); err != nil {
		t.Error(err)
	}
	if v, err := r.ParseValue("open_order", "placedAt", "1700000000000"); err != nil || v != int64(1700000000000) {
		t.Error(v, err)
	}
	if _, err := r.ParseValue("open_order", "status", "x"); !errors.Is(err, ErrBadRequest) {
		t.Error("a field the query is not by was accepted")
	}
}

// A token from one query's range is refused by another's, and a page never
// exceeds the reader's cap.
func TestLimitCap(t *testing.T) {
	f := testFixture(t)
	r := New(f.plan, f.st, Options{MaxLimit: 7})
	res, err := r.Run(context.Background(), Request{Query: "orders_by_status", Values: map[string]any{"status": "SHIPPED"}, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 7 || res.Next == "" {
		t.Fatalf("%d rows, next %q", len(res.Rows), res.Next)
	}
	if _, err := r.Run(context.Background(), Request{Query: "recent_orders", Values: map[string]any{"customerId": "c1"}, Next: res.Next}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("foreign token: %v", err)
	}
}
