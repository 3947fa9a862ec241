package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
)

func TestPlanMutationKinds(t *testing.T) {
	m := store.RowMutation{Row: []byte("r"), Durability: store.AsyncWAL, Mutations: []store.Mutation{
		{Kind: store.Put, Family: "f", Qualifier: []byte("a"), Timestamp: 10, Value: []byte("x")},
		{Kind: store.Put, Family: "f", Qualifier: nil, Timestamp: store.LatestTimestamp, Value: nil},
		{Kind: store.DeleteVersion, Family: "f", Qualifier: []byte("b"), Timestamp: 11},
		{Kind: store.DeleteColumn, Family: "f", Qualifier: []byte("c"), Timestamp: 12},
		{Kind: store.DeleteColumn, Family: "g", Qualifier: []byte(""), Timestamp: 13},
		{Kind: store.DeleteFamily, Family: "g", Qualifier: []byte("ignored"), Timestamp: 14},
		{Kind: store.DeleteRow, Timestamp: 15},
		{Kind: store.DeleteRow, Timestamp: 9}, // covered by the one at 15
	}}
	p, err := planMutation(m, store.SyncWAL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.single() {
		t.Error("a mixed mutation claims to fit one call")
	}
	if p.put == nil || len(p.put.ColumnValues) != 2 || p.put.GetDurability() != hbase2.TDurability_ASYNC_WAL {
		t.Fatalf("put = %+v", p.put)
	}
	if cv := p.put.ColumnValues[0]; cv.GetTimestamp() != 10 || string(cv.Value) != "x" {
		t.Errorf("first cell = %+v", cv)
	}
	if cv := p.put.ColumnValues[1]; cv.IsSetTimestamp() || cv.Qualifier == nil || cv.Value == nil {
		t.Errorf("a LatestTimestamp cell with empty qualifier and value = %+v; want no timestamp, non-nil empties", cv)
	}
	type want struct {
		typ    hbase2.TDeleteType
		cols   []string // family:qualifier@ts, qualifier "-" when unset
		rowTS  int64
		rowDel bool
	}
	wants := []want{
		{typ: hbase2.TDeleteType_DELETE_COLUMN, cols: []string{"f:b@11"}},
		{typ: hbase2.TDeleteType_DELETE_COLUMNS, cols: []string{"f:c@12", "g:@13"}},
		{typ: hbase2.TDeleteType_DELETE_FAMILY, cols: []string{"g:-@14"}},
		{rowDel: true, rowTS: 15},
	}
	if len(p.deletes) != len(wants) {
		t.Fatalf("%d deletes, want %d: %+v", len(p.deletes), len(wants), p.deletes)
	}
	for i, w := range wants {
		d := p.deletes[i]
		if d.GetDurability() != hbase2.TDurability_ASYNC_WAL {
			t.Errorf("delete %d durability %v", i, d.GetDurability())
		}
		if w.rowDel {
			if len(d.Columns) != 0 || d.GetTimestamp() != w.rowTS {
				t.Errorf("row delete = %+v, want no columns at %d", d, w.rowTS)
			}
			continue
		}
		if d.DeleteType != w.typ {
			t.Errorf("delete %d type %v, want %v", i, d.DeleteType, w.typ)
		}
		var got []string
		for _, c := range d.Columns {
			q := "-"
			if c.IsSetQualifier() {
				q = string(c.Qualifier)
			}
			got = append(got, string(c.Family)+":"+q+"@"+itoa(c.GetTimestamp()))
		}
		if strings.Join(got, ",") != strings.Join(w.cols, ",") {
			t.Errorf("delete %d columns %v, want %v", i, got, w.cols)
		}
	}
	rm := p.rowMutations(m.Row)
	if len(rm.Mutations) != 5 || rm.Mutations[0].Put == nil || rm.Mutations[1].DeleteSingle == nil {
		t.Errorf("row mutations = %+v", rm)
	}
}

func itoa(n int64) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestPlanSingleCall(t *testing.T) {
	put := store.Mutation{Kind: store.Put, Family: "f", Qualifier: []byte("q"), Timestamp: 1}
	del := store.Mutation{Kind: store.DeleteColumn, Family: "f", Qualifier: []byte("q"), Timestamp: 1}
	fam := store.Mutation{Kind: store.DeleteFamily, Family: "f", Timestamp: 1}
	for _, tc := range []struct {
		ms     []store.Mutation
		single bool
	}{
		{[]store.Mutation{put, put}, true},
		{[]store.Mutation{del, del}, true},
		{[]store.Mutation{del, fam}, false},
		{[]store.Mutation{put, del}, false},
	} {
		p, err := planMutation(store.RowMutation{Row: []byte("r"), Mutations: tc.ms}, store.DurabilityDefault, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.single() != tc.single {
			t.Errorf("%v: single = %v", tc.ms, p.single())
		}
	}
}

// A row's puts that share a timestamp send it once, on the TPut; puts at
// several timestamps (or the server's) keep one a cell. The gateway stamps
// a cell without one with its put's (conformance checks what is read back).
func TestPlanPutTimestamp(t *testing.T) {
	put := func(q string, ts int64) store.Mutation {
		return store.Mutation{Kind: store.Put, Family: "f", Qualifier: []byte(q), Timestamp: ts, Value: []byte("v")}
	}
	del := store.Mutation{Kind: store.DeleteColumn, Family: "f", Qualifier: []byte("z"), Timestamp: 3}
	for _, tc := range []struct {
		name  string
		ms    []store.Mutation
		putTS int64 // 0: none on the TPut, a timestamp on each cell that has one
	}{
		{"one timestamp", []store.Mutation{put("a", 7), put("b", 7), put("c", 7)}, 7},
		{"one timestamp and a delete at another", []store.Mutation{put("a", 7), del, put("b", 7)}, 7},
		{"two timestamps", []store.Mutation{put("a", 7), put("b", 8)}, 0},
		{"the server's", []store.Mutation{put("a", store.LatestTimestamp), put("b", store.LatestTimestamp)}, 0},
		{"one and the server's", []store.Mutation{put("a", 7), put("b", store.LatestTimestamp)}, 0},
	} {
		p, err := planMutation(store.RowMutation{Row: []byte("r"), Mutations: tc.ms}, store.DurabilityDefault, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.put.GetTimestamp(); got != tc.putTS || p.put.IsSetTimestamp() != (tc.putTS != 0) {
			t.Errorf("%s: TPut timestamp %d (set %v), want %d", tc.name, got, p.put.IsSetTimestamp(), tc.putTS)
		}
		k := 0
		for _, m := range tc.ms {
			if m.Kind != store.Put {
				continue
			}
			cv := p.put.ColumnValues[k]
			k++
			wantSet := tc.putTS == 0 && m.Timestamp != store.LatestTimestamp
			if cv.IsSetTimestamp() != wantSet || (wantSet && cv.GetTimestamp() != m.Timestamp) {
				t.Errorf("%s: cell %s timestamp %d (set %v), want %d (set %v)", tc.name, cv.Qualifier, cv.GetTimestamp(), cv.IsSetTimestamp(), m.Timestamp, wantSet)
			}
		}
	}
}

func TestPlanRejects(t *testing.T) {
	for _, m := range []store.Mutation{
		{Kind: store.Put, Qualifier: []byte("q")},
		{Kind: store.DeleteColumn, Qualifier: []byte("q")},
		{Kind: store.Kind(42), Family: "f"},
	} {
		if _, err := planMutation(store.RowMutation{Row: []byte("r"), Mutations: []store.Mutation{m}}, 0, nil); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
}

func TestDurabilityMapping(t *testing.T) {
	for _, tc := range []struct {
		d, fallback store.Durability
		want        *hbase2.TDurability
	}{
		{store.DurabilityDefault, store.DurabilityDefault, nil},
		{store.DurabilityDefault, store.SkipWAL, hbase2.TDurabilityPtr(hbase2.TDurability_SKIP_WAL)},
		{store.SyncWAL, store.SkipWAL, hbase2.TDurabilityPtr(hbase2.TDurability_SYNC_WAL)},
		{store.AsyncWAL, 0, hbase2.TDurabilityPtr(hbase2.TDurability_ASYNC_WAL)},
	} {
		got := durability(tc.d, tc.fallback)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("durability(%v, %v) = %v, want %v", tc.d, tc.fallback, got, tc.want)
		}
	}
}

func TestScanMapping(t *testing.T) {
	ts := tscan(store.Scan{})
	if ts.MaxVersions != 1 || ts.StartRow != nil || ts.StopRow != nil || ts.Reversed != nil || ts.TimeRange != nil || ts.IsSetLimit() {
		t.Errorf("empty scan = %+v", ts)
	}
	ts = tscan(store.Scan{Start: []byte("z"), Stop: []byte("a"), Reverse: true, Limit: 5, MaxVersions: 3,
		Columns: []store.Column{{Family: "f"}, {Family: "g", Qualifier: []byte{}}}, TimeRange: store.TimeRange{Min: 5}, Caching: 50})
	if string(ts.StartRow) != "z" || string(ts.StopRow) != "a" || !ts.GetReversed() || ts.GetLimit() != 5 || ts.MaxVersions != 3 {
		t.Errorf("scan = %+v", ts)
	}
	if ts.GetCaching() != 5 {
		t.Errorf("caching %d, want the limit 5", ts.GetCaching())
	}
	if ts.Columns[0].IsSetQualifier() || !ts.Columns[1].IsSetQualifier() {
		t.Errorf("columns = %+v: a family must have no qualifier, an empty qualifier must be set", ts.Columns)
	}
	if ts.TimeRange.MinStamp != 5 || ts.TimeRange.MaxStamp != math.MaxInt64 {
		t.Errorf("time range = %+v", ts.TimeRange)
	}
	// With a batch, the limit is the client's job.
	ts = tscan(store.Scan{Limit: 5, Batch: 2})
	if ts.IsSetLimit() || ts.GetBatchSize() != 2 || ts.GetCaching() != defaultCaching {
		t.Errorf("batched scan = %+v", ts)
	}
	g := tget(store.Get{Row: []byte("r"), MaxVersions: 2, TimeRange: store.TimeRange{Min: 1, Max: 9}})
	if g.GetMaxVersions() != 2 || g.TimeRange.MinStamp != 1 || g.TimeRange.MaxStamp != 9 {
		t.Errorf("get = %+v", g)
	}
	if g := tget(store.Get{Row: []byte("r")}); g.IsSetMaxVersions() || g.IsSetTimeRange() {
		t.Errorf("plain get = %+v", g)
	}
}

func TestFamilyRoundTrip(t *testing.T) {
	in := store.FamilySpec{Name: "d", MaxVersions: 3, TTL: time.Hour, Compression: "gz", DataBlockEncoding: "FAST_DIFF",
		BlockSize: 32 << 10, BloomFilter: "ROWCOL", InMemory: true}
	d, err := familyDescriptor(in)
	if err != nil {
		t.Fatal(err)
	}
	if d.GetTimeToLive() != 3600 || d.GetMaxVersions() != 3 || d.GetCompressionType() != hbase2.TCompressionAlgorithm_GZ {
		t.Errorf("descriptor = %+v", d)
	}
	out := familySpec(d)
	in.Compression = "GZ"
	if out != in {
		t.Errorf("round trip %+v, want %+v", out, in)
	}
	// HBase reports FOREVER for no TTL.
	forever := int32(hbaseForever)
	if f := familySpec(&hbase2.TColumnFamilyDescriptor{Name: []byte("f"), TimeToLive: &forever}); f.TTL != 0 {
		t.Errorf("FOREVER became TTL %v", f.TTL)
	}
	for _, bad := range []store.FamilySpec{
		{Name: ""},
		{Name: "f", TTL: 1500 * time.Millisecond},
		{Name: "f", TTL: -time.Second},
		{Name: "f", Compression: "brotli"},
		{Name: "f", DataBlockEncoding: "PREFIX_TREE"},
		{Name: "f", BloomFilter: "ROWPREFIX_FIXED_LENGTH"},
		{Name: "f", BlockSize: -1},
	} {
		if _, err := familyDescriptor(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := familyDescriptor(store.FamilySpec{Name: "f", TTL: time.Millisecond}); !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("sub-second TTL: %v, want ErrUnsupported", err)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want error
	}{
		{"org.apache.hadoop.hbase.TableNotFoundException: t", store.ErrTableNotFound},
		{"org.apache.hadoop.hbase.TableExistsException: t", store.ErrTableExists},
		{"Failed 1 action: org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: Column family nope does not exist in region t,,1.x. in table 't', {NAME => 'f'}: 1 time, servers with issues: localhost,16020,1", store.ErrFamilyNotFound},
		{"org.apache.hadoop.hbase.regionserver.RowTooBigException: Max row size allowed: 1048576, but the row is bigger than that, the row info: ...", store.ErrRowTooBig},
		{"KeyValue size too large", store.ErrCellTooBig},
		{"Cell with size 10485800 exceeds limit of 10485760 bytes", store.ErrCellTooBig},
		{"t", nil},
		{"java.io.IOException: something else", nil},
	} {
		got := classify("t", []byte("r"), tc.msg)
		if tc.want == nil {
			if got != nil {
				t.Errorf("classify(%q) = %v, want nil", tc.msg, got)
			}
			continue
		}
		if !errors.Is(got, tc.want) {
			t.Errorf("classify(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
	var rtb *store.RowTooBigError
	if err := classify("t", []byte("r"), "RowTooBigException: Max row size allowed: 1048576, but"); !errors.As(err, &rtb) || rtb.Limit != 1048576 {
		t.Errorf("row too big limit not parsed: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	good := []struct {
		url  string
		addr string
		opts Options
	}{
		{"hbase://127.0.0.1:9090", "127.0.0.1:9090", Options{}},
		{"hbase://localhost", "localhost:9090", Options{}},
		{"hbase://h:1?timeout=2s&connect_timeout=500ms&pool=8&transport=framed&protocol=compact&namespace=ns&max_cell_size=100&max_row_size=200&durability=async_wal",
			"h:1", Options{Timeout: 2 * time.Second, ConnectTimeout: 500 * time.Millisecond, PoolSize: 8, Framed: true, Compact: true,
				Namespace: "ns", MaxCellSize: 100, MaxRowSize: 200, Durability: store.AsyncWAL}},
	}
	for _, tc := range good {
		u, _ := url.Parse(tc.url)
		addr, opts, err := parseURL(u)
		if err != nil || addr != tc.addr || opts != tc.opts {
			t.Errorf("parseURL(%s) = %q, %+v, %v; want %q, %+v", tc.url, addr, opts, err, tc.addr, tc.opts)
		}
	}
	for _, bad := range []string{
		"hbase://", "hbase://h/x", "hbase://h?timeout=soon", "hbase://h?timeout=-1s", "hbase://h?pool=0",
		"hbase://h?transport=http", "hbase://h?protocol=json", "hbase://h?durability=fsync", "hbase://h?colour=red",
		"hbase://h?namespace=",
	} {
		u, err := url.Parse(bad)
		if err != nil {
			continue
		}
		if _, _, err := parseURL(u); err == nil {
			t.Errorf("parseURL(%s) accepted", bad)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"hbase://127.0.0.1:9090?timeout=2s", "hbase://h?pool=3&transport=framed", "hbase://[::1]:9090/", "hbase://h?max_row_size=9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		addr, opts, err := parseURL(u)
		if err != nil {
			return
		}
		if addr == "" {
			t.Errorf("%q parsed to an empty address", raw)
		}
		if opts.Timeout < 0 || opts.PoolSize < 0 || opts.MaxCellSize < 0 || opts.MaxRowSize < 0 {
			t.Errorf("%q parsed to negative options %+v", raw, opts)
		}
	})
}

func TestParseMetaRow(t *testing.T) {
	for _, tc := range []struct {
		key, table, start, enc string
		ok                     bool
	}{
		{"t,,1700000000000.0123456789abcdef0123456789abcdef.", "t", "", "0123456789abcdef0123456789abcdef", true},
		{"t,a,b.c,1700000000000.0123456789abcdef0123456789abcdef.", "t", "a,b.c", "0123456789abcdef0123456789abcdef", true},
		{"ns:t,\xff,1.ffffffffffffffffffffffffffffffff.", "ns:t", "\\xFF", "ffffffffffffffffffffffffffffffff", true},
		{"t2,,1.0123456789abcdef0123456789abcdef.", "t", "", "", false},
		{"t,,1700000000000", "t", "", "", false},
		{"t,,1.short.", "t", "", "", false},
		{"t,.0123456789abcdef0123456789abcdef.", "t", "", "", false},
	} {
		start, enc, ok := parseMetaRow([]byte(tc.key), tc.table)
		if ok != tc.ok || (ok && (store.Printable(start) != tc.start || enc != tc.enc)) {
			t.Errorf("parseMetaRow(%q) = %q, %q, %v; want %q, %q, %v", tc.key, start, enc, ok, tc.start, tc.enc, tc.ok)
		}
	}
}

func FuzzParseMetaRow(f *testing.F) {
	f.Add([]byte("t,a,1700000000000.0123456789abcdef0123456789abcdef."), "t")
	f.Fuzz(func(t *testing.T, key []byte, table string) {
		start, enc, ok := parseMetaRow(key, table)
		if !ok {
			return
		}
		if len(enc) != 32 || !bytes.HasPrefix(key, append([]byte(table+","), start...)) {
			t.Errorf("parseMetaRow(%q, %q) = %q, %q", key, table, start, enc)
		}
	})
}

// A cell with an unset qualifier and value comes back with empty, not nil,
// ones and its row's key; a result without cells is an empty row.
func TestRowConversion(t *testing.T) {
	ts := int64(5)
	ans := &hbase2.THBaseServiceGetScannerRowsResult{Success: []*hbase2.TResult_{
		{Row: []byte("k"), ColumnValues: []*hbase2.TColumnValue{{Family: []byte("f"), Qualifier: nil, Value: nil, Timestamp: &ts}}},
		{ColumnValues: []*hbase2.TColumnValue{}},
	}}
	mem := thrift.NewTMemoryBuffer()
	prot := thrift.NewTBinaryProtocolConf(mem, nil)
	if err := ans.Write(context.Background(), prot); err != nil {
		t.Fatal(err)
	}
	var res results
	if err := res.Read(context.Background(), prot); err != nil || len(res.rows) != 2 {
		t.Fatalf("%d rows, %v", len(res.rows), err)
	}
	r := res.rows[0]
	if len(r.Cells) != 1 || r.Cells[0].Qualifier == nil || r.Cells[0].Value == nil || !bytes.Equal(r.Cells[0].Row, []byte("k")) || r.Cells[0].Timestamp != 5 {
		t.Errorf("row = %+v", r)
	}
	if got := res.rows[1]; !got.Empty() {
		t.Errorf("empty result = %+v", got)
	}
	if n := rowSize(r); n != 20+1+1 {
		t.Errorf("rowSize = %d", n)
	}
}

// Mutations planned from one shared slab, as Batch plans a call's, are
// planned as each would be alone, and stay so as the slab fills: no plan
// shares a struct, a timestamp or a list another plan writes into.
func TestPlanMutationsShareASlab(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	kinds := []store.Kind{store.Put, store.Put, store.Put, store.DeleteVersion, store.DeleteColumn, store.DeleteFamily, store.DeleteRow}
	var ms []store.RowMutation
	total := 0
	for i := range 200 {
		m := store.RowMutation{Row: fmt.Appendf(nil, "r%d", i)}
		for range 1 + r.Intn(9) {
			x := store.Mutation{Kind: kinds[r.Intn(len(kinds))], Family: []string{"d", "i", "b"}[r.Intn(3)], Qualifier: fmt.Appendf(nil, "q%d", r.Intn(5)), Timestamp: int64(r.Intn(100)), Value: fmt.Appendf(nil, "v%d", r.Intn(1000))}
			if r.Intn(10) == 0 {
				x.Timestamp = store.LatestTimestamp
			}
			m.Mutations = append(m.Mutations, x)
		}
		total += len(m.Mutations)
		ms = append(ms, m)
	}
	// A slab too small for them all, so that it starts new arrays midway.
	slab := newPlanSlab(total / 3)
	shared := make([]plan, len(ms))
	for i, m := range ms {
		p, err := planMutation(m, store.SyncWAL, slab)
		if err != nil {
			t.Fatal(err)
		}
		shared[i] = p
	}
	for i, m := range ms {
		alone, err := planMutation(m, store.SyncWAL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(shared[i], alone) {
			t.Fatalf("row %d: planned with the others %+v, alone %+v", i, shared[i], alone)
		}
	}
}
