package read

import (
	"context"
	"errors"
	"testing"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/rowkey"
)

// Resume tokens and typed values come from outside (a URL, a command line):
// whatever they hold, a query answers or refuses with a bad request, and
// never panics or reads outside the query's ranges.
func FuzzQueryInput(f *testing.F) {
	fx := newFixture(f, gen.OrdersOptions{Events: 300, Seed: 2, Customers: 10})
	r := New(fx.plan, fx.st, Options{MaxLimit: 20})
	ctx := context.Background()
	first, err := r.Run(ctx, Request{Query: "orders_by_status", Values: map[string]any{"status": "OPEN"}, Limit: 3})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("OPEN", first.Next, "1700000000000")
	f.Add("SHIPPED", "", "2026-01-02T03:04:05Z")
	f.Add("", "e30", "-1")
	f.Add("x", "eyJxIjoib3JkZXJzX2J5X3N0YXR1cyIsImwiOltudWxsXSwiZCI6W2ZhbHNlXX0", "9e99")
	f.Fuzz(func(t *testing.T, status, next, ts string) {
		res, err := r.Run(ctx, Request{Query: "orders_by_status", Values: map[string]any{"status": status}, Next: next, Limit: 5})
		if err != nil && !errors.Is(err, ErrBadRequest) {
			t.Fatalf("status %q next %q: %v", status, next, err)
		}
		if err == nil {
			for _, row := range res.Rows {
				if row["status"] != status {
					t.Fatalf("status %q: row of status %v", status, row["status"])
				}
			}
		}
		v, err := parseText(rowkey.Timestamp, ts)
		if err == nil {
			if _, ok := v.(int64); !ok {
				t.Fatalf("%q parsed to %T", ts, v)
			}
		}
	})
}
