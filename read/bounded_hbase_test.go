package read

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
	_ "github.com/denorm/denorm/store/hbase" // the backend behind hbase:// URLs
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// dyingCounters writes a budget of counter rows and then fails: a writer
// that dies in the middle of a batch's counter rows, after its primary
// rows (the rows of its last Batch within the budget are written).
type dyingCounters struct {
	store.Store
	mu   sync.Mutex
	left int
}

var errDying = errors.New("writer died among its counter rows")

func (d *dyingCounters) Batch(ctx context.Context, t string, ms []store.RowMutation) ([]error, error) {
	if !strings.HasSuffix(t, "daily_units") {
		return d.Store.Batch(ctx, t, ms)
	}
	d.mu.Lock()
	n := min(d.left, len(ms))
	d.left -= n
	d.mu.Unlock()
	if n < len(ms) {
		if n > 0 {
			if _, err := d.Store.Batch(ctx, t, ms[:n]); err != nil {
				return nil, err
			}
		}
		return nil, errDying
	}
	return d.Store.Batch(ctx, t, ms)
}

// Bounded counters on real HBase through Thrift2: a skewed stream (a third
// of the items on one SKU) with duplicates and reordering, applied from a
// file by a writer that dies among its counter rows and is resumed, ends
// with the totals a clean apply gives, in rows of one part cell (one
// stream); the daily_units query reads each with one Get.
func TestHBaseBoundedCounters(t *testing.T) {
	hb := testenv.OpenHBase(t, "bc")
	plan := testenv.HBaseSchema(t, "../examples/orders.yaml")
	if !plan.Table("daily_units").Counter.Bounded() || plan.Table("daily_units").Counter.Buckets != 1 {
		t.Fatal("the example's daily_units is not a bounded counter in one bucket")
	}
	ctx := context.Background()
	opts := gen.OrdersOptions{Events: 1500, Seed: 9, SKUs: 50, HotSKU: 0.33, Reorder: 0.1, Duplicate: 0.1, Deletes: 0.03}
	// The model: the stream applied cleanly to the embedded store.
	pst, err := pebble.Open(ctx, filepath.Join(t.TempDir(), "db"), pebble.Options{Durability: store.AsyncWAL})
	if err != nil {
		t.Fatal(err)
	}
	defer pst.Close()
	f := applyStream(t, pst, t.TempDir(), plan, opts)

	if _, err := ddl.Create(ctx, hb, plan); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	events := filepath.Join(dir, "skewed.jsonl")
	var buf bytes.Buffer
	if err := gen.Orders(&buf, opts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(events, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(st store.Store) error {
		src, err := source.OpenFile(events, source.FileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		dl, err := source.OpenDeadLetterFile(events + ".dead")
		if err != nil {
			t.Fatal(err)
		}
		defer dl.Close()
		_, err = write.Run(ctx, write.New(plan, st, write.Options{}), src, dl, write.RunOptions{BatchSize: 200})
		return err
	}
	if err := run(&dyingCounters{Store: hb, left: 150}); !errors.Is(err, errDying) {
		t.Fatalf("first run: %v, want the writer to die", err)
	}
	if err := run(hb); err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	want, at := f.dailyUnits()
	gc := &getCounter{Store: hb}
	r := New(plan, gc, Options{})
	for k, sum := range want {
		gc.gets, gc.scans = 0, 0
		res, err := r.Run(ctx, Request{Query: "daily_units", Values: map[string]any{"items.sku": k.sku, "placedAt": at[k]}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0]["c:u"] != sum {
			t.Fatalf("%v: got %+v, want %d", k, res.Rows, sum)
		}
		if gc.gets != 1 || gc.scans != 0 {
			t.Fatalf("%v: %d gets and %d scans, want one get", k, gc.gets, gc.scans)
		}
	}
	sc, err := hb.Scan(ctx, "daily_units", store.Scan{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	rows := 0
	for sc.Next(ctx) {
		rows++
		row := sc.Row()
		if len(row.Cells) != 1 {
			t.Fatalf("counter row %s has %d cells, want the part cell of the one stream", store.Printable(row.Key), len(row.Cells))
		}
		if _, ok := layout.CounterPartStream(row.Cells[0].Qualifier); !ok {
			t.Fatalf("counter row %s holds %q, not a part cell", store.Printable(row.Key), row.Cells[0].Qualifier)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows == 0 {
		t.Fatal("no counter rows")
	}
}
