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
// metric scan_ratio is reconcile rows/s over raw scan rows/s. A second
// baseline scans every table the job reads (the primary table and each
// copy): all_tables_scan_ratio is that scan's orders/s over the primary
// scan's, floor_ratio reconcile's orders/s over it. No check of the copies
// can beat reading them, so floor_ratio says how much of the gap is the
// job's own work.
func BenchmarkReconcile(b *testing.B) {
	ctx := context.Background()
	plan := loadPlan(b, false)
	st := openStore(b, plan)
	apply(b, ctx, write.New(plan, st, write.Options{}), genEvents(b, plan, gen.OrdersOptions{Events: 20000, Seed: 1, Renames: 0.01}))
	count := func(table string) int64 {
		sc, err := st.Scan(ctx, table, store.Scan{})
		if err != nil {
			b.Fatal(err)
		}
		defer sc.Close()
		n := int64(0)
		for sc.Next(ctx) {
			n++
		}
		if err := sc.Err(); err != nil {
			b.Fatal(err)
		}
		return n
	}
	var scanT, allT, recT time.Duration
	var rows int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		n := count("orders")
		scanT += time.Since(start)
		// The floor: one raw scan of every table the job reads.
		start = time.Now()
		for _, t := range plan.TablesOf("order") {
			count(t.Name)
		}
		allT += time.Since(start)
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
	b.ReportMetric(float64(rows)/allT.Seconds()/scanRate, "all_tables_scan_ratio")
	b.ReportMetric(recRate/(float64(rows)/allT.Seconds()), "floor_ratio")
}
