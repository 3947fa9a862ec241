package reconcile

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase" // the backend behind hbase:// URLs
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// The injected-failure round trip on the test environment's HBase:
// orphans and stale covering values found in known numbers, repaired, and
// gone on the next run.
func TestHBaseRepair(t *testing.T) {
	ctx := context.Background()
	plan := testenv.HBaseSchema(t, "../examples/orders.yaml")
	st := testenv.OpenHBase(t, "rc")
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		t.Fatal(err)
	}
	apply(t, ctx, write.New(plan, st, write.Options{}), genEvents(t, plan, gen.OrdersOptions{Events: 300, Seed: 11, SKUs: 20, Renames: 0.1}))
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 || rep.Rows == 0 {
		t.Fatalf("the writer's own output has differences:\n%s", text(rep))
	}
	ent := plan.Entity("order")
	const ghosts, stale = 2, 2
	for i := 0; i < ghosts; i++ {
		d, err := layout.Derive(plan, ent, map[string]any{"orderId": fmt.Sprintf("ghost-%d", i), "customerId": "c-x", "placedAt": int64(1_760_000_000_000), "status": "OPEN"})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.Table == "orders_by_status" {
				mutate(t, ctx, st, it.Table, it.Row, cellPuts(it.Cells, 5)...)
			}
		}
	}
	n := 0
	for _, e := range primaries(t, ctx, st, plan) {
		if n == stale {
			break
		}
		d, err := layout.Derive(plan, ent, e.state.Values)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range d.Items {
			if it.Table == "orders_by_sku" {
				mutate(t, ctx, st, it.Table, it.Row, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte("s"), Timestamp: e.state.Version, Value: []byte("WRONG")})
				n++
				break
			}
		}
	}
	if n != stale {
		t.Fatalf("only %d orders with items", n)
	}
	want := map[string]Counts{KindIndex: {Orphaned: ghosts, Stale: stale}}
	checkCounts(t, "dry run", run(t, ctx, plan, st, Options{DryRun: true}), want)
	fix := run(t, ctx, plan, st, Options{})
	checkCounts(t, "repair", fix, want)
	if fix.Failed() != 0 {
		t.Fatalf("repairs failed:\n%s", text(fix))
	}
	if rep := run(t, ctx, plan, st, Options{DryRun: true}); rep.Differences() != 0 {
		t.Fatalf("differences after the repair:\n%s", text(rep))
	}
}

// Every kind of fault on the test HBase, exact and fast counters: found in
// exactly the injected numbers by the single-process job, plan/run/merge
// and --shard; the repair fixes all but the writes behind delete markers
// (HBase's major compaction is asynchronous, so lost writes are markers
// here too), which it reports failed.
func TestHBaseFaultsEveryKind(t *testing.T) {
	for _, fast := range []bool{false, true} {
		name := map[bool]string{false: "exact", true: "fast"}[fast]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			sp := hbasePlan(t, fast)
			st := testenv.OpenHBase(t, "rcf"+name[:1])
			if _, err := ddl.Create(ctx, st, sp); err != nil {
				t.Fatal(err)
			}
			faultRoundTrip(t, sp, st, false)
		})
	}
}

