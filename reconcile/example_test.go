package reconcile_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/reconcile"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// A scheduler (cron, a Kubernetes CronJob) runs reconcile over the primary
// tables: a dry run only counts what differs; a run without DryRun repairs
// it, stamped so that a write made meanwhile always wins. Here one order's
// status index row is lost, the dry run finds it and the repair puts it
// back.
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
	st, err := store.Open(ctx, "pebble://"+dir)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		log.Fatal(err)
	}
	ev, err := event.Decode(plan, []byte(`{"entity": "order", "key": "o1", "version": 1, "state": {"orderId": "o1",
		"customerId": "c9", "status": "OPEN", "placedAt": "2026-10-01T09:00:00Z", "items": [{"line": 1, "sku": "sku7", "quantity": 2}]}}`))
	if err != nil {
		log.Fatal(err)
	}
	if _, _, err := write.New(plan, st, write.Options{}).Apply(ctx, []*event.Event{ev}); err != nil {
		log.Fatal(err)
	}
	// Lose the order's row in orders_by_status, as a crash between writes
	// without a replay would: delete it, and compact the marker away (a
	// marker at or above the row's version would mask the repair's put too).
	sc, err := st.Scan(ctx, "orders_by_status", store.Scan{})
	if err != nil {
		log.Fatal(err)
	}
	for sc.Next(ctx) {
		row := sc.Row().Key
		if err := st.Mutate(ctx, "orders_by_status", store.RowMutation{Row: row,
			Mutations: []store.Mutation{{Kind: store.DeleteRow, Timestamp: store.LatestTimestamp}}}); err != nil {
			log.Fatal(err)
		}
	}
	if err := sc.Close(); err != nil {
		log.Fatal(err)
	}
	if err := st.MajorCompact(ctx, "orders_by_status"); err != nil {
		log.Fatal(err)
	}

	check, err := reconcile.Run(ctx, plan, st, reconcile.Options{Table: "orders", DryRun: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dry run: rows", check.Rows, "differences", check.Differences(), "missing index rows", check.Kinds[reconcile.KindIndex].Missing)

	fixed, err := reconcile.Run(ctx, plan, st, reconcile.Options{Table: "orders"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("repair: repaired", fixed.Kinds[reconcile.KindIndex].Repaired, "failed", fixed.Failed())

	again, err := reconcile.Run(ctx, plan, st, reconcile.Options{Table: "orders", DryRun: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("after: differences", again.Differences())
	// Output:
	// dry run: rows 1 differences 1 missing index rows 1
	// repair: repaired 1 failed 0
	// after: differences 0
}

// Several processes share one table by shard: shard i of n reads the
// primary table's regions i, i+n, i+2n..., so n shards cover every row
// once. ParseShard reads the "i/n" form a flag or a job index gives.
func ExampleParseShard() {
	sh, err := reconcile.ParseShard("2/4")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sh.I, sh.N)
	_, err = reconcile.ParseShard("4/4")
	fmt.Println(err != nil)
	// Output:
	// 2 4
	// true
}
