package hbase

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/denorm/denorm/internal/thrift/hbase2"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/storetest"
)

// rowFrom converts a TResult the generated code decoded into a store row,
// as the client did before results: the reference results is held to.
func rowFrom(r *hbase2.TResult_) store.Row {
	if r == nil {
		return store.Row{}
	}
	row := store.Row{Key: r.Row}
	if len(r.ColumnValues) > 0 {
		row.Cells = make([]store.Cell, 0, len(r.ColumnValues))
	}
	for _, cv := range r.ColumnValues {
		row.Cells = append(row.Cells, store.Cell{
			Row:       r.Row,
			Family:    string(cv.Family),
			Qualifier: nonNil(cv.Qualifier),
			Timestamp: cv.GetTimestamp(),
			Value:     nonNil(cv.Value),
		})
	}
	return row
}

// randomAnswer makes a getScannerRows answer of random rows: keys and
// values empty, short or (rarely) past resultsBufMax, families from a small
// set, timestamps set or not, tags, types and the stale and partial flags
// set now and then; sometimes an exception beside or instead of the rows.
func randomAnswer(r *rand.Rand) *hbase2.THBaseServiceGetScannerRowsResult {
	bin := func(max int) []byte {
		switch r.Intn(8) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		if r.Intn(400) == 0 {
			max = resultsBufMax + 1 + r.Intn(1000)
		}
		b := make([]byte, r.Intn(max))
		r.Read(b)
		return b
	}
	out := &hbase2.THBaseServiceGetScannerRowsResult{}
	switch r.Intn(10) {
	case 0:
		msg := "boom"
		out.Io = &hbase2.TIOError{Message: &msg}
		return out
	case 1:
		msg := "no such scanner"
		out.Ia = &hbase2.TIllegalArgument{Message: &msg}
		return out
	}
	fams := [][]byte{[]byte("d"), []byte("b"), []byte("i"), {}}
	for range r.Intn(40) {
		res := &hbase2.TResult_{Row: bin(40), ColumnValues: []*hbase2.TColumnValue{}}
		if r.Intn(3) == 0 {
			res.Stale, res.Partial = r.Intn(2) == 0, r.Intn(2) == 0
		}
		for range r.Intn(12) {
			cv := &hbase2.TColumnValue{Family: fams[r.Intn(len(fams))], Qualifier: bin(20), Value: bin(300)}
			if cv.Family == nil {
				cv.Family = []byte{}
			}
			if cv.Qualifier == nil {
				cv.Qualifier = []byte{}
			}
			if cv.Value == nil {
				cv.Value = []byte{}
			}
			if r.Intn(5) > 0 {
				ts := r.Int63()
				cv.Timestamp = &ts
			}
			if r.Intn(6) == 0 {
				cv.Tags = bin(10)
				typ := int8(r.Intn(8))
				cv.Type = &typ
			}
			res.ColumnValues = append(res.ColumnValues, cv)
		}
		out.Success = append(out.Success, res)
	}
	return out
}

type protocolMaker struct {
	name string
	make func(thrift.TTransport) thrift.TProtocol
}

// protocolsCapped are the two protocols, with messages capped at limit
// (the pool's connections allow any size). The generated decoder, taken as
// the reference, makes each list at the length the input claims: under a
// fuzzer, an uncapped length has it allocate gigabytes per input.
func protocolsCapped(limit int32) []protocolMaker {
	conf := &thrift.TConfiguration{MaxMessageSize: limit}
	return []protocolMaker{
		{"binary", func(t thrift.TTransport) thrift.TProtocol { return thrift.NewTBinaryProtocolConf(t, conf) }},
		{"compact", func(t thrift.TTransport) thrift.TProtocol { return thrift.NewTCompactProtocolConf(t, conf) }},
	}
}

// decodeBoth decodes b into want, a result struct of the generated code,
// and into got. A panic of the generated code (which makes its lists at
// the length the input claims) is its error: the reference then has no
// answer to compare with. results runs outside any recover, so a panic of
// its own fails the test.
func decodeBoth(pm protocolMaker, b []byte, want thrift.TStruct, got *results) (wantErr, gotErr error) {
	ctx := context.Background()
	wantErr = func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("generated decoder panicked: %v", p)
			}
		}()
		return want.Read(ctx, pm.make(thrift.NewStreamTransportR(bytes.NewReader(b))))
	}()
	gotErr = got.Read(ctx, pm.make(thrift.NewStreamTransportR(bytes.NewReader(b))))
	return wantErr, gotErr
}

