package write

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/ddl"
	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// The apply benchmarks share one generated stream of orders, so that the
// writer, raw Pebble and the naive writer put the same cells.
const benchEvents = 20000

func benchStream(b *testing.B) []*event.Event {
	b.Helper()
	return genDecoded(b, ordersPlan(b), gen.OrdersOptions{Events: benchEvents, Seed: 1})
}

// genDecoded is a generated stream of orders, decoded for plan.
func genDecoded(tb testing.TB, plan *schema.Plan, opts gen.OrdersOptions) []*event.Event {
	tb.Helper()
	var buf bytes.Buffer
	if err := gen.Orders(&buf, opts); err != nil {
		tb.Fatal(err)
	}
	var evs []*event.Event
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		ev, err := event.Decode(plan, line)
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// recorder keeps every mutation the writer sends, so that the baselines
// write exactly the same cells and delete markers.
type recorder struct {
	store.Store
	mu   sync.Mutex
	keys [][]byte
	vals [][]byte
}

func (r *recorder) Batch(ctx context.Context, table string, ms []store.RowMutation) ([]error, error) {
	r.mu.Lock()
	for _, m := range ms {
		for _, x := range m.Mutations {
			k := append(append(append(append([]byte(table), m.Row...), x.Family...), x.Qualifier...), byte(x.Kind))
			r.keys = append(r.keys, binary.BigEndian.AppendUint64(k, uint64(x.Timestamp)))
			r.vals = append(r.vals, bytes.Clone(x.Value)) // the writer reuses its buffers
		}
	}
	r.mu.Unlock()
	return r.Store.Batch(ctx, table, ms)
}

// benchCells applies the stream once and returns what the writer wrote,
// one key and value per cell or delete marker.
func benchCells(b *testing.B, evs []*event.Event) (keys, vals [][]byte) {
	st := openBench(b)
	defer st.Close()
	rec := &recorder{Store: st}
	w := New(ordersPlan(b), rec, Options{})
	for off := 0; off < len(evs); off += 1000 {
		if _, _, err := w.Apply(context.Background(), evs[off:min(off+1000, len(evs))]); err != nil {
			b.Fatal(err)
		}
	}
	return rec.keys, rec.vals
}

func openBench(b *testing.B) *pebble.Store {
	st, err := pebble.Open(context.Background(), b.TempDir(), pebble.Options{Durability: benchDurability})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ddl.Create(context.Background(), st, ordersPlan(b)); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkApply: the writer, batches of 1000 events, sync_wal.
func BenchmarkApply(b *testing.B) {
	evs := benchStream(b)
	// Only the count of the recorded cells is needed: the cells themselves
	// would stay in the heap and make every garbage collection during the
	// timed loop mark them, a cost raw Pebble's run does not pay.
	keys, _ := benchCells(b, evs)
	nCells := len(keys)
	keys = nil
	runtime.GC()
	plan := ordersPlan(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		st := openBench(b)
		w := New(plan, st, Options{})
		b.StartTimer()
		for off := 0; off < len(evs); off += 1000 {
			if _, _, err := w.Apply(ctx, evs[off:min(off+1000, len(evs))]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	report(b, len(evs), nCells)
}

// BenchmarkRawPebble: the same cells straight into Pebble, batches of the
// same cells per commit, synced.
func BenchmarkRawPebble(b *testing.B) {
	evs := benchStream(b)
	keys, vals := benchCells(b, evs)
	perBatch := len(keys) * 1000 / len(evs)
	for b.Loop() {
		b.StopTimer()
		db, err := pdb.Open(filepath.Join(b.TempDir(), "raw"), &pdb.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for off := 0; off < len(keys); off += perBatch {
			batch := db.NewBatch()
			for i := off; i < min(off+perBatch, len(keys)); i++ {
				_ = batch.Set(keys[i], vals[i], nil)
			}
			if err := batch.Commit(pdb.Sync); err != nil {
				b.Fatal(err)
			}
			batch.Close()
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	report(b, len(evs), len(keys))
}

// BenchmarkNaive: one synchronous mutation per cell, no batching, on the
// first 2,000 events only (the full stream takes minutes); the figures are
// per event and per cell, so they compare.
func BenchmarkNaive(b *testing.B) {
	evs := benchStream(b)[:2000]
	keys, vals := benchCells(b, evs)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		st := openBench(b)
		b.StartTimer()
		for i := range keys {
			err := st.Mutate(ctx, "orders", store.RowMutation{Row: keys[i], Durability: store.SyncWAL,
				Mutations: []store.Mutation{{Kind: store.Put, Family: "d", Qualifier: []byte("x"), Timestamp: 1, Value: vals[i]}}})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	report(b, len(evs), len(keys))
}

func report(b *testing.B, events, cells int) {
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(events)/sec, "events/s")
	b.ReportMetric(float64(cells)/sec, "cells/s")
	b.ReportMetric(0, "ns/op")
}

var _ = fmt.Sprint

var benchDurability = store.AsyncWAL
