package read

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/store"
)

// countingStore counts the reads verification makes. It has no multi-get,
// so store.GetMany falls back to its Gets; multiCountingStore adds one.
type countingStore struct {
	store.Store
	gets, multiGets, multiRows atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, table string, g store.Get) (store.Row, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, table, g)
}

type multiCountingStore struct{ *countingStore }

func (c multiCountingStore) GetMany(ctx context.Context, table string, gets []store.Get) ([]store.Row, error) {
	c.multiGets.Add(1)
	c.multiRows.Add(int64(len(gets)))
	return store.GetMany(ctx, c.Store, table, gets)
}

// A page of thin hits is verified with one multi-get of its primary rows,
// and answers the same as verification through single Gets.
func TestThinPageIsOneMultiGet(t *testing.T) {
	f := newFixture(t, gen.OrdersOptions{Events: 600, Seed: 5, Customers: 40})
	want := ids(f.where(func(o map[string]any) bool { return o["status"] == "PAID" }))
	if len(want) < 10 {
		t.Fatalf("only %d PAID orders in the fixture", len(want))
	}
	req := Request{Query: "orders_by_status", Values: map[string]any{"status": "PAID"}, Limit: 10}
	ctx := context.Background()

	multi := multiCountingStore{&countingStore{Store: f.st}}
	res, err := New(f.plan, multi, Options{}).Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Rows); !slices.Equal(got, want[:10]) {
		t.Fatalf("with a multi-get: %v, want %v", got, want[:10])
	}
	if g, m, n := multi.gets.Load(), multi.multiGets.Load(), multi.multiRows.Load(); g != 0 || m != 1 || n != 10 {
		t.Errorf("a page of 10 hits took %d Gets and %d multi-gets of %d rows, want 0 Gets and 1 multi-get of 10", g, m, n)
	}

	single := &countingStore{Store: f.st}
	res, err = New(f.plan, single, Options{}).Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Rows); !slices.Equal(got, want[:10]) {
		t.Fatalf("with Gets only: %v, want %v", got, want[:10])
	}
	if g := single.gets.Load(); g != 10 {
		t.Errorf("without a multi-get, a page of 10 hits took %d Gets, want 10", g)
	}
}
