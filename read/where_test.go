package read

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/denorm/denorm/schema"
)

// A query's where predicates are constants: one on a key part fixes it,
// one on another field filters the rows read.
func TestWherePredicates(t *testing.T) {
	f := testFixture(t)
	src, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	extra := []byte(`queries:
  open_orders:
    table: orders_by_status
    where: {status: OPEN}
    limit: 100000
  customer_shipped:
    table: orders
    by: [customerId]
    where: {status: SHIPPED}
    limit: 100000
`)
	plan, err := schema.Parse("orders-where.yaml", bytes.Replace(src, []byte("queries:\n"), extra, 1))
	if err != nil {
		t.Fatal(err)
	}
	r := New(plan, f.st, Options{MaxLimit: 100000})
	ctx := context.Background()
	res, err := r.Run(ctx, Request{Query: "open_orders"})
	if err != nil {
		t.Fatal(err)
	}
	want := ids(f.where(func(m map[string]any) bool { return m["status"] == "OPEN" }))
	if got := ids(res.Rows); len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("open_orders: %d rows, want the %d open orders", len(got), len(want))
	}
	checked, nonEmpty := 0, 0
	for _, o := range f.orders {
		if checked == 20 {
			break
		}
		cust := o["customerId"].(string)
		res, err := r.Run(ctx, Request{Query: "customer_shipped", Values: map[string]any{"customerId": cust}})
		if err != nil {
			t.Fatal(err)
		}
		want := ids(f.where(func(m map[string]any) bool { return m["customerId"] == cust && m["status"] == "SHIPPED" }))
		if got := ids(res.Rows); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("customer %s shipped: got %v, want %v", cust, got, want)
		}
		if len(want) > 0 {
			nonEmpty++
		}
		checked++
	}
	if nonEmpty == 0 {
		t.Fatal("no customer with shipped orders among those checked: the filter went untested")
	}
}
