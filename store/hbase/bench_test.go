package hbase

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// benchRows is how many rows one benchmark iteration writes.
const benchRows = 2000

// benchMutation is row i of the benchmark: three cells of 100 bytes with
// explicit timestamps, the shape of one denorm primary row.
func benchMutation(i int) store.RowMutation {
	value := make([]byte, 100)
	for k := range value {
		value[k] = byte('a' + (i+k)%26)
	}
	m := store.RowMutation{Row: []byte(fmt.Sprintf("row%08d", i))}
	for _, q := range []string{"status", "total", "placed"} {
		m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: "d", Qualifier: []byte(q), Timestamp: int64(1000 + i), Value: value})
	}
	return m
}

// BenchmarkWrites compares one Mutate call per row with a BufferedMutator
// (default 2 MiB buffer) writing the same rows, against a real HBase:
//
//	DENORM_HBASE_URL=hbase://127.0.0.1:9090 go test -run '^$' -bench Writes -benchtime 3x ./store/hbase/
func BenchmarkWrites(b *testing.B) {
	s := openLive(b, liveURL(b))
	ctx := context.Background()
	table := fmt.Sprintf("bench_writes_%d", time.Now().UnixNano())
	if err := s.CreateTable(ctx, store.TableSpec{Name: table, Families: []store.FamilySpec{{Name: "d"}}}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.DropTable(context.Background(), table) })
	rows := make([]store.RowMutation, benchRows)
	for i := range rows {
		rows[i] = benchMutation(i)
	}
	// The two ways alternate inside each iteration, so that both see the
	// same server load, which on a shared machine drifts a lot.
	var perRow, buffered time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		start := time.Now()
		for _, m := range rows {
			if err := s.Mutate(ctx, table, m); err != nil {
				b.Fatal(err)
			}
		}
		perRow += time.Since(start)
		start = time.Now()
		bm := store.NewBufferedMutator(s, table, store.BufferedOptions{})
		for _, m := range rows {
			if err := bm.Mutate(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		if err := bm.Close(ctx); err != nil {
			b.Fatal(err)
		}
		buffered += time.Since(start)
	}
	total := float64(b.N * benchRows)
	b.ReportMetric(total/perRow.Seconds(), "mutate_rows/s")
	b.ReportMetric(total/buffered.Seconds(), "buffered_rows/s")
	b.ReportMetric(perRow.Seconds()/buffered.Seconds(), "speedup")
}

// BenchmarkGetMany reads the same 100 rows, in a random order, with one Get
// per row and with one GetMany, alternating inside each iteration, and
// reports the ratio of the times:
//
//	DENORM_HBASE_URL=hbase://127.0.0.1:9090 go test -run '^$' -bench GetMany -benchtime 20x ./store/hbase/
func BenchmarkGetMany(b *testing.B) {
	s := openLive(b, liveURL(b))
	ctx := context.Background()
	table := fmt.Sprintf("bench_getmany_%d", time.Now().UnixNano())
	if err := s.CreateTable(ctx, store.TableSpec{Name: table, Families: []store.FamilySpec{{Name: "d"}}}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.DropTable(context.Background(), table) })
	rows := make([]store.RowMutation, benchRows)
	for i := range rows {
		rows[i] = benchMutation(i)
	}
	bm := store.NewBufferedMutator(s, table, store.BufferedOptions{})
	for _, m := range rows {
		if err := bm.Mutate(ctx, m); err != nil {
			b.Fatal(err)
		}
	}
	if err := bm.Close(ctx); err != nil {
		b.Fatal(err)
	}
	const page = 100
	gets := make([]store.Get, page)
	for i := range gets {
		gets[i] = store.Get{Row: rows[(i*7919)%len(rows)].Row}
	}
	var single, multi time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		start := time.Now()
		for _, g := range gets {
			if r, err := s.Get(ctx, table, g); err != nil || r.Empty() {
				b.Fatal(err, r.Empty())
			}
		}
		single += time.Since(start)
		start = time.Now()
		got, err := s.GetMany(ctx, table, gets)
		if err != nil || len(got) != page || got[page-1].Empty() {
			b.Fatal(err, len(got))
		}
		multi += time.Since(start)
	}
	b.ReportMetric(single.Seconds()*1e3/float64(b.N), "gets-ms")
	b.ReportMetric(multi.Seconds()*1e3/float64(b.N), "getmany-ms")
	b.ReportMetric(single.Seconds()/multi.Seconds(), "speedup")
}
