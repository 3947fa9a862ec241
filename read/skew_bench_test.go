package read

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/source"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
	"github.com/denorm/denorm/write"
)

// skewEvents is the stream BenchmarkSkewedCounter applies: DENORM_SKEW_EVENTS
// events (default 100,000; docs/BENCHMARKS.md has the 1,000,000 run), 30%
// of the order items on one SKU.
func skewEvents() int {
	if n, err := strconv.Atoi(os.Getenv("DENORM_SKEW_EVENTS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// skewStore is one mode's store with the skewed stream applied through a
// log (write.Run, as denorm apply does), and its busiest counter row.
type skewStore struct {
	plan      *schema.Plan
	st        store.Store
	busiest   []byte // the daily_units row with the most cells
	cells     int
	bytes     int
	sku       string
	placedAt  int64
	applySecs float64
	rows      int // daily_units rows
	maxCells  int // the most cells of any of them
}

var (
	skewMu     sync.Mutex
	skewStores = map[string]*skewStore{}
)

// skewFixture applies the stream once per mode and keeps the store for the
// benchmark's iterations (and the other mode's benchmark, which reads it
// for the same events).
func skewFixture(b, owner *testing.B, mode string) *skewStore {
	b.Helper()
	skewMu.Lock()
	defer skewMu.Unlock()
	if s := skewStores[mode]; s != nil {
		return s
	}
	src, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Replace(string(src), "mode: bounded", "mode: "+mode, 1)
	plan, err := schema.Parse("orders_"+mode+".yaml", []byte(text))
	if err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "denorm-skew-")
	if err != nil {
		b.Fatal(err)
	}
	owner.Cleanup(func() { os.RemoveAll(dir) })
	st, err := pebble.Open(context.Background(), filepath.Join(dir, "db"), pebble.Options{Durability: store.AsyncWAL})
	if err != nil {
		b.Fatal(err)
	}
	owner.Cleanup(func() { st.Close() })
	ctx := context.Background()
	if _, err := ddl.Create(ctx, st, plan); err != nil {
		b.Fatal(err)
	}
	events := filepath.Join(dir, "events.jsonl")
	ef, err := os.Create(events)
	if err != nil {
		b.Fatal(err)
	}
	err = gen.Orders(ef, gen.OrdersOptions{Events: skewEvents(), Seed: 18, SKUs: 1000, HotSKU: 0.3, Duplicate: 0.02, Reorder: 0.02})
	if cerr := ef.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	lg, err := source.OpenFile(events, source.FileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer lg.Close()
	dl, err := source.OpenDeadLetterFile(events + ".dead")
	if err != nil {
		b.Fatal(err)
	}
	defer dl.Close()
	start := time.Now()
	if _, err := write.Run(ctx, write.New(plan, st, write.Options{}), lg, dl, write.RunOptions{BatchSize: 1000}); err != nil {
		b.Fatal(err)
	}
	s := &skewStore{plan: plan, st: st, applySecs: time.Since(start).Seconds()}
	t := plan.Table("daily_units")
	sc, err := st.Scan(ctx, t.Name, store.Scan{})
	if err != nil {
		b.Fatal(err)
	}
	for sc.Next(ctx) {
		row := sc.Row()
		n := 0
		for _, c := range row.Cells {
			n += store.CellSize(row.Key, c.Family, c.Qualifier, c.Value)
		}
		s.rows++
		s.maxCells = max(s.maxCells, len(row.Cells))
		if len(row.Cells) > s.cells {
			s.busiest, s.cells, s.bytes = bytes.Clone(row.Key), len(row.Cells), n
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	sc.Close()
	key, _ := layout.CounterKey(t, s.busiest)
	parts, err := t.Key.Decode(key)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range parts {
		switch d.Part.Field {
		case "items.sku":
			s.sku, _ = d.Value.(string)
		case "placedAt":
			s.placedAt, _ = d.Value.(int64) // day(placedAt): that day's midnight
		}
	}
	if s.sku == "" {
		b.Fatalf("busiest row %s: no SKU in its key", store.Printable(s.busiest))
	}
	skewStores[mode] = s
	return s
}

// BenchmarkSkewedCounter applies a stream where one SKU takes 30% of the
// items, in each counter mode, and reads the busiest SKU-day with the
// daily_units query: ns/op is the read's latency; row-cells and row-bytes
// are the busiest counter row's. Mode exact's row grows with the events;
// mode bounded's stays at a state cell and one total.
//
//	DENORM_SKEW_EVENTS=1000000 go test ./read -run '^$' -bench SkewedCounter -benchtime 200x
func BenchmarkSkewedCounter(b *testing.B) {
	parent := b
	for _, mode := range []string{"exact", "bounded"} {
		b.Run(mode, func(b *testing.B) {
			s := skewFixture(b, parent, mode)
			// Both modes read the SKU-day whose exact-mode row is the
			// busiest: the best seller's.
			hot := skewFixture(b, parent, "exact")
			r := New(s.plan, s.st, Options{})
			req := Request{Query: "daily_units", Values: map[string]any{"items.sku": hot.sku, "placedAt": hot.placedAt}}
			ctx := context.Background()
			cells, size := rowSize(b, s, hot.busiest)
			res, err := r.Run(ctx, req)
			if err != nil || len(res.Rows) != 1 {
				b.Fatalf("daily_units: %v %v", res, err)
			}
			other := skewFixture(b, parent, map[string]string{"exact": "bounded", "bounded": "exact"}[mode])
			o, err := New(other.plan, other.st, Options{}).Run(ctx, req)
			if err != nil || len(o.Rows) != 1 || fmt.Sprint(o.Rows[0]["c:u"]) != fmt.Sprint(res.Rows[0]["c:u"]) {
				b.Fatalf("the modes disagree on %s: %v and %v (%v)", s.sku, res.Rows, o.Rows, err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Run(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cells), "row-cells")
			b.ReportMetric(float64(size), "row-bytes")
			b.ReportMetric(float64(s.maxCells), "max-row-cells")
			b.ReportMetric(s.applySecs, "apply-s")
			b.Logf("%d events, mode %s: the best seller's day %s (%s): %d cells, %d bytes, %v units; %d counter rows, at most %d cells each; applied in %.1fs",
				skewEvents(), mode, store.Printable(hot.busiest), hot.sku, cells, size, res.Rows[0]["c:u"], s.rows, s.maxCells, s.applySecs)
		})
	}
}

// rowSize is the cells and KeyValue bytes of one counter row.
func rowSize(b *testing.B, s *skewStore, key []byte) (cells, size int) {
	b.Helper()
	row, err := s.st.Get(context.Background(), "daily_units", store.Get{Row: key})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range row.Cells {
		size += store.CellSize(row.Key, c.Family, c.Qualifier, c.Value)
	}
	return len(row.Cells), size
}
