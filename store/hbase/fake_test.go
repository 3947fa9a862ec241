package hbase

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/denorm/denorm/internal/thrift/hbase2"
)

// fakeGateway answers a few THBaseService calls the way HBase's gateway
// does, to test the client side (pool, timeouts, error mapping, scanner
// life) without HBase. It is no substitute for the conformance suite
// against a real server. Methods it does not override are nil and would
// fail the call; the tests do not reach them.
type fakeGateway struct {
	hbase2.THBaseService

	mu       sync.Mutex
	tables   map[string]bool
	rows     []*hbase2.TResult_ // what every scanner yields
	scanners map[int32]int      // open scanner id -> rows handed out
	nextID   int32
	closed   []int32
	puts     int   // rows accepted by put, putMultiple and mutateRow
	multis   int   // putMultiple calls
	fetches  int   // getScannerRows calls
	oneCalls int   // getScannerResults calls
	multiGet []int // the size of every getMultiple call
	short    bool  // getMultiple answers one result too few
	getDelay time.Duration
	inFlight int
	maxIn    int
}

func newFakeGateway() *fakeGateway {
	return &fakeGateway{tables: map[string]bool{"t": true}, scanners: map[int32]int{}}
}

func ioErr(msg string) *hbase2.TIOError { return &hbase2.TIOError{Message: &msg} }

func (f *fakeGateway) TableExists(_ context.Context, n *hbase2.TTableName) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tables[string(n.Qualifier)] || string(n.Ns) == "hbase", nil
}

func (f *fakeGateway) Get(ctx context.Context, table []byte, g *hbase2.TGet) (*hbase2.TResult_, error) {
	f.mu.Lock()
	f.inFlight++
	f.maxIn = max(f.maxIn, f.inFlight)
	d, ok := f.getDelay, f.tables[string(table)]
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	time.Sleep(d)
	if !ok {
		// HBase's TableNotFoundException carries only the name.
		return nil, ioErr(string(table))
	}
	for _, c := range g.Columns {
		if string(c.Family) == "nope" {
			return nil, ioErr("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family nope does not exist in region t,,1.abc. in table 't'")
		}
	}
	ts := int64(7)
	return &hbase2.TResult_{Row: g.Row, ColumnValues: []*hbase2.TColumnValue{
		{Family: []byte("f"), Qualifier: []byte("q"), Value: []byte("v"), Timestamp: &ts},
	}}, nil
}

// GetMultiple answers as Get does for each row, with an empty result for
// rows whose key starts with "missing".
func (f *fakeGateway) GetMultiple(ctx context.Context, table []byte, gs []*hbase2.TGet) ([]*hbase2.TResult_, error) {
	f.mu.Lock()
	f.multiGet = append(f.multiGet, len(gs))
	short := f.short
	f.mu.Unlock()
	out := make([]*hbase2.TResult_, 0, len(gs))
	for _, g := range gs {
		if strings.HasPrefix(string(g.Row), "missing") {
			out = append(out, &hbase2.TResult_{})
			continue
		}
		r, err := f.Get(ctx, table, g)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if short && len(out) > 0 {
		out = out[:len(out)-1]
	}
	return out, nil
}

func (f *fakeGateway) checkPut(table []byte, p *hbase2.TPut) error {
	if !f.tables[string(table)] {
		return ioErr(string(table))
	}
	for _, cv := range p.ColumnValues {
		if string(cv.Family) == "nope" {
			return ioErr("Failed 1 action: org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family nope does not exist in region")
		}
	}
	return nil
}

func (f *fakeGateway) Put(_ context.Context, table []byte, p *hbase2.TPut) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkPut(table, p); err != nil {
		return err
	}
	f.puts++
	return nil
}

func (f *fakeGateway) PutMultiple(_ context.Context, table []byte, ps []*hbase2.TPut) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.multis++
	var failed error
	for _, p := range ps {
		// Like HBase, the good rows land even when others fail.
		if err := f.checkPut(table, p); err != nil {
			failed = err
			continue
		}
		f.puts++
	}
	return failed
}

