package pebble

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/store"
)

// The benchmarks compare the store with raw Pebble doing the same work: the
// same cells (row, family, qualifier, timestamp, value), the same value bytes,
// the same batch size and the same sync policy (a synced commit per batch).
// Raw keys are the plain concatenation of the coordinates, without the
// store's escaping, table prefix and type byte.
const (
	benchFamilies   = 2
	benchQualifiers = 5
	benchCellsRow   = benchFamilies * benchQualifiers
	benchValueLen   = 64
	benchScanRows   = 20000
	benchCache      = 128 << 20 // both sides: the scanned data fits
)

var benchFams = []string{"a", "b"}

func benchRow(i int) []byte { return []byte(fmt.Sprintf("user%012d", i*7919%1_000_003)) }

func benchQual(q int) []byte { return []byte{'c', 'o', 'l', byte('0' + q)} }

func benchValue(i int) []byte {
	v := make([]byte, benchValueLen)
	binary.BigEndian.PutUint64(v, uint64(i))
	return v
}

func benchMutation(i int, value []byte) store.RowMutation {
	m := store.RowMutation{Row: benchRow(i), Mutations: make([]store.Mutation, 0, benchCellsRow)}
	for _, f := range benchFams {
		for q := 0; q < benchQualifiers; q++ {
			m.Mutations = append(m.Mutations, store.Mutation{Kind: store.Put, Family: f, Qualifier: benchQual(q), Timestamp: 1, Value: value})
		}
	}
	return m
}

