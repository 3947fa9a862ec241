package hotspot

import (
	"context"
	"testing"
	"time"
)

// FuzzOptions: any flags a user can give are either refused with an error
// or give a run that keeps within the bounds: no panic, no run that never
// ends, no more regions than MaxRegions.
func FuzzOptions(f *testing.F) {
	f.Add(0, int64(0), int64(0), 0, 0, uint64(1), int64(0), uint8(0))
	f.Add(100000000, int64(24*time.Hour), int64(15*time.Minute), 4000, 500, uint64(1), int64(0), uint8(0))
	f.Add(8, int64(time.Hour), int64(time.Minute), 100, 10, uint64(7), int64(1<<20), uint8(1))
	f.Add(-1, int64(-5), int64(1), -1, -1, uint64(0), int64(-1), uint8(2))
	f.Add(10000, int64(time.Hour), int64(time.Second), 1, 1, uint64(3), int64(1), uint8(3))
	plans := []string{"orders.yaml", "device_events_naive.yaml"}
	f.Fuzz(func(t *testing.T, regions int, duration, step int64, samples, querySamples int, seed uint64, splitSize int64, which uint8) {
		p := example(t, plans[int(which)%len(plans)])
		o := Options{Regions: regions, Duration: time.Duration(duration), Step: time.Duration(step),
			SamplesPerStep: samples, QuerySamples: querySamples, Seed: seed, SplitSize: splitSize}
		full, err := o.withDefaults()
		if err != nil {
			return // refused: what the command turns into exit 2
		}
		// Runs the bounds allow can still take seconds; the fuzzer checks
		// the small ones and the refusals.
		steps := int64(full.Duration / full.Step)
		if steps*int64(full.SamplesPerStep+full.QuerySamples) > 200_000 || steps*int64(max(regions, 1)) > 200_000 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := Simulate(ctx, p, o)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("a run of %d steps did not end in 30s", steps)
			}
			return
		}
		alive := 0
		for _, r := range res.Regions {
			if r.Died < 0 {
				alive++
			}
		}
		if alive > MaxRegions || alive < 1 {
			t.Fatalf("%d regions alive at the end", alive)
		}
	})
}
