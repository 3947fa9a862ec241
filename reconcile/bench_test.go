package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/write"
)

// BenchmarkReconcile compares, in one run over one store, a dry-run
// reconcile of the orders table with a raw scan of the same rows: the
// metric scan_ratio is reconcile rows/s over raw scan rows/s.
func BenchmarkReconcile(b *testing.B) {
	ctx := context.Background()
	plan := loadPlan(b, false)
	st := openStore(b, plan)
	apply(b, ctx, write.New(plan, st, write.Options{}), genEvents(b, plan, gen.OrdersOptions{Events: 20000, Seed: 1, Renames: 0.01}))
	var scanT, recT time.Duration
	var rows int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sc, err := st.Scan(ctx, "orders", store.Scan{})
		if err != nil {
			b.Fatal(err)
		}
		n := int64(0)
		for sc.Next(ctx) {
			n++
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		sc.Close()
		scanT += time.Since(start)
		start = time.Now()
		rep, err := Run(ctx, plan, st, Options{DryRun: true})
		if err != nil {
			b.Fatal(err)
		}
		recT += time.Since(start)
		if rep.Rows != n {
			b.Fatalf("reconcile scanned %d rows, the raw scan %d", rep.Rows, n)
		}
		rows += n
	}
	scanRate := float64(rows) / scanT.Seconds()
	recRate := float64(rows) / recT.Seconds()
	b.ReportMetric(scanRate, "scan_rows/s")
	b.ReportMetric(recRate, "reconcile_rows/s")
	b.ReportMetric(recRate/scanRate, "scan_ratio")
}
