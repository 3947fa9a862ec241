package read

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// benchEvents gives a little over 100,000 orders: about half the generated
// events create an order, the rest move one along.
const benchEvents = 210000

// The orders example plus a covering status index, so that the thin and the
// covering way of answering "orders by status" can be compared on one store.
const coveringTable = `
  orders_by_status_covering:
    role: index
    entity: order
    rowkey: [salt(orderId, 8), status, reverse(placedAt), orderId]
    covering: [customerId, totalCents]
    families:
      d: {encoding: FAST_DIFF}
    columns:
      d:c: customerId
      d:t: totalCents
    presplit: 8
`

const coveringQuery = `
  orders_by_status_covering:
    table: orders_by_status_covering
    by: [status]
    limit: 100
`

func benchPlan(b *testing.B) *schema.Plan {
	b.Helper()
	src, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Replace(string(src), "\nqueries:\n", coveringTable+"\nqueries:\n"+coveringQuery, 1)
	p, err := schema.Parse("orders_bench.yaml", []byte(text))
	if err != nil {
		b.Fatal(err)
	}
	if p.Table("orders_by_status_covering") == nil || p.Query("orders_by_status_covering") == nil {
		b.Fatal("the covering index did not make it into the plan")
	}
	return p
}

var benchShared struct {
	f   *fixture
	dir string
}

func benchFixture(b *testing.B) *fixture {
	if benchShared.f != nil {
		return benchShared.f
	}
	dir, err := os.MkdirTemp("", "readbench")
	if err != nil {
		b.Fatal(err)
	}
	st, err := pebble.Open(context.Background(), filepath.Join(dir, "db"), pebble.Options{Durability: store.AsyncWAL})
	if err != nil {
		b.Fatal(err)
	}
	benchShared.dir = dir
	benchShared.f = applyStream(b, st, dir, benchPlan(b), gen.OrdersOptions{Events: benchEvents, Seed: 1})
	b.Logf("%d live orders", len(benchShared.f.orders))
	return benchShared.f
}

// benchCustomers are the customers with the most orders.
func benchCustomers(f *fixture, n int) []string {
	counts := map[string]int{}
	for _, o := range f.orders {
		counts[o["customerId"].(string)]++
	}
	var cs []string
	for c := range counts {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		return counts[cs[i]] > counts[cs[j]] || (counts[cs[i]] == counts[cs[j]] && cs[i] < cs[j])
	})
	return cs[:min(n, len(cs))]
}

const benchStatus = "PAID"

func runQuery(b *testing.B, r *Reader, req Request, want int) {
	b.Helper()
	res, err := r.Run(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Rows) != want {
		b.Fatalf("%s: %d rows, want %d", req.Query, len(res.Rows), want)
	}
}

func BenchmarkRecentOrders(b *testing.B) {
	f := benchFixture(b)
	r := New(f.plan, f.st, Options{})
	cs := benchCustomers(f, 64)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res, err := r.Run(context.Background(), Request{Query: "recent_orders", Values: map[string]any{"customerId": cs[i%len(cs)]}})
		if err != nil || len(res.Rows) == 0 {
			b.Fatal(err, len(res.Rows))
		}
	}
}

func BenchmarkStatusCovering(b *testing.B) {
	f := benchFixture(b)
	r := New(f.plan, f.st, Options{})
	for b.Loop() {
		runQuery(b, r, Request{Query: "orders_by_status_covering", Values: map[string]any{"status": benchStatus}}, 100)
	}
}

func BenchmarkStatusThinVerified(b *testing.B) {
	f := benchFixture(b)
	r := New(f.plan, f.st, Options{})
	for b.Loop() {
		runQuery(b, r, Request{Query: "orders_by_status", Values: map[string]any{"status": benchStatus}}, 100)
	}
}

// BenchmarkStatusThinPaired alternates the covering and the thin verified
// read of the 100 newest PAID orders inside every iteration, timing each,
// and reports thin time over covering time: a ratio that holds up on a
// machine whose load changes between one benchmark and the next.
func BenchmarkStatusThinPaired(b *testing.B) {
	f := benchFixture(b)
	r := New(f.plan, f.st, Options{})
	covering := Request{Query: "orders_by_status_covering", Values: map[string]any{"status": benchStatus}}
	thin := Request{Query: "orders_by_status", Values: map[string]any{"status": benchStatus}}
	var tCovering, tThin time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		runQuery(b, r, covering, 100)
		tCovering += time.Since(start)
		start = time.Now()
		runQuery(b, r, thin, 100)
		tThin += time.Since(start)
		n++
	}
	b.ReportMetric(tCovering.Seconds()*1e3/float64(n), "covering-ms")
	b.ReportMetric(tThin.Seconds()*1e3/float64(n), "thin-ms")
	b.ReportMetric(tThin.Seconds()/tCovering.Seconds(), "thin/covering")
}

// BenchmarkStatusFullScan answers the same question as the status indexes
// the anti-pattern way: read every order, keep the status, sort, take 100.
func BenchmarkStatusFullScan(b *testing.B) {
	f := benchFixture(b)
	ctx := context.Background()
	ent := f.plan.Entity("order")
	prim := f.plan.Primary("order")
	for b.Loop() {
		sc, err := f.st.Scan(ctx, prim.Name, store.Scan{Caching: 1000})
		if err != nil {
			b.Fatal(err)
		}
		var hits []map[string]any
		for sc.Next(ctx) {
			st, err := layout.ReadState(f.plan, ent, prim, sc.Row())
			if err != nil {
				b.Fatal(err)
			}
			if st.Exists() && st.Values["status"] == benchStatus {
				hits = append(hits, st.Values)
			}
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		sc.Close()
		newestFirst(hits)
		if len(hits) < 100 {
			b.Fatalf("%d hits", len(hits))
		}
	}
}
