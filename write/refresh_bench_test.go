package write

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	pdb "github.com/cockroachdb/pebble/v2"

	"github.com/denorm/denorm/event"
	"github.com/denorm/denorm/store/pebble"
)

// refreshSKUs is how many products each iteration of BenchmarkRefresh
// renames: the best sellers of the generated stream, whose names the most
// orders copy live.
const refreshSKUs = 20

// renames is one batch of product renames at version v.
func renames(b *testing.B, v int64) []*event.Event {
	plan := ordersPlan(b)
	evs := make([]*event.Event, 0, refreshSKUs)
	for i := range refreshSKUs {
		sku := fmt.Sprintf("sku%05d", i)
		line := fmt.Sprintf(`{"id":"%s-v%d","entity":"product","key":"%s","version":%d,"op":"upsert","state":{"sku":"%s","name":"Product %s (rev %d)","priceCents":%d}}`,
			sku, v, sku, v, sku, sku, v, 100+i)
		ev, err := event.Decode(plan, []byte(line))
		if err != nil {
			b.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// BenchmarkRefresh measures the live-copy fan-out alone: on a store that
// holds the generated stream's orders, each iteration renames the
// refreshSKUs best-selling products (one batch), which rewrites the copied
// name in every order holding one of them. Inside each iteration raw
// Pebble then writes the exact cells the writer wrote, in one synced
// commit, into a database of its own (it holds only what earlier
// iterations wrote: the writer's store holds the orders too, and its
// reads of them are the writer's work).
// Reported: fan-out units/s (cells written into referencing rows), the
// ratio (writer cells/s over raw cells/s), allocations per fan-out unit.
func BenchmarkRefresh(b *testing.B) {
	ls := benchLines(b)
	plan := ordersPlan(b)
	ctx := context.Background()
	st := openBench(b)
	defer st.Close()
	w := New(plan, st, Options{})
	for off := 0; off < ls.events(); off += 1000 {
		if _, _, err := w.Apply(ctx, ls.batch(b, plan, off, 1000)); err != nil {
			b.Fatal(err)
		}
	}
	rs := &logStore{Store: st, log: &cellLog{}}
	rw := New(plan, rs, Options{})
	db, err := pdb.Open(filepath.Join(b.TempDir(), "raw"), &pdb.Options{MemTableSize: pebble.DefaultMemTableSize, Logger: quietPebble{pdb.DefaultLogger}})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var tWriter, tRaw time.Duration
	var fanout int
	var mallocs uint64
	var ms0, ms1 runtime.MemStats
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		evs := renames(b, int64(i+1))
		rs.log = &cellLog{}
		runtime.ReadMemStats(&ms0)
		b.StartTimer()
		start := time.Now()
		stats, _, err := rw.Apply(ctx, evs)
		tWriter += time.Since(start)
		b.StopTimer()
		runtime.ReadMemStats(&ms1)
		if err != nil {
			b.Fatal(err)
		}
		if stats.Fanout == 0 {
			b.Fatal("the renames refreshed no order")
		}
		fanout += stats.Fanout
		mallocs += ms1.Mallocs - ms0.Mallocs
		b.StartTimer()

		start = time.Now()
		if err := rs.log.commit(db, 0, rs.log.cells()); err != nil {
			b.Fatal(err)
		}
		tRaw += time.Since(start)
	}
	b.ReportMetric(float64(fanout)/tWriter.Seconds(), "fanout-units/s")
	b.ReportMetric(tRaw.Seconds()/tWriter.Seconds(), "ratio")
	b.ReportMetric(float64(mallocs)/float64(fanout), "allocs/unit")
	b.ReportMetric(float64(fanout)/float64(b.N), "units/op")
	b.ReportMetric(0, "ns/op")
}
