package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/denorm/denorm/gen"
	"github.com/denorm/denorm/write"
)

// --rate caps the rows a run reads per second: a dry run that reads about
// R rows at a rate of R/2 per second takes about two seconds, less the
// one-second burst the bucket allows.
func TestRateCapsReads(t *testing.T) {
	if testing.Short() {
		t.Skip("takes seconds")
	}
	ctx := context.Background()
	sp := loadPlan(t, false)
	st := openStore(t, sp)
	apply(t, ctx, write.New(sp, st, write.Options{}), genEvents(t, sp, gen.OrdersOptions{Events: 300, Seed: 6}))
	free := run(t, ctx, sp, st, Options{DryRun: true})
	var rows int64
	for _, n := range free.RowsRead {
		rows += n
	}
	for _, n := range free.Gets {
		rows += n
	}
	rate := float64(rows) / 2
	start := time.Now()
	capped := run(t, ctx, sp, st, Options{DryRun: true, Rate: rate})
	took := time.Since(start)
	if capped.Differences() != 0 || capped.Rows != free.Rows {
		t.Fatalf("capped run: %d rows, %d differences", capped.Rows, capped.Differences())
	}
	if took < 900*time.Millisecond {
		t.Fatalf("%d rows at %.0f rows/s took %v: the rate is not applied", rows, rate, took)
	}
}

func TestLimiterPaces(t *testing.T) {
	l := newLimiter(1000)
	ctx := context.Background()
	start := time.Now()
	for i := 0; i < 30; i++ {
		if err := l.wait(ctx, 100); err != nil {
			t.Fatal(err)
		}
	}
	// 3,000 rows at 1,000/s, the first second's worth free.
	if took := time.Since(start); took < 1900*time.Millisecond || took > 4*time.Second {
		t.Fatalf("3000 rows at 1000/s took %v", took)
	}
	if newLimiter(0) != nil {
		t.Fatal("rate 0 makes a limiter")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := newLimiter(1).wait(cctx, 10); err == nil {
		t.Fatal("a cancelled wait returned nil")
	}
}
