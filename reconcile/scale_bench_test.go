package reconcile

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/denorm/denorm/schema"
	"github.com/denorm/denorm/store"
)

// BenchmarkReconcileStore measures a dry run over an existing store of the
// orders example (DENORM_BENCH_STORE, a store URL; scripts/reconcile-bench.sh
// makes them) against its floor, measured in the same process and the same
// iterations: a raw scan of every table the job reads, checking nothing.
// floor_ratio is the dry run's orders/s over the floor's (the single-process
// run, which makes its plan and so scans the primary table twice);
// planned_floor_ratio is the same for run and merge of a plan made before.
func BenchmarkReconcileStore(b *testing.B) {
	url := os.Getenv("DENORM_BENCH_STORE")
	if url == "" {
		b.Skip("DENORM_BENCH_STORE is not set (see scripts/reconcile-bench.sh)")
	}
	ctx := context.Background()
	sp, err := schema.Load("../examples/orders.yaml")
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	scan := func(table string) int64 {
		sc, err := st.Scan(ctx, table, store.Scan{Caching: 1000})
		if err != nil {
			b.Fatal(err)
		}
		defer sc.Close()
		var n int64
		for sc.Next(ctx) {
			n++
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		return n
	}
	// A plan made once, outside the timings, for the plan/run/merge path.
	p, err := NewPlan(ctx, sp, st, PlanOptions{Parts: 1})
	if err != nil {
		b.Fatal(err)
	}
	var floorT, runT, partT time.Duration
	var orders int64
	for b.Loop() {
		start := time.Now()
		var n int64
		for _, t := range sp.TablesOf("order") {
			if c := scan(t.Name); t.Role == schema.RolePrimary {
				n = c
			}
		}
		if lt := sp.Locator("order"); lt != nil {
			scan(lt.Name) // the job reads it too, a row per order
		}
		floorT += time.Since(start)
		start = time.Now()
		rep, err := Run(ctx, sp, st, Options{DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		runT += time.Since(start)
		if rep.Rows != n || rep.Differences() != 0 {
			b.Fatalf("dry run: %d rows (the table has %d), %d differences", rep.Rows, n, rep.Differences())
		}
		start = time.Now()
		part, err := RunPart(ctx, sp, st, p, 0, Options{DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		if rep, err = Merge(ctx, sp, st, p, []*Partial{part}, Options{DryRun: true}); err != nil || rep.Differences() != 0 {
			b.Fatalf("run and merge: %v, %d differences", err, rep.Differences())
		}
		partT += time.Since(start)
		orders += n
	}
	b.ReportMetric(float64(orders)/floorT.Seconds(), "floor_orders/s")
	b.ReportMetric(float64(orders)/runT.Seconds(), "reconcile_orders/s")
	b.ReportMetric(floorT.Seconds()/runT.Seconds(), "floor_ratio")
	// The same work with the plan made beforehand (reconcile run + merge).
	b.ReportMetric(floorT.Seconds()/partT.Seconds(), "planned_floor_ratio")
}
