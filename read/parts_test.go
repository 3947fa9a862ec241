package read

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/store"
)

// TestVerifyPartsAgree checks a page of thin hits, most of them stale, in
// one part and in several: the rows, their order, the drops and the
// repairs must not depend on how the page was split.
func TestVerifyPartsAgree(t *testing.T) {
	testVerifyPartsAgree(t, newFixture(t, partsStream))
}

// partsStream leaves a few hundred orders, enough for a page of stale hits
// to split into parts of minPartHits.
var partsStream = gen.OrdersOptions{Events: 1200, Seed: 11, Customers: 60}

// testVerifyPartsAgree runs on the embedded store and on real HBase, where
// each part is a getMultiple call of its own.
func testVerifyPartsAgree(t *testing.T, f *fixture) {
	ctx := context.Background()
	idx := f.plan.Table("orders_by_status")
	prim := f.plan.Table("orders")
	// A stale CANCELLED entry for every order that is not cancelled, and a
	// ghost (an entry whose order was never written) for every tenth.
	stale := 0
	for i, o := range f.where(func(o map[string]any) bool { return o["status"] != "CANCELLED" }) {
		vals := map[string]any{"orderId": o["orderId"], "status": "CANCELLED", "placedAt": o["placedAt"], "customerId": o["customerId"]}
		if i%10 == 0 {
			vals["orderId"] = "ghost-" + o["orderId"].(string)
		}
		putThinEntry(t, f.st, idx, prim, vals, 1)
		stale++
	}
	want := ids(f.where(func(m map[string]any) bool { return m["status"] == "CANCELLED" }))
	if stale < 4*minPartHits || len(want) == 0 {
		t.Fatalf("fixture too small to split: %d stale hits, %d cancelled orders", stale, len(want))
	}
	req := Request{Query: "orders_by_status", Values: map[string]any{"status": "CANCELLED"}, Limit: MaxLimit}
	run := func(parts int, repair bool) *Result {
		t.Helper()
		r := New(f.plan, f.st, Options{})
		r.parts = parts
		r.local = parts == 1 // the buckets opened at once with the parts
		q := req
		q.Repair = repair
		res, err := r.Run(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if res.Next != "" {
			t.Fatalf("parts %d: the page did not hold every hit", parts)
		}
		return res
	}
	one := run(1, false)
	if got := ids(one.Rows); !slices.Equal(got, want) || one.DroppedStale != stale {
		t.Fatalf("one part: %d rows (want %d), %d dropped (want %d)", len(got), len(want), one.DroppedStale, stale)
	}
	for _, parts := range []int{2, 3, 5} {
		res := run(parts, false)
		if !slices.Equal(ids(res.Rows), ids(one.Rows)) || res.DroppedStale != one.DroppedStale {
			t.Fatalf("%d parts: rows %v, dropped %d; one part: rows %v, dropped %d", parts, ids(res.Rows), res.DroppedStale, ids(one.Rows), one.DroppedStale)
		}
	}
	res := run(3, true)
	if res.Repaired != stale || !slices.Equal(ids(res.Rows), want) {
		t.Fatalf("repair in 3 parts: repaired %d of %d, rows %v", res.Repaired, stale, ids(res.Rows))
	}
	if res := run(3, false); res.DroppedStale != 0 || !slices.Equal(ids(res.Rows), want) {
		t.Fatalf("after the repair: %d dropped, rows %v", res.DroppedStale, ids(res.Rows))
	}
}

// TestOpenAtOnceAgrees pages through a salted index with its buckets
// opened in turn and at once: every page, its rows and its resume token
// must be the same.
func TestOpenAtOnceAgrees(t *testing.T) {
	testOpenAtOnceAgrees(t, newFixture(t, partsStream))
}

func testOpenAtOnceAgrees(t *testing.T, f *fixture) {
	ctx := context.Background()
	inTurn, atOnce := New(f.plan, f.st, Options{}), New(f.plan, f.st, Options{})
	inTurn.local, atOnce.local = true, false
	statuses := map[string]bool{}
	for _, o := range f.orders {
		statuses[o["status"].(string)] = true
	}
	for status := range statuses {
		want := ids(f.where(func(o map[string]any) bool { return o["status"] == status }))
		var got []string
		next := ""
		for page := 0; ; page++ {
			req := Request{Query: "orders_by_status", Values: map[string]any{"status": status}, Limit: 13, Next: next}
			a, err := inTurn.Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := atOnce.Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(a.Rows), ids(b.Rows)) || a.Next != b.Next {
				t.Fatalf("%s page %d: in turn %v (next %q), at once %v (next %q)", status, page, ids(a.Rows), a.Next, ids(b.Rows), b.Next)
			}
			got = append(got, ids(b.Rows)...)
			if next = b.Next; next == "" {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: paged through %d orders, want %d", status, len(got), len(want))
		}
	}
}

// benchVerifyParts alternates a thin read of a full page checked in one
// part and in GOMAXPROCS parts, timing each, and reports the ratio.
func benchVerifyParts(b *testing.B, f *fixture) {
	ctx := context.Background()
	counts := map[string]int{}
	for _, o := range f.orders {
		counts[o["status"].(string)]++
	}
	status := ""
	for s, n := range counts {
		if status == "" || n > counts[status] || (n == counts[status] && s < status) {
			status = s
		}
	}
	want := min(counts[status], DefaultLimit)
	if want < 2*minPartHits {
		b.Fatalf("status %s has %d orders: too few to split a page", status, want)
	}
	req := Request{Query: "orders_by_status", Values: map[string]any{"status": status}}
	one, many := New(f.plan, f.st, Options{}), New(f.plan, f.st, Options{})
	// Forced, so that the embedded store, which checks a page in one part
	// by default, shows what the parts would do there.
	one.parts, many.parts = 1, runtime.GOMAXPROCS(0)
	var tOne, tMany time.Duration
	n := 0
	for b.Loop() {
		// Each goes first every other time, so that neither always finds
		// the rows the other just read in the CPU's caches.
		order := []*Reader{one, many}
		if n%2 == 1 {
			order[0], order[1] = many, one
		}
		for _, r := range order {
			start := time.Now()
			res, err := r.Run(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Rows) != want {
				b.Fatalf("%d rows, want %d", len(res.Rows), want)
			}
			if r == one {
				tOne += time.Since(start)
			} else {
				tMany += time.Since(start)
			}
		}
		n++
	}
	b.ReportMetric(tOne.Seconds()*1e3/float64(n), "one-part-ms")
	b.ReportMetric(tMany.Seconds()*1e3/float64(n), "parts-ms")
	b.ReportMetric(tMany.Seconds()/tOne.Seconds(), "parts/one")
}

func BenchmarkVerifyParts(b *testing.B) {
	benchVerifyParts(b, benchFixture(b))
}

// scanFailing fails its n-th Scan call and counts the scanners still open.
type scanFailing struct {
	store.Store
	mu    sync.Mutex
	calls int
	fail  int
	open  int
}

var errScan = errors.New("scan refused")

func (s *scanFailing) Scan(ctx context.Context, table string, sc store.Scan) (store.Scanner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls++; s.calls == s.fail {
		return nil, errScan
	}
	in, err := s.Store.Scan(ctx, table, sc)
	if err != nil {
		return nil, err
	}
	s.open++
	return &countedScanner{Scanner: in, s: s}, nil
}

type countedScanner struct {
	store.Scanner
	s *scanFailing
}

func (c *countedScanner) Close() error {
	c.s.mu.Lock()
	c.s.open--
	c.s.mu.Unlock()
	return c.Scanner.Close()
}

// A bucket whose scan fails fails the read, whether the buckets are opened
// in turn or at once, and the buckets opened before or beside it are
// closed.
func TestOpenFailureClosesTheRest(t *testing.T) {
	f := newFixture(t, partsStream)
	for _, local := range []bool{true, false} {
		st := &scanFailing{Store: f.st, fail: 3}
		r := New(f.plan, st, Options{})
		r.local = local
		_, err := r.Run(context.Background(), Request{Query: "orders_by_status", Values: map[string]any{"status": "PAID"}})
		if !errors.Is(err, errScan) {
			t.Fatalf("local %v: got %v, want the scan's error", local, err)
		}
		if st.open != 0 {
			t.Fatalf("local %v: %d scanners left open", local, st.open)
		}
		if st.calls < 3 {
			t.Fatalf("local %v: %d scans made", local, st.calls)
		}
	}
}
