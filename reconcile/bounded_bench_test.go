package reconcile

import (
	"bytes"
	"context"
	"flag"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/internal/testenv"
	"github.com/denorm/denorm/layout"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

var boundedDiffEvents = flag.Int("bounded-diff-events", 20000, "events BenchmarkBoundedDiff applies")

// BenchmarkBoundedDiff times a dry run that must diff every range of the
// orders example's bounded counter (each row holds a drift), so that the
// bounded diff's work per primary row (its records counted, its state's
// counts held against its record) is what is measured, with a raw scan of
// the primary table as the baseline: scan_ratio is the run's primary rows
// per second over the scan's.
func BenchmarkBoundedDiff(b *testing.B) {
	ctx := context.Background()
	plan := boundedPlan(b)
	st := openStore(b, plan)
	evs := logged(genEvents(b, plan, gen.OrdersOptions{Events: *boundedDiffEvents, Seed: 1, SKUs: 200}))
	w := write.New(plan, st, write.Options{})
	for i := 0; i < len(evs); i += 500 {
		apply(b, ctx, w, evs[i:min(i+500, len(evs))])
	}
	var rows [][]byte
	testenv.EachRow(b, ctx, st, "daily_units", func(r store.Row) { rows = append(rows, bytes.Clone(r.Key)) })
	for _, row := range rows {
		wrong := &layout.CounterState{}
		wrong.Add("c", []byte("u"), 5)
		setCells(b, ctx, st, row, map[string][]byte{string(layout.QualCounterState): layout.EncodeCounterState(wrong)})
	}
	evs = nil // what the run holds is measured, not the events
	var scanNs, runNs int64
	var n int64
	peak := heapPeak(b)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		n = 0
		testenv.EachRow(b, ctx, st, "orders", func(store.Row) { n++ })
		t1 := time.Now()
		rep, err := Run(ctx, plan, st, Options{DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if rep.Kinds[KindCounter].Drifted < int64(len(rows)) {
			b.Fatalf("%d drifted, want %d", rep.Kinds[KindCounter].Drifted, len(rows))
		}
		scanNs += int64(t1.Sub(t0))
		runNs += int64(t2.Sub(t1))
	}
	b.ReportMetric(float64(n)/(float64(runNs)/1e9/float64(b.N)), "rows/s")
	b.ReportMetric(float64(scanNs)/float64(runNs), "scan_ratio")
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
}

// heapPeak samples the heap in use every 10 ms from now on, after a
// collection of what came before; the function it returns stops the
// sampling and gives the largest sample.
func heapPeak(b *testing.B) func() uint64 {
	runtime.GC()
	var mu sync.Mutex
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	b.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	})
	return func() uint64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}
