package write_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/pebble" // registers pebble:// for store.Open
	"github.com/denorm/denorm/write"
)

// A service that owns orders writes each change through a Writer: one
// event, the whole new state of one order at one version, becomes the
// primary row and every copy the schema declares. Apply returns once
// everything is durable. The same event again rewrites the same cells (a
// redo, for a crash between writes); an older version is skipped.
func ExampleWriter_Apply() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "denorm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	plan, err := schema.Load(filepath.Join("..", "examples", "orders.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Open(ctx, "pebble://"+dir) // or hbase://thrift-host:9090
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if _, err := ddl.Create(ctx, st, plan); err != nil { // the schema's tables, with their splits
		log.Fatal(err)
	}

	w := write.New(plan, st, write.Options{})
	ev, err := event.Decode(plan, []byte(`{"entity": "order", "key": "o17", "version": 3,
		"state": {"orderId": "o17", "customerId": "c9", "status": "PAID", "placedAt": "2026-10-04T10:00:00Z",
		          "totalCents": 1234, "items": [{"line": 1, "sku": "sku7", "quantity": 2, "name": "Anvil", "priceCents": 617}]}}`))
	if err != nil {
		log.Fatal(err) // an *event.Error naming the field
	}
	stats, rejected, err := w.Apply(ctx, []*event.Event{ev})
	if err != nil {
		log.Fatal(err) // the store failed: apply the batch again
	}
	fmt.Println("applied", stats.Applied, "rejected", len(rejected))
	fmt.Println("cells in orders_by_sku:", stats.Cells["orders_by_sku"])

	older, err := event.Decode(plan, []byte(`{"entity": "order", "key": "o17", "version": 2,
		"state": {"orderId": "o17", "customerId": "c9", "status": "OPEN", "placedAt": "2026-10-04T10:00:00Z"}}`))
	if err != nil {
		log.Fatal(err)
	}
	again, _, err := w.Apply(ctx, []*event.Event{ev, older})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("replayed: applied", again.Applied, "redone", again.Redone, "stale", again.Stale)
	// Output:
	// applied 1 rejected 0
	// cells in orders_by_sku: 4
	// replayed: applied 0 redone 1 stale 1
}

// Run is the loop of `denorm apply`: read a batch from a replayable log,
// apply it, send what the writer refuses to the dead letters, and commit
// the log's position only once the batch is durable.
func ExampleRun() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "denorm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	plan, err := schema.Load(filepath.Join("..", "examples", "orders.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Open(ctx, "pebble://"+filepath.Join(dir, "data"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		log.Fatal(err)
	}

	events := filepath.Join(dir, "orders.jsonl")
	lines := `{"entity": "order", "key": "o1", "version": 1, "state": {"orderId": "o1", "customerId": "c1", "status": "OPEN", "placedAt": 1790000000000}}
{"entity": "order", "key": "o1", "version": 2, "state": {"orderId": "o1", "customerId": "c1", "status": "PAID", "placedAt": 1790000000000}}
{"entity": "order", "key": "o2", "version": 1, "state": {"orderId": "o2", "status": "OPEN"}}
`
	if err := os.WriteFile(events, []byte(lines), 0o644); err != nil {
		log.Fatal(err)
	}
	src, err := source.OpenFile(events, source.FileOptions{}) // resumes at events+".offset"
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	dead, err := source.OpenDeadLetterFile(filepath.Join(dir, "dead.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	defer dead.Close()

	stats, err := write.Run(ctx, write.New(plan, st, write.Options{}), src, dead, write.RunOptions{BatchSize: 500})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("events", stats.Events, "applied", stats.Applied, "dead letters", dead.Count())
	// Output:
	// events 3 applied 2 dead letters 1
}