func openBenchStore(b *testing.B) *Store {
	st, err := Open(context.Background(), b.TempDir(), Options{CacheSize: benchCache})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	err = st.CreateTable(context.Background(), store.TableSpec{Name: "t", Families: []store.FamilySpec{{Name: "a"}, {Name: "b"}}})
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func openBenchPebble(b *testing.B) *pdb.DB {
	cache := pdb.NewCache(benchCache)
	defer cache.Unref()
	db, err := pdb.Open(b.TempDir(), &pdb.Options{Logger: quietLogger{pdb.DefaultLogger}, Cache: cache, MemTableSize: DefaultMemTableSize})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

func rawCellKey(dst, row []byte, fam string, qual []byte, ts int64) []byte {
	dst = append(dst, row...)
	dst = append(dst, fam...)
	dst = append(dst, qual...)
	return binary.BigEndian.AppendUint64(dst, uint64(ts))
}

func reportCells(b *testing.B, cells int) {
	b.ReportMetric(float64(cells)/b.Elapsed().Seconds(), "cells/s")
}

// BenchmarkPut writes b.N rows of benchCellsRow cells.
func BenchmarkPut(b *testing.B) {
	value := benchValue(1)
	b.Run("store", func(b *testing.B) {
		st := openBenchStore(b)
		ctx := context.Background()
		bm := store.NewBufferedMutator(st, "t", store.BufferedOptions{})
		ms := make([]store.RowMutation, 1024)
		for i := range ms {
			ms[i] = benchMutation(i, value)
		}
		b.SetBytes(benchCellsRow * benchValueLen)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := bm.Mutate(ctx, ms[i%len(ms)]); err != nil {
				b.Fatal(err)
			}
		}
		if err := bm.Close(ctx); err != nil {
			b.Fatal(err)
		}
		reportCells(b, b.N*benchCellsRow)
	})
	b.Run("raw", func(b *testing.B) {
		db := openBenchPebble(b)
		rows := make([][]byte, 1024)
		for i := range rows {
			rows[i] = benchRow(i)
		}
		b.SetBytes(benchCellsRow * benchValueLen)
		b.ResetTimer()
		batch := db.NewBatch()
		var key []byte
		size := 0
		for i := 0; i < b.N; i++ {
			row := rows[i%len(rows)]
			for _, f := range benchFams {
				for q := 0; q < benchQualifiers; q++ {
					key = rawCellKey(key[:0], row, f, benchQual(q), 1)
					_ = batch.Set(key, value, nil)
				}
			}
			// The buffered mutator's flush threshold, counted the same way.
			size += len(row) + benchCellsRow*(len("a")+4+benchValueLen+9)
			if size >= store.DefaultWriteBufferSize {
				if err := batch.Commit(pdb.Sync); err != nil {
					b.Fatal(err)
				}
				_ = batch.Close()
				batch, size = db.NewBatch(), 0
			}
		}
		if err := batch.Commit(pdb.Sync); err != nil {
			b.Fatal(err)
		}
		_ = batch.Close()
		reportCells(b, b.N*benchCellsRow)
	})
}

// BenchmarkScan reads a table of benchScanRows rows in full, b.N times.
func BenchmarkScan(b *testing.B) {
	value := benchValue(1)
	ctx := context.Background()
	b.Run("store", func(b *testing.B) {
		st := openBenchStore(b)
		loadSettled(b, st, benchScanRows, value)
		b.SetBytes(benchScanRows * benchCellsRow * benchValueLen)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			sc, err := st.Scan(ctx, "t", store.Scan{})
			if err != nil {
				b.Fatal(err)
			}
			cells, bytes := 0, 0
			for sc.Next(ctx) {
				for _, c := range sc.Row().Cells {
					cells++
					bytes += len(c.Value)
				}
			}
			if err := sc.Err(); err != nil {
				b.Fatal(err)
			}
			_ = sc.Close()
			if cells != benchScanRows*benchCellsRow || bytes != cells*benchValueLen {
				b.Fatalf("scan saw %d cells, %d bytes", cells, bytes)
			}
		}
		reportCells(b, b.N*benchScanRows*benchCellsRow)
	})
	b.Run("raw", func(b *testing.B) {
		db := openBenchPebble(b)
		batch := db.NewBatch()
		var key []byte
		for i := 0; i < benchScanRows; i++ {
			row := benchRow(i)
			for _, f := range benchFams {
				for q := 0; q < benchQualifiers; q++ {
					key = rawCellKey(key[:0], row, f, benchQual(q), 1)
					_ = batch.Set(key, value, nil)
				}
			}
		}
		if err := batch.Commit(pdb.Sync); err != nil {
			b.Fatal(err)
		}
		_ = batch.Close()
		settle(b, db)
		b.SetBytes(benchScanRows * benchCellsRow * benchValueLen)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			it, err := db.NewIter(nil)
			if err != nil {
				b.Fatal(err)
			}
			cells, bytes := 0, 0
			for it.First(); it.Valid(); it.Next() {
				v, err := it.ValueAndErr()
				if err != nil {
					b.Fatal(err)
				}
				cells++
				bytes += len(v)
			}
			_ = it.Close()
			if cells != benchScanRows*benchCellsRow || bytes != cells*benchValueLen {
				b.Fatalf("scan saw %d cells, %d bytes", cells, bytes)
			}
		}
		reportCells(b, b.N*benchScanRows*benchCellsRow)
	})
}

// loadSettled writes rows 0..n-1 of benchMutation into table t through a
// buffered mutator, then settles the store.
func loadSettled(b *testing.B, st *Store, n int, value []byte) {
	ctx := context.Background()
	bm := store.NewBufferedMutator(st, "t", store.BufferedOptions{})
	for i := 0; i < n; i++ {
		if err := bm.Mutate(ctx, benchMutation(i, value)); err != nil {
			b.Fatal(err)
		}
	}
	if err := bm.Close(ctx); err != nil {
		b.Fatal(err)
	}
	settle(b, st.db)
}

// settle flushes and compacts everything, so that neither side of a scan
// benchmark pays for background work left over from loading.
func settle(b *testing.B, db *pdb.DB) {
	if err := db.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff, 0xff}, true); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPaired runs the store and raw Pebble in alternation, timing each