func (f *fakeGateway) MutateRow(_ context.Context, table []byte, rm *hbase2.TRowMutations) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range rm.Mutations {
		if m.Put != nil {
			if err := f.checkPut(table, m.Put); err != nil {
				return err
			}
		}
	}
	f.puts++
	return nil
}

func (f *fakeGateway) OpenScanner(_ context.Context, table []byte, ts *hbase2.TScan) (int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.tables[string(table)] {
		return 0, ioErr(string(table))
	}
	f.nextID++
	f.scanners[f.nextID] = f.startAt(ts)
	return f.nextID, nil
}

// startAt is the index of the first of f.rows a scan from ts's start row
// yields (f.rows are in key order).
func (f *fakeGateway) startAt(ts *hbase2.TScan) int {
	for i, r := range f.rows {
		if bytes.Compare(r.Row, ts.StartRow) >= 0 {
			return i
		}
	}
	return len(f.rows)
}

// GetScannerResults is a scanner opened, read once and closed, in one call.
func (f *fakeGateway) GetScannerResults(_ context.Context, table []byte, ts *hbase2.TScan, n int32) ([]*hbase2.TResult_, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.oneCalls++
	if !f.tables[string(table)] {
		return nil, ioErr(string(table))
	}
	at := f.startAt(ts)
	return f.rows[at:min(at+int(n), len(f.rows))], nil
}

func (f *fakeGateway) GetScannerRows(_ context.Context, id int32, n int32) ([]*hbase2.TResult_, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches++
	at, ok := f.scanners[id]
	if !ok {
		msg := "Invalid scanner Id"
		return nil, &hbase2.TIllegalArgument{Message: &msg}
	}
	end := min(at+int(n), len(f.rows))
	f.scanners[id] = end
	return f.rows[at:end], nil
}

func (f *fakeGateway) CloseScanner(_ context.Context, id int32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.scanners[id]; !ok {
		msg := "Invalid scanner Id"
		return &hbase2.TIllegalArgument{Message: &msg}
	}
	delete(f.scanners, id)
	f.closed = append(f.closed, id)
	return nil
}

func (f *fakeGateway) openScanners() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.scanners)
}

// serveFake starts the fake on a loopback port, buffered transport and
// binary protocol as HBase's default, and stops it when the test ends.
func serveFake(t *testing.T, f *fakeGateway) string {
	t.Helper()
	sock, err := thrift.NewTServerSocket("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := thrift.NewTSimpleServer4(hbase2.NewTHBaseServiceProcessor(f), sock,
		thrift.NewTBufferedTransportFactory(8192), thrift.NewTBinaryProtocolFactoryConf(nil))
	// Only Serve gives the server its fallback logger; Listen and AcceptLoop
	// leave it nil, and the server calls it when a connection ends in an
	// error (a client that closes mid-request, as the deadline tests do),
	// which would crash the whole test binary.
	srv.SetLogger(thrift.NopLogger)
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.AcceptLoop() }()
	t.Cleanup(func() { _ = srv.Stop() })
	return sock.Addr().String()
}

func openFake(t *testing.T, f *fakeGateway, opts Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), serveFake(t, f), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func resultRow(key string, cells ...string) *hbase2.TResult_ {
	r := &hbase2.TResult_{Row: []byte(key)}
	for _, c := range cells {
		fam, q, _ := strings.Cut(c, ":")
		ts := int64(1)
		r.ColumnValues = append(r.ColumnValues, &hbase2.TColumnValue{Family: []byte(fam), Qualifier: []byte(q), Value: []byte("v"), Timestamp: &ts})
	}
	return r
}

func (f *fakeGateway) Increment(_ context.Context, table []byte, inc *hbase2.TIncrement) (*hbase2.TResult_, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.tables[string(table)] {
		return nil, ioErr(string(table))
	}
	r := &hbase2.TResult_{Row: inc.Row}
	for _, c := range inc.Columns {
		v := make([]byte, 8)
		for i := 0; i < 8; i++ {
			v[i] = byte(uint64(c.Amount) >> (56 - 8*i))
		}
		r.ColumnValues = append(r.ColumnValues, &hbase2.TColumnValue{Family: c.Family, Qualifier: c.Qualifier, Value: v})
	}
	return r, nil
}
