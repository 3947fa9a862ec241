package read_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/read"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// orderStore is a store holding two orders of customer c9, written as a
// service would (see the write package's examples).
func orderStore(ctx context.Context, dir string) (*schema.Plan, store.Store) {
	plan, err := schema.Load(filepath.Join("..", "examples", "orders.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Open(ctx, "pebble://"+dir)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		log.Fatal(err)
	}
	var evs []*event.Event
	for _, line := range []string{
		`{"entity": "order", "key": "o1", "version": 1, "state": {"orderId": "o1", "customerId": "c9", "status": "SHIPPED",
		  "placedAt": "2026-10-01T09:00:00Z", "items": [{"line": 1, "sku": "sku7", "quantity": 2}]}}`,
		`{"entity": "order", "key": "o2", "version": 1, "state": {"orderId": "o2", "customerId": "c9", "status": "OPEN",
		  "placedAt": "2026-10-02T09:00:00Z", "items": [{"line": 1, "sku": "sku7", "quantity": 5}]}}`,
	} {
		ev, err := event.Decode(plan, []byte(line))
		if err != nil {
			log.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if _, _, err := write.New(plan, st, write.Options{}).Apply(ctx, evs); err != nil {
		log.Fatal(err)
	}
	return plan, st
}

// A Reader answers the schema's named queries: the caller gives the
// fields the query is by, and gets rows of field values back, newest first
// where the key says so. A query never scans more than its key prefix.
func ExampleReader_Run() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "denorm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	plan, st := orderStore(ctx, dir)
	defer st.Close()

	r := read.New(plan, st, read.Options{})
	res, err := r.Run(ctx, read.Request{Query: "recent_orders", Values: map[string]any{"customerId": "c9"}})
	if err != nil {
		log.Fatal(err) // errors.Is(err, read.ErrBadRequest) for a caller's mistake
	}
	for _, row := range res.Rows {
		fmt.Println(row["orderId"], row["status"])
	}

	// A thin index hit is checked against the primary row before it is
	// returned; values typed as text (a query string, a flag) go through
	// ParseValue first.
	status, err := r.ParseValue("orders_by_status", "status", "OPEN")
	if err != nil {
		log.Fatal(err)
	}
	res, err = r.Run(ctx, read.Request{Query: "orders_by_status", Values: map[string]any{"status": status}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("open:", len(res.Rows), res.Rows[0]["orderId"])
	// Output:
	// o2 OPEN
	// o1 SHIPPED
	// open: 1 o2
}

// A counter query sums the counter's bucket rows: units of one SKU on one
// day.
func ExampleReader_Run_counter() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "denorm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	plan, st := orderStore(ctx, dir)
	defer st.Close()

	r := read.New(plan, st, read.Options{})
	day, err := r.ParseValue("daily_units", "placedAt", "2026-10-02T00:00:00Z")
	if err != nil {
		log.Fatal(err)
	}
	res, err := r.Run(ctx, read.Request{Query: "daily_units", Values: map[string]any{"placedAt": day, "items.sku": "sku7"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Rows[0]["c:u"])
	// Output:
	// 5
}
