package pebble

import (
	"context"
	"math/rand"
	"testing"
	"time"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// BenchmarkRowFilters reads pages of rows through GetMany from two stores
// holding the same rows, one with row bloom filters and one made before them
// (Pebble's default comparer), in alternation inside every iteration. The
// rows were written in rounds with a flush after each, so a row's keys lie
// in one of several overlapping sstables, as in a store that grows: a seek
// without filters visits every one of them. One op is one page of present
// rows and one of absent rows (the writer's first read of a new entity) on
// each store.
func BenchmarkRowFilters(b *testing.B) {
	const (
		rounds  = 8
		perRnd  = 25_000
		page    = 128
		absentK = 1 << 30 // absent rows are numbered from here
	)
	ctx := context.Background()
	open := func(legacy bool) *Store {
		dir := b.TempDir()
		if legacy {
			db, err := pdb.Open(dir, &pdb.Options{Logger: quietLogger{pdb.DefaultLogger}})
			if err != nil {
				b.Fatal(err)
			}
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
		}
		st, err := Open(ctx, dir, Options{CacheSize: benchCache})
		if err != nil {
			b.Fatal(err)
		}
		if st.filters == legacy {
			b.Fatalf("store legacy=%v opened with filters=%v", legacy, st.filters)
		}
		b.Cleanup(func() { _ = st.Close() })
		if err := st.CreateTable(ctx, store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "a"}, {Name: "b"}}}); err != nil {
			b.Fatal(err)
		}
		return st
	}
	stores := []*Store{open(false), open(true)}
	value := benchValue(1)
	for _, st := range stores {
		for r := 0; r < rounds; r++ {
			ms := make([]store.RowMutation, 0, perRnd)
			for i := r; i < rounds*perRnd; i += rounds {
				ms = append(ms, benchMutation(i, value))
			}
			if _, err := st.Batch(ctx, "t", ms); err != nil {
				b.Fatal(err)
			}
			if err := st.db.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("sstables per level (filters): %v", levelFiles(stores[0].db))
	r := rand.New(rand.NewSource(1))
	pages := func(base int) [][]store.Get {
		out := make([][]store.Get, 64)
		for p := range out {
			for range page {
				out[p] = append(out[p], store.Get{Row: benchRow(base + r.Intn(rounds*perRnd))})
			}
		}
		return out
	}
	present, absent := pages(0), pages(absentK)
	var t [2][2]time.Duration // [store][present, absent]
	read := func(st *Store, gets []store.Get, wantEmpty bool) time.Duration {
		start := time.Now()
		rows, err := st.GetMany(ctx, "t", gets)
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		for _, row := range rows {
			if row.Empty() != wantEmpty {
				b.Fatalf("row %s: empty %v, want %v", row.Key, row.Empty(), wantEmpty)
			}
		}
		return d
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for s, st := range stores {
			t[s][0] += read(st, present[i%len(present)], false)
			t[s][1] += read(st, absent[i%len(absent)], true)
		}
	}
	rows := float64(b.N * page)
	b.ReportMetric(float64(t[0][0].Nanoseconds())/rows, "present-ns/row")
	b.ReportMetric(float64(t[1][0].Nanoseconds())/rows, "present-nofilter-ns/row")
	b.ReportMetric(float64(t[0][1].Nanoseconds())/rows, "absent-ns/row")
	b.ReportMetric(float64(t[1][1].Nanoseconds())/rows, "absent-nofilter-ns/row")
	b.ReportMetric(t[0][0].Seconds()/t[1][0].Seconds(), "present-ratio")
	b.ReportMetric(t[0][1].Seconds()/t[1][1].Seconds(), "absent-ratio")
}

// levelFiles counts the sstables of each level.
func levelFiles(db *pdb.DB) []int64 {
	m := db.Metrics()
	out := make([]int64, len(m.Levels))
	for i, l := range m.Levels {
		out[i] = l.TablesCount
	}
	return out
}
