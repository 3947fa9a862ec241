package hotspot

import "time"

// Result is a simulation (or an observation of a live store) of one table.
// Its JSON form is stable: fields are only ever added.
type Result struct {
	Schema string   `json:"schema"`
	Table  string   `json:"table"`
	Key    []string `json:"rowkey"`
	// Source is "simulation", or "store" for counts read from a live store.
	Source string `json:"source"`
	// Unit is what the region figures count: "requests/s" for a simulation,
	// "requests" (cumulative since each region opened) for a store.
	Unit string `json:"unit"`
	// Layout says how the table's regions started.
	Layout string `json:"layout"`

	// Start, Duration and Step are absent for a store.
	Start    time.Time     `json:"start,omitzero"`
	Duration time.Duration `json:"duration_ns,omitzero"`
	Step     time.Duration `json:"step_ns,omitzero"`
	Seed     uint64        `json:"seed"`

	WritesPerSecond float64 `json:"writes_per_second"`
	ReadsPerSecond  float64 `json:"reads_per_second"`
	SamplesPerStep  int     `json:"samples_per_step"`
	BytesPerRow     float64 `json:"bytes_per_row"`
	// SplitSize is the region size, in bytes, past which a region splits;
	// SplitScale is how many times smaller it is than the schema's
	// region_max_filesize (or HBase's 10 GiB default), so that splits
	// happen within a short simulation. 0 when regions do not split.
	SplitSize  int64   `json:"split_size"`
	SplitScale float64 `json:"split_scale"`

	Regions []*Region `json:"regions"`
	Steps   []Step    `json:"steps"`
	Summary Summary   `json:"summary"`
	// Notes are assumptions the simulation had to make.
	Notes []string `json:"notes"`
}

// Region is one region over its life: from the step it was created in to
// the step at whose end it split (or the last step).
type Region struct {
	ID     int    `json:"id"`
	Start  []byte `json:"start"` // base64 in JSON; StartKey is the printable form
	End    []byte `json:"end"`   // empty: the end of the table
	Parent int    `json:"parent"`
	// StartKey and EndKey are the keys as the HBase shell prints them.
	StartKey string `json:"start_key"`
	EndKey   string `json:"end_key"`
	// Label reads the start key back into field values where it is a whole
	// key ("ts=2026-01-01 03:00:00"); empty otherwise.
	Label string `json:"label,omitempty"`
	Born  int    `json:"born_step"`
	// Died is the step at whose end the region split; -1 while it lives.
	Died int `json:"split_step"`
	// Per step from Born: writes and reads in Result.Unit, and the size in
	// bytes at the end of the step.
	Writes []float64 `json:"writes"`
	Reads  []float64 `json:"reads"`
	Bytes  []float64 `json:"bytes"`
}

// Alive reports whether the region served step s.
func (r *Region) Alive(s int) bool { return s >= r.Born && (r.Died < 0 || s <= r.Died) }

// Load is the region's writes plus reads at step s (0 when not alive).
func (r *Region) Load(s int) float64 {
	if !r.Alive(s) || s-r.Born >= len(r.Writes) {
		return 0
	}
	return r.Writes[s-r.Born] + r.Reads[s-r.Born]
}

// Step is one time step's figures over the regions alive in it.
type Step struct {
	At      time.Duration `json:"at_ns"` // from Result.Start
	Regions int           `json:"regions"`
	Writes  float64       `json:"writes"`
	Reads   float64       `json:"reads"`
	// Figures are over all requests (writes and reads); WriteFigures over
	// writes alone.
	Figures
	WriteFigures Figures `json:"write_figures"`
	Busiest      int     `json:"busiest_region"` // region ID, by all requests
}

// Figures measure how evenly load falls on regions.
type Figures struct {
	// BusiestShare is the busiest region's share of the load (0..1).
	BusiestShare float64 `json:"busiest_share"`
	// MaxOverMean is the busiest region's load over the mean region's: 1 is
	// a perfect spread, the region count is everything on one region.
	MaxOverMean float64 `json:"max_over_mean"`
	// HalfLoadRegions is the fewest regions that together take half the
	// load.
	HalfLoadRegions int `json:"half_load_regions"`
}

// Summary condenses the steps.
type Summary struct {
	StartRegions int `json:"start_regions"`
	EndRegions   int `json:"end_regions"`
	Splits       int `json:"splits"`
	// Requests are the figures over all requests, Writes over writes
	// alone.
	Requests Spread `json:"requests"`
	Writes   Spread `json:"writes"`
	// NoiseMaxOverMean is the max over mean a perfectly even spread would
	// show at the median step from sampling alone: a typical figure close
	// to it means no measurable skew.
	NoiseMaxOverMean float64 `json:"noise_max_over_mean"`
	// DistinctBusiest counts the regions that were the busiest one at some
	// step: a hot spot that moves as it splits has several.
	DistinctBusiest int `json:"distinct_busiest"`
}

// Spread condenses one kind of figure over the steps.
type Spread struct {
	// Typical is the median over steps of each figure; Worst the worst
	// step's (highest share and max over mean, fewest half-load regions).
	Typical Figures `json:"typical"`
	Worst   Figures `json:"worst"`
}