// TestHBaseSchemaEvolution makes, on the test HBase, the schema changes
// of TestSchemaEvolution whose repairs write what no other test writes
// there: a bounded counter's Counted records rewritten over the ones read,
// at their timestamps, which HBase must take as the newer cells (a counter
// added; a when added to one), and a fast counter's bare totals deleted
// when it moves to mode exact.
func TestHBaseSchemaEvolution(t *testing.T) {
	now := time.Now().UnixMilli()
	tickets := readFile(t, "../write/testdata/tickets.yaml")
	orders := readFile(t, "../examples/orders.yaml")
	bounded := strings.ReplaceAll(string(tickets), "mode: exact", "mode: bounded")
	for _, c := range []struct{ file, text, change string }{
		{"tickets_bounded.yaml", bounded, "daily_counts added"},
		{"tickets_bounded.yaml", bounded, "tag_weights made partial"},
		{"tickets.yaml", string(tickets), "daily_counts from mode fast"},
		{"orders.yaml", strings.ReplaceAll(string(orders), "compression: SNAPPY", "compression: GZ"), "daily_units added"},
	} {
		t.Run(c.file+"/"+c.change, func(t *testing.T) {
			full, err := schema.Parse(c.file, []byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(schemaChanges(t, c.file, []byte(c.text), full), func(sc schemaChange) bool { return sc.name == c.change })
			if i < 0 {
				t.Fatalf("no change %q", c.change)
			}
			sc := schemaChanges(t, c.file, []byte(c.text), full)[i]
			// Histories the change gives the repairs something to do in,
			// picked on the embedded store (an HBase history costs seconds
			// of table creation), then run on HBase.
			var seeds []int64
			for h := int64(0); h < 60 && len(seeds) < 2; h++ {
				if evolveHistory(t, sc.old, full, sc, 20261207+h, now, evolveOptions{wall: true}) > 0 {
					seeds = append(seeds, 20261207+h)
				}
			}
			if len(seeds) == 0 {
				t.Fatal("no history gave the repairs anything to do")
			}
			for _, seed := range seeds {
				if evolveHistory(t, sc.old, full, sc, seed, now, evolveOptions{wall: true, hb: true}) == 0 {
					t.Errorf("seed %d: on HBase the first repair found nothing", seed)
				}
			}
		})
	}
}

// TestHBaseBoundedMovedEntities runs TestBoundedMovedEntities's check on
// the test HBase, for histories that left records under tombstones (picked
// on the embedded store, as an HBase history costs seconds of table
// creation).
func TestHBaseBoundedMovedEntities(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UnixMilli()
	plan := testenv.HBaseSchema(t, "../examples/orders.yaml")
	var seeds []int64
	for h := int64(0); h < 60 && len(seeds) < 3; h++ {
		st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{Durability: store.AsyncWAL, MemTableSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if movedHistory(t, plan, st, 20261207+h, now) > 0 {
			seeds = append(seeds, 20261207+h)
		}
		st.Close()
	}
	if len(seeds) == 0 {
		t.Fatal("no history left a record under a tombstone")
	}
	for _, seed := range seeds {
		if movedHistory(t, plan, testenv.OpenHBase(t, "mv"), seed, now) == 0 {
			t.Errorf("seed %d: on HBase no record under a tombstone", seed)
		}
	}
}

// TestHBasePartitionsAdded runs TestPartitionsAdded's check with the two
// writers on the test HBase, whose round trips make them overlap more
// than on the embedded store.
func TestHBasePartitionsAdded(t *testing.T) {
	now := time.Now().UnixMilli()
	plan := testenv.HBaseSchema(t, "../examples/orders.yaml")
	differed := 0
	for h := range int64(4) {
		if _, d := partitionsHistory(t, plan, testenv.OpenHBase(t, "pa"), 20261207+h, now, h%2 == 1); d {
			differed++
		}
	}
	t.Logf("%d of 4 histories left differences for the repair", differed)
}

// TestHBaseRepairBeforeReplay runs TestRepairBeforeReplay's check with the
// writer that dies, the job and the replay on the test HBase, whose Batch
// lands row by row and whose delete markers mask puts at their timestamp
// until a major compaction. Histories are picked on the embedded store
// where the job found something after the crash (an HBase history costs
// seconds of table creation).
func TestHBaseRepairBeforeReplay(t *testing.T) {
	now := time.Now().UnixMilli()
	tickets := readFile(t, "../write/testdata/tickets.yaml")
	orders := readFile(t, "../examples/orders.yaml")
	for _, c := range []struct{ file, text string }{
		{"tickets_bounded.yaml", strings.ReplaceAll(string(tickets), "mode: exact", "mode: bounded")},
		{"orders.yaml", strings.ReplaceAll(string(orders), "compression: SNAPPY", "compression: GZ")},
	} {
		t.Run(c.file, func(t *testing.T) {
			p, err := schema.Parse(c.file, []byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			var picked []crashOptions
			var seeds []int64
			for h := int64(0); h < 60 && len(seeds) < 1; h++ {
				o := crashOptions{shuffle: h%2 == 1, purge: h%4 >= 2, wall: true}
				if crashRepairHistory(t, p, 20261207+h, now, o) {
					seeds, picked = append(seeds, 20261207+h), append(picked, o)
				}
			}
			if len(seeds) == 0 {
				t.Fatal("no crash left the job anything to see")
			}
			found := 0
			for i, seed := range seeds {
				o := picked[i]
				o.hb = true
				if crashRepairHistory(t, p, seed, now, o) {
					found++
				}
			}
			t.Logf("on HBase the job found differences after %d of %d crashes", found, len(seeds))
		})
	}
}

var hbaseConcurrentHistories = flag.Int("hbase-concurrent-histories", 2, "histories TestHBaseConcurrentWriterAndRepair runs for each case")

// TestHBaseConcurrentWriterAndRepair runs TestConcurrentWriterAndRepair's
// check on the test HBase, whose scans read each row at its own moment,
// for orders that move (daily_units exact and bounded) and orders that
// stay (bounded).
func TestHBaseConcurrentWriterAndRepair(t *testing.T) {
	for _, c := range concurrentCases {
		if !c.moves && !c.bounded {
			continue
		}
		plan := hbasePlan(t, false)
		if c.bounded {
			plan = testenv.HBaseSchema(t, "../examples/orders.yaml")
		}
		for seed := int64(1); seed <= int64(*hbaseConcurrentHistories); seed++ {
			t.Run(fmt.Sprintf("%s/%d", c.name, seed), func(t *testing.T) {
				st := testenv.OpenHBase(t, "cw")
				if _, err := ddl.Create(context.Background(), st, plan); err != nil {
					t.Fatal(err)
				}
				v := variantOf(seed)
				v.rowByRow = true // HBase's own scans read row by row
				// Its repairs purge delete markers, which needs the
				// embedded store's compaction.
				v.repartitioned = false
				concurrentHistory(t, plan, st, st, openStore(t, plan), seed, c.moves, v)
			})
		}
	}
}