// getAsList is get's answer in the shape of the calls that answer a list.
func getAsList(g *hbase2.THBaseServiceGetResult) *hbase2.THBaseServiceGetScannerRowsResult {
	out := &hbase2.THBaseServiceGetScannerRowsResult{Io: g.Io}
	if g.Success != nil {
		out.Success = []*hbase2.TResult_{g.Success}
	}
	return out
}

// sameAsGenerated fails t unless got holds what rowFrom makes of want.
func sameAsGenerated(t *testing.T, what string, want *hbase2.THBaseServiceGetScannerRowsResult, got *results) {
	t.Helper()
	if !reflect.DeepEqual(got.io, want.Io) || !reflect.DeepEqual(got.ia, want.Ia) {
		t.Fatalf("%s: exceptions %v, %v; want %v, %v", what, got.io, got.ia, want.Io, want.Ia)
	}
	if len(got.rows) != len(want.Success) {
		t.Fatalf("%s: %d rows, want %d", what, len(got.rows), len(want.Success))
	}
	for i, r := range want.Success {
		if w := rowFrom(r); !reflect.DeepEqual(got.rows[i], w) {
			t.Fatalf("%s: row %d\n got %#v\nwant %#v", what, i, got.rows[i], w)
		}
	}
}

// The decoder gives the rows rowFrom makes of the generated code's answer,
// on both protocols, and every slice it hands out is its own: appending to
// one leaves every other row as it was.
func TestResultsAsGenerated(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	ctx := context.Background()
	for _, pm := range protocolsCapped(4 << 20) {
		for i := range 300 {
			ans := randomAnswer(r)
			mem := thrift.NewTMemoryBuffer()
			if err := ans.Write(ctx, pm.make(mem)); err != nil {
				t.Fatal(err)
			}
			want, got := &hbase2.THBaseServiceGetScannerRowsResult{}, &results{wantIA: true}
			wantErr, gotErr := decodeBoth(pm, mem.Bytes(), want, got)
			if wantErr != nil || gotErr != nil {
				t.Fatalf("%s answer %d: generated %v, results %v", pm.name, i, wantErr, gotErr)
			}
			sameAsGenerated(t, pm.name, want, got)
			storetest.RowsApart(t, pm.name+" row", got.rows)

			// get answers one TResult, not a list.
			one := &hbase2.THBaseServiceGetResult{Io: ans.Io}
			if len(ans.Success) > 0 {
				one.Success = ans.Success[0]
			}
			mem = thrift.NewTMemoryBuffer()
			if err := one.Write(ctx, pm.make(mem)); err != nil {
				t.Fatal(err)
			}
			wantOne, gotOne := &hbase2.THBaseServiceGetResult{}, &results{single: true}
			wantErr, gotErr = decodeBoth(pm, mem.Bytes(), wantOne, gotOne)
			if wantErr != nil || gotErr != nil {
				t.Fatalf("%s get answer %d: generated %v, results %v", pm.name, i, wantErr, gotErr)
			}
			sameAsGenerated(t, pm.name+" get", getAsList(wantOne), gotOne)
		}
	}
}

