package reconcile

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase" // the backend behind hbase:// URLs
	"github.com/denorm/denorm/write"
)

// prefixed gives every table name a prefix, so a test's tables on a shared
// HBase are its own.
type prefixed struct {
	store.Store
	p string
}

func (s prefixed) CreateTable(ctx context.Context, spec store.TableSpec) error {
	spec.Name = s.p + spec.Name
	return s.Store.CreateTable(ctx, spec)
}
func (s prefixed) DescribeTable(ctx context.Context, t string) (store.TableSpec, error) {
	return s.Store.DescribeTable(ctx, s.p+t)
}
func (s prefixed) Regions(ctx context.Context, t string) ([]store.Region, error) {
	return s.Store.Regions(ctx, s.p+t)
}
func (s prefixed) Get(ctx context.Context, t string, g store.Get) (store.Row, error) {
	return s.Store.Get(ctx, s.p+t, g)
}
func (s prefixed) Scan(ctx context.Context, t string, sc store.Scan) (store.Scanner, error) {
	return s.Store.Scan(ctx, s.p+t, sc)
}
func (s prefixed) Mutate(ctx context.Context, t string, m store.RowMutation) error {
	return s.Store.Mutate(ctx, s.p+t, m)
}
func (s prefixed) Batch(ctx context.Context, t string, ms []store.RowMutation) ([]error, error) {
	return s.Store.Batch(ctx, s.p+t, ms)
}
func (s prefixed) Increment(ctx context.Context, t string, inc store.Increment) ([]int64, error) {
	return s.Store.Increment(ctx, s.p+t, inc)
}
func (s prefixed) CheckAndMutate(ctx context.Context, t string, c store.Condition, m store.RowMutation) (bool, error) {
	return s.Store.CheckAndMutate(ctx, s.p+t, c, m)
}

// The injected-failure round trip on the test environment's HBase:
// orphans and stale covering values found in known numbers, repaired, and
// gone on the next run.
func TestHBaseRepair(t *testing.T) {
	raw := testenv.HBaseURL(t)
	ctx := context.Background()
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The test environment's HBase cannot compress with SNAPPY.
	plan, err := schema.Parse("orders-gz.yaml", []byte(strings.ReplaceAll(string(b), "compression: SNAPPY", "compression: GZ")))
	if err != nil {
		t.Fatal(err)
	}
	base, err := store.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	st := prefixed{Store: base, p: fmt.Sprintf("rc%x_", rand.Int63())}
	t.Cleanup(func() {
		for _, tbl := range plan.Tables {
			if err := base.DropTable(ctx, st.p+tbl.Name); err != nil && !errors.Is(err, store.ErrTableNotFound) {
				t.Errorf("drop %s: %v", st.p+tbl.Name, err)
			}
		}
		base.Close()
	})
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
