package hbase

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

func TestOpenChecksTheGateway(t *testing.T) {
	// Nothing listens here: Open must fail within the connect timeout.
	start := time.Now()
	_, err := Open(t.Context(), "127.0.0.1:1", Options{Timeout: 2 * time.Second})
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("Open took %v to fail", time.Since(start))
	}
}

func TestPerCallTimeout(t *testing.T) {
	f := newFakeGateway()
	s := openFake(t, f, Options{Timeout: 200 * time.Millisecond, PoolSize: 2})
	f.mu.Lock()
	f.getDelay = 2 * time.Second
	f.mu.Unlock()
	start := time.Now()
	_, err := s.Get(t.Context(), "t", store.Get{Row: []byte("r")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow Get: err = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("slow Get returned after %v, want about 200ms", d)
	}
	// The timed-out connection is dropped, not reused half-read.
	f.mu.Lock()
	f.getDelay = 0
	f.mu.Unlock()
	r, err := s.Get(t.Context(), "t", store.Get{Row: []byte("r")})
	if err != nil || len(r.Cells) != 1 {
		t.Fatalf("Get after a timeout: %v, %+v", err, r)
	}
}

func TestContextCancelInterruptsCall(t *testing.T) {
	f := newFakeGateway()
	f.getDelay = 3 * time.Second
	s := openFake(t, f, Options{Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := s.Get(ctx, "t", store.Get{Row: []byte("r")})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Get: err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancelled Get returned after %v", d)
	}
}

// The pool bounds calls in flight and the store is safe for concurrent use
// (run with -race).
func TestPoolBoundsConcurrency(t *testing.T) {
	f := newFakeGateway()
	f.getDelay = 5 * time.Millisecond
	s := openFake(t, f, Options{PoolSize: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.Get(t.Context(), "t", store.Get{Row: []byte(fmt.Sprint(i))})
			if err == nil && string(r.Key) != fmt.Sprint(i) {
				err = fmt.Errorf("row %d came back as %q", i, r.Key)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maxIn > 3 {
		t.Errorf("%d calls in flight with a pool of 3", f.maxIn)
	}
}

func TestErrorMapping(t *testing.T) {
	f := newFakeGateway()
	s := openFake(t, f, Options{})
	_, err := s.Get(t.Context(), "missing", store.Get{Row: []byte("r")})
	if !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("Get of a missing table: %v, want ErrTableNotFound", err)
	}
	_, err = s.Get(t.Context(), "t", store.Get{Row: []byte("r"), Columns: []store.Column{{Family: "nope"}}})
	if !errors.Is(err, store.ErrFamilyNotFound) {
		t.Errorf("Get of an unknown family: %v, want ErrFamilyNotFound", err)
	}
	err = s.Mutate(t.Context(), "t", store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{
		{Kind: store.Put, Family: "f", Qualifier: []byte("big"), Timestamp: 1, Value: make([]byte, store.DefaultMaxCellSize)},
	}})
	var ctb *store.CellTooBigError
	if !errors.As(err, &ctb) || ctb.Family != "f" || string(ctb.Qualifier) != "big" || ctb.Size != store.DefaultMaxCellSize+20+1+1+3 {
		t.Errorf("oversized cell: %v, want a CellTooBigError naming f:big", err)
	}
	if f.puts != 0 {
		t.Errorf("the oversized cell reached the server")
	}
}

func TestClientRowLimit(t *testing.T) {
	f := newFakeGateway()
	s := openFake(t, f, Options{MaxRowSize: 10})
	_, err := s.Get(t.Context(), "t", store.Get{Row: []byte("r")})
	var rtb *store.RowTooBigError
	if !errors.As(err, &rtb) || string(rtb.Row) != "r" || rtb.Limit != 10 {
		t.Errorf("Get over the row limit: %v, want a RowTooBigError", err)
	}
}

func TestBatchFallsBackToPerRow(t *testing.T) {
	f := newFakeGateway()
	s := openFake(t, f, Options{})
	put := func(row, family string) store.RowMutation {
		return store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{{Kind: store.Put, Family: family, Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}}
	}
	ms := []store.RowMutation{put("a", "f"), put("b", "nope"), put("c", "f"),
		// A repeated row starts a new segment, keeping per-row order.
		put("a", "f")}
	errs, err := s.Batch(t.Context(), "t", ms)
	if err != nil {
		t.Fatalf("Batch: %v", err)
	}
	for i, e := range errs {
		if (i == 1) != (e != nil) {
			t.Errorf("mutation %d: err = %v", i, e)
		}
	}
	if !errors.Is(errs[1], store.ErrFamilyNotFound) {
		t.Errorf("bad family row: %v", errs[1])
	}
	if f.multis != 2 {
		t.Errorf("%d putMultiple calls, want 2 (one per segment)", f.multis)
	}
	_, err = s.Batch(t.Context(), "missing", ms[:1])
	if !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("Batch on a missing table: %v, want ErrTableNotFound", err)
	}
}

func TestScannerClosesOnEveryPath(t *testing.T) {
	f := newFakeGateway()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		f.rows = append(f.rows, resultRow(k, "f:q"))
	}
	s := openFake(t, f, Options{})
	ctx := t.Context()
	// Exhausted.
	sc, err := s.Scan(ctx, "t", store.Scan{Caching: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := scanKeys(t, sc); len(got) != 5 {
		t.Errorf("full scan: %v", got)
	}
	if n := f.openScanners(); n != 0 {
		t.Errorf("%d scanners open after exhausting one", n)
	}
	_ = sc.Close()
	// Limit reached.
	sc, _ = s.Scan(ctx, "t", store.Scan{Limit: 2})
	if got := scanKeys(t, sc); len(got) != 2 {
		t.Errorf("limited scan: %v", got)
	}
	if n := f.openScanners(); n != 0 {
		t.Errorf("%d scanners open after reaching the limit", n)
	}
	// A limit that falls on a fetch boundary ends the scan without asking
	// the server again (HBase 2.5's gateway can fail such a call).
	f.mu.Lock()
	f.fetches, f.oneCalls = 0, 0
	opened := f.nextID
	f.mu.Unlock()
	sc, _ = s.Scan(ctx, "t", store.Scan{Limit: 2, Caching: 2})
	if got := scanKeys(t, sc); len(got) != 2 {
		t.Errorf("limited scan: %v", got)
	}
	if f.fetches+f.oneCalls != 1 || f.nextID != opened {
		t.Errorf("%d fetches and %d scanners opened for a limit of one fetch's size, want one fetch and none", f.fetches+f.oneCalls, f.nextID-opened)
	}
	// Abandoned early.
	sc, _ = s.Scan(ctx, "t", store.Scan{Caching: 1})
	sc.Next(ctx)
	if err := sc.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := sc.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if n := f.openScanners(); n != 0 {
		t.Errorf("%d scanners open after Close", n)
	}
	// Missing table.
	if _, err := s.Scan(ctx, "missing", store.Scan{}); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("scan of a missing table: %v", err)
	}
}

func TestScanLimitCountsRowsNotPieces(t *testing.T) {
	f := newFakeGateway()
	// Row a in two pieces, as Scan.Batch makes the server send it.
	f.rows = []*hbase2.TResult_{resultRow("a", "f:1", "f:2"), resultRow("a", "f:3"), resultRow("b", "f:1"), resultRow("c", "f:1")}
	s := openFake(t, f, Options{})
	sc, err := s.Scan(t.Context(), "t", store.Scan{Limit: 2, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for sc.Next(t.Context()) {
		keys = append(keys, string(sc.Row().Key))
	}
	if fmt.Sprint(keys) != "[a a b]" {
		t.Errorf("rows %v, want [a a b]", keys)
	}
	_ = sc.Close()
}

func TestClosedStore(t *testing.T) {
	f := newFakeGateway()
	s := openFake(t, f, Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(t.Context(), "t", store.Get{Row: []byte("r")}); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
	if _, err := s.Batch(t.Context(), "t", nil); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Batch after Close: %v", err)
	}
}

func TestIncrementOrderAndRepeats(t *testing.T) {
	f := newFakeGateway()
	s := openFake(t, f, Options{})
	got, err := s.Increment(t.Context(), "t", store.Increment{Row: []byte("r"), Columns: []store.IncrementColumn{
		{Family: "f", Qualifier: []byte("b"), Delta: -5},
		{Family: "f", Qualifier: []byte("a"), Delta: 2},
		{Family: "f", Qualifier: []byte("b"), Delta: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The fake returns each column's summed delta as its new value.
	if fmt.Sprint(got) != "[-4 2 -4]" {
		t.Errorf("Increment = %v, want [-4 2 -4]", got)
	}
}

func TestScannerLeaseLost(t *testing.T) {
	f := newFakeGateway()
	f.rows = []*hbase2.TResult_{resultRow("a", "f:q"), resultRow("b", "f:q"), resultRow("c", "f:q")}
	s := openFake(t, f, Options{})
	sc, err := s.Scan(t.Context(), "t", store.Scan{Caching: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The first row comes in one call with no scanner left on the
	// gateway; the second from the scanner opened after it.
	for _, want := range []string{"a", "b"} {
		if !sc.Next(t.Context()) || string(sc.Row().Key) != want {
			t.Fatalf("row %s: %v", want, sc.Err())
		}
	}
	f.mu.Lock()
	clear(f.scanners) // the gateway expired it
	f.mu.Unlock()
	if sc.Next(t.Context()) {
		t.Fatal("Next succeeded on an expired scanner")
	}
	if err := sc.Err(); err == nil || !strings.Contains(err.Error(), "lease") {
		t.Errorf("Err = %v, want one naming the lost lease", err)
	}
	if err := sc.Close(); err != nil {
		t.Errorf("Close after a lost lease: %v", err)
	}
}

// A forward scan reads its first fetch in one call and goes on from the
// row after that fetch's last with a scanner of the rows left of its
// limit; a scan of fewer rows than a fetch opens no scanner at all.
func TestScanFirstFetchInOneCall(t *testing.T) {
	f := newFakeGateway()
	for _, k := range []string{"a", "a\x00", "b", "c", "d"} {
		f.rows = append(f.rows, resultRow(k, "f:q"))
	}
	s := openFake(t, f, Options{})
	ctx := t.Context()
	scan := func(sc store.Scan) []string {
		t.Helper()
		it, err := s.Scan(ctx, "t", sc)
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		return scanKeys(t, it)
	}
	for _, c := range []struct {
		scan   store.Scan
		want   []string
		opened int32 // server-side scanners
	}{
		{store.Scan{Caching: 10}, []string{"a", "a\x00", "b", "c", "d"}, 0},
		{store.Scan{Caching: 1}, []string{"a", "a\x00", "b", "c", "d"}, 1},
		{store.Scan{Caching: 2, Limit: 3}, []string{"a", "a\x00", "b"}, 1},
		{store.Scan{Caching: 2, Limit: 2}, []string{"a", "a\x00"}, 0},
		{store.Scan{Start: []byte("b"), Caching: 2}, []string{"b", "c", "d"}, 1},
		{store.Scan{Start: []byte("b"), Caching: 3}, []string{"b", "c", "d"}, 1},
		{store.Scan{Start: []byte("b"), Caching: 4}, []string{"b", "c", "d"}, 0},
		{store.Scan{Start: []byte("e")}, nil, 0},
	} {
		f.mu.Lock()
		before := f.nextID
		f.mu.Unlock()
		if got := scan(c.scan); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("scan %+v: %q, want %q", c.scan, got, c.want)
		}
		f.mu.Lock()
		opened, open := f.nextID-before, len(f.scanners)
		f.mu.Unlock()
		if opened != c.opened || open != 0 {
			t.Errorf("scan %+v: %d scanners opened (want %d), %d left open", c.scan, opened, c.opened, open)
		}
	}
}

// scanKeys reads a scanner to its end and returns the keys of its rows.
func scanKeys(t *testing.T, sc store.Scanner) []string {
	t.Helper()
	var keys []string
	for sc.Next(t.Context()) {
		keys = append(keys, string(sc.Row().Key))
	}
	if err := sc.Err(); err != nil {
		t.Errorf("scan: %v", err)
	}
	return keys
}

// A client that resets its connection mid-request (as a timed-out call's
// dropped connection does) ends that connection in an error on the server.
// The fake must go on serving: it once handed that error to a nil logger,
// which crashed the package's test binary.
func TestFakeOutlivesAResetConnection(t *testing.T) {
	f := newFakeGateway()
	addr := serveFake(t, f)
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// Half a message header, then a reset rather than a clean close.
		if _, err := c.Write([]byte{0x80, 0x01}); err != nil {
			t.Fatal(err)
		}
		if err := c.(*net.TCPConn).SetLinger(0); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
	s, err := Open(t.Context(), addr, Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("Open after reset connections: %v", err)
	}
	defer s.Close()
	for range 3 {
		if _, err := s.Get(t.Context(), "t", store.Get{Row: []byte("r")}); err != nil {
			t.Fatalf("Get after reset connections: %v", err)
		}
	}
}
