package hotspot

import (
	"fmt"
	"time"
)

// Sources of a Result.
const (
	SourceSimulation = "simulation"
	SourceStore      = "store"
)

// DefaultRegionMaxFilesize is HBase's hbase.hregion.max.filesize (10 GiB),
// used when the schema's ops do not set region_max_filesize.
const DefaultRegionMaxFilesize = 10 << 30

// Defaults of Options.
const (
	DefaultDuration       = 24 * time.Hour
	DefaultStep           = 15 * time.Minute
	DefaultSamplesPerStep = 4000
	DefaultQuerySamples   = 500
	// autoSplits is how many regions' worth of data a table that starts as
	// one region should write over the run when the split size is chosen
	// automatically: enough for the hot spot to move several times.
	autoSplits = 16
	// reservoirSize bounds the keys kept per region to find its middle.
	reservoirSize = 256
	// maxSteps keeps a mistaken --step from running for hours.
	maxSteps = 100_000
)

// Bounds on the work and memory of one simulation. Memory is the regions'
// per-step figures (24 bytes per region and step) plus a reservoir of at
// most reservoirSize sampled keys per region, so bounding regions x steps
// bounds memory; the draws bound the time.
const (
	// MaxRegions is the most regions a simulated table starts with or
	// splits into: far more than one table is given in practice.
	MaxRegions = 10_000
	// MaxSamplesPerStep bounds --samples (and QuerySamples).
	MaxSamplesPerStep = 100_000
	// maxRegionSteps bounds regions x steps (about 48 MB of figures).
	maxRegionSteps = 2_000_000
	// maxDraws bounds the sampled writes over the whole run.
	maxDraws = 20_000_000
)

// Options control a simulation. Zero values take the defaults.
type Options struct {
	// Table to simulate; "" picks the schema's first primary table (or its
	// first table).
	Table string
	// Regions overrides the pre-split region count; 0 keeps the schema's.
	Regions  int
	Duration time.Duration
	Step     time.Duration
	Seed     uint64
	// Start is the simulated wall-clock time of the first step; zero means
	// 2026-01-01T00:00:00Z, so results do not depend on when they are run.
	Start time.Time
	// SamplesPerStep caps the writes sampled per step (fewer when the step
	// has fewer writes).
	SamplesPerStep int
	// QuerySamples caps the reads sampled per query and step.
	QuerySamples int
	// SplitSize is the region size in bytes past which a region splits. 0
	// chooses one: the schema's region_max_filesize (10 GiB by default),
	// scaled down when the table would otherwise write fewer than 16 such
	// regions' worth in the run. Negative: regions never split.
	SplitSize int64
}

func (o Options) withDefaults() (Options, error) {
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Step == 0 {
		o.Step = min(DefaultStep, o.Duration)
	}
	if o.SamplesPerStep == 0 {
		o.SamplesPerStep = DefaultSamplesPerStep
	}
	if o.QuerySamples == 0 {
		o.QuerySamples = DefaultQuerySamples
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	switch {
	case o.Duration < 0 || o.Step < 0:
		return o, fmt.Errorf("hotspot: duration %v and step %v must be positive", o.Duration, o.Step)
	case o.Step < time.Millisecond:
		return o, fmt.Errorf("hotspot: step %v is below a millisecond", o.Step)
	case o.Step > o.Duration:
		return o, fmt.Errorf("hotspot: step %v is longer than the duration %v", o.Step, o.Duration)
	case o.Duration/o.Step > maxSteps:
		return o, fmt.Errorf("hotspot: %v in steps of %v is more than %d steps", o.Duration, o.Step, maxSteps)
	case o.Regions < 0:
		return o, fmt.Errorf("hotspot: %d regions", o.Regions)
	case o.Regions > MaxRegions:
		return o, fmt.Errorf("hotspot: %d regions is more than the %d a simulation takes", o.Regions, MaxRegions)
	case o.SamplesPerStep < 0 || o.QuerySamples < 0:
		return o, fmt.Errorf("hotspot: negative sample counts")
	case o.SamplesPerStep > MaxSamplesPerStep || o.QuerySamples > MaxSamplesPerStep:
		return o, fmt.Errorf("hotspot: %d samples per step is more than the %d a simulation takes",
			max(o.SamplesPerStep, o.QuerySamples), MaxSamplesPerStep)
	case int64(o.Duration/o.Step)*int64(o.SamplesPerStep) > maxDraws:
		return o, fmt.Errorf("hotspot: %d steps of %d samples is more than %d sampled writes: use fewer samples or longer steps",
			o.Duration/o.Step, o.SamplesPerStep, maxDraws)
	}
	return o, nil
}

// regionBound is the most regions alive at once in a run of steps steps
// that starts with initial regions; initial over it is an error.
func regionBound(initial, steps int) (int, error) {
	switch {
	case initial > MaxRegions:
		return 0, fmt.Errorf("hotspot: %d regions is more than the %d a simulation takes", initial, MaxRegions)
	case int64(initial)*int64(steps) > maxRegionSteps:
		return 0, fmt.Errorf("hotspot: %d regions over %d steps is more than %d region-steps: use fewer regions or longer steps",
			initial, steps, maxRegionSteps)
	}
	return max(initial, min(MaxRegions, maxRegionSteps/max(steps, 1))), nil
}