// Whatever the bytes, the decoder does not panic, and where the generated
// code decodes them, as a list's answer or as get's, it decodes them to
// the same rows.
func FuzzResults(f *testing.F) {
	r := rand.New(rand.NewSource(5))
	ctx := context.Background()
	protocols := protocolsCapped(64 << 10)
	for range 20 {
		mem := thrift.NewTMemoryBuffer()
		if err := randomAnswer(r).Write(ctx, protocols[0].make(mem)); err != nil {
			f.Fatal(err)
		}
		if mem.Len() < 4<<10 {
			f.Add(mem.Bytes(), false)
		}
	}
	f.Add([]byte{0x0f, 0, 0, 0x0c, 0x7f, 0xff, 0xff, 0xff}, false) // a list of 2^31-1 results
	f.Fuzz(func(t *testing.T, b []byte, compact bool) {
		pm := protocols[0]
		if compact {
			pm = protocols[1]
		}
		want, got := &hbase2.THBaseServiceGetScannerRowsResult{}, &results{wantIA: true}
		if wantErr, gotErr := decodeBoth(pm, b, want, got); wantErr == nil {
			if gotErr != nil {
				t.Fatalf("%s: the generated code decodes it, results fails: %v", pm.name, gotErr)
			}
			sameAsGenerated(t, pm.name, want, got)
		}
		// The same bytes as get's answer: one TResult in field 0, where
		// a list is skipped (and for the others a TResult is).
		wantOne, gotOne := &hbase2.THBaseServiceGetResult{}, &results{single: true}
		if wantErr, gotErr := decodeBoth(pm, b, wantOne, gotOne); wantErr == nil {
			if gotErr != nil {
				t.Fatalf("%s get: the generated code decodes it, results fails: %v", pm.name, gotErr)
			}
			sameAsGenerated(t, pm.name+" get", getAsList(wantOne), gotOne)
		}
	})
}

// BenchmarkResults decodes one getMultiple answer of 100 rows of seven
// cells (a family of four columns, one of three, as an order's primary
// row), alternating the generated code with rowFrom (how rows were read
// before results) and results, from the same bytes.
//
//	go test ./store/hbase -run '^$' -bench Results -benchmem
func BenchmarkResults(b *testing.B) {
	ctx := context.Background()
	ans := &hbase2.THBaseServiceGetMultipleResult{}
	for i := range 100 {
		res := &hbase2.TResult_{Row: fmt.Appendf(nil, "c%06d\x00\x01o%08d", i*37, i)}
		for k, fq := range []string{"d/\x00c", "d/s", "d/t", "d/x", "i/\x80\x00\x00\x01", "i/\x80\x00\x00\x02", "i/\x80\x00\x00\x03"} {
			ts := int64(1_700_000_000_000 + i)
			v := bytes.Repeat([]byte{byte('a' + k)}, []int{120, 4, 8, 16, 47, 47, 47}[k])
			res.ColumnValues = append(res.ColumnValues, &hbase2.TColumnValue{Family: []byte(fq[:1]), Qualifier: []byte(fq[2:]), Value: v, Timestamp: &ts})
		}
		ans.Success = append(ans.Success, res)
	}
	mem := thrift.NewTMemoryBuffer()
	if err := ans.Write(ctx, thrift.NewTBinaryProtocolConf(mem, nil)); err != nil {
		b.Fatal(err)
	}
	msg := mem.Bytes()
	rd := bytes.NewReader(msg)
	prot := thrift.NewTBinaryProtocolConf(thrift.NewStreamTransportR(rd), &thrift.TConfiguration{MaxMessageSize: math.MaxInt32})
	var tGen, tRes time.Duration
	var aGen, aRes uint64
	var ms runtime.MemStats
	mallocs := func() uint64 { runtime.ReadMemStats(&ms); return ms.Mallocs }
	b.ResetTimer()
	for range b.N {
		rd.Reset(msg)
		m0, t0 := mallocs(), time.Now()
		gen := &hbase2.THBaseServiceGetMultipleResult{}
		if err := gen.Read(ctx, prot); err != nil {
			b.Fatal(err)
		}
		rows := make([]store.Row, len(gen.Success))
		for i, r := range gen.Success {
			rows[i] = rowFrom(r)
		}
		tGen += time.Since(t0)
		aGen += mallocs() - m0

		rd.Reset(msg)
		m0, t0 = mallocs(), time.Now()
		res := results{}
		if err := res.Read(ctx, prot); err != nil || len(res.rows) != len(rows) {
			b.Fatal(err)
		}
		tRes += time.Since(t0)
		aRes += mallocs() - m0
	}
	n := float64(b.N * len(ans.Success))
	b.ReportMetric(float64(tGen.Nanoseconds())/n, "generated-ns/row")
	b.ReportMetric(float64(tRes.Nanoseconds())/n, "results-ns/row")
	b.ReportMetric(float64(aGen)/n, "generated-allocs/row")
	b.ReportMetric(float64(aRes)/n, "results-allocs/row")
	b.ReportMetric(tGen.Seconds()/tRes.Seconds(), "speedup")
	b.ReportMetric(0, "ns/op")
}