// separately, so that the ratio survives a machine whose load changes from
// second to second (as a shared 2-core machine's does). One op is one
// buffered-mutator flush worth of rows (puts) or one full scan (scans).
func BenchmarkPaired(b *testing.B) {
	value := benchValue(1)
	ctx := context.Background()
	b.Run("put", func(b *testing.B) {
		st := openBenchStore(b)
		db := openBenchPebble(b)
		const rowsPerOp = 2000 // about one 2 MiB flush
		ms := make([]store.RowMutation, rowsPerOp)
		rows := make([][]byte, rowsPerOp)
		for i := range ms {
			ms[i] = benchMutation(i, value)
			rows[i] = ms[i].Row
		}
		var tStore, tRaw time.Duration
		var key []byte
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			bm := store.NewBufferedMutator(st, "t", store.BufferedOptions{WriteBufferSize: 64 << 20})
			for j := range ms {
				if err := bm.Mutate(ctx, ms[j]); err != nil {
					b.Fatal(err)
				}
			}
			if err := bm.Close(ctx); err != nil {
				b.Fatal(err)
			}
			tStore += time.Since(start)

			start = time.Now()
			batch := db.NewBatch()
			for _, row := range rows {
				for _, f := range benchFams {
					for q := 0; q < benchQualifiers; q++ {
						key = rawCellKey(key[:0], row, f, benchQual(q), 1)
						_ = batch.Set(key, value, nil)
					}
				}
			}
			if err := batch.Commit(pdb.Sync); err != nil {
				b.Fatal(err)
			}
			_ = batch.Close()
			tRaw += time.Since(start)
		}
		reportPair(b, b.N*rowsPerOp*benchCellsRow, tStore, tRaw)
	})
	b.Run("scan", func(b *testing.B) {
		st := openBenchStore(b)
		db := openBenchPebble(b)
		bm := store.NewBufferedMutator(st, "t", store.BufferedOptions{})
		batch := db.NewBatch()
		var key []byte
		for i := 0; i < benchScanRows; i++ {
			m := benchMutation(i, value)
			if err := bm.Mutate(ctx, m); err != nil {
				b.Fatal(err)
			}
			for _, x := range m.Mutations {
				key = rawCellKey(key[:0], m.Row, x.Family, x.Qualifier, x.Timestamp)
				_ = batch.Set(key, x.Value, nil)
			}
		}
		if err := bm.Close(ctx); err != nil {
			b.Fatal(err)
		}
		if err := batch.Commit(pdb.Sync); err != nil {
			b.Fatal(err)
		}
		_ = batch.Close()
		settle(b, st.db)
		settle(b, db)
		var tStore, tRaw time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			sc, err := st.Scan(ctx, "t", store.Scan{})
			if err != nil {
				b.Fatal(err)
			}
			cells := 0
			for sc.Next(ctx) {
				cells += len(sc.Row().Cells)
			}
			if err := sc.Err(); err != nil {
				b.Fatal(err)
			}
			_ = sc.Close()
			tStore += time.Since(start)

			start = time.Now()
			it, err := db.NewIter(nil)
			if err != nil {
				b.Fatal(err)
			}
			raw := 0
			for it.First(); it.Valid(); it.Next() {
				if _, err := it.ValueAndErr(); err != nil {
					b.Fatal(err)
				}
				raw++
			}
			_ = it.Close()
			tRaw += time.Since(start)
			if cells != benchScanRows*benchCellsRow || raw != cells {
				b.Fatalf("store scanned %d cells, raw %d", cells, raw)
			}
		}
		reportPair(b, b.N*benchScanRows*benchCellsRow, tStore, tRaw)
	})
}

func reportPair(b *testing.B, cells int, tStore, tRaw time.Duration) {
	b.ReportMetric(float64(cells)/tStore.Seconds(), "store-cells/s")
	b.ReportMetric(float64(cells)/tRaw.Seconds(), "raw-cells/s")
	b.ReportMetric(tRaw.Seconds()/tStore.Seconds(), "ratio")
}
