package hotspot

import (
	"math"
	"sort"
)

// figuresOf measures a set of region loads.
func figuresOf(loads []float64) Figures {
	var f Figures
	if len(loads) == 0 {
		return f
	}
	sorted := append([]float64(nil), loads...)
	sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	if sum <= 0 {
		return f
	}
	f.BusiestShare = sorted[0] / sum
	f.MaxOverMean = sorted[0] / (sum / float64(len(sorted)))
	var run float64
	for i, v := range sorted {
		run += v
		if run >= sum/2 {
			f.HalfLoadRegions = i + 1
			break
		}
	}
	return f
}

// noiseMaxOverMean is the max over mean that n samples spread perfectly
// evenly over r regions show from sampling alone: each region's count is
// binomial with relative spread sqrt((r-1)/n), and the expected largest of
// r roughly normal draws sits z spreads above the mean, z from Blom's
// approximation of normal order statistics.
func noiseMaxOverMean(n, r int) float64 {
	if n <= 0 || r <= 1 {
		return 1
	}
	p := (float64(r) - 0.375) / (float64(r) + 0.25)
	z := math.Sqrt2 * math.Erfinv(2*p-1)
	return 1 + z*math.Sqrt(float64(r-1)/float64(n))
}

// summarize fills the steps' figures and the summary.
func summarize(res *Result) {
	nsteps := len(res.Steps)
	busiest := map[int]bool{}
	writeLoad := func(r *Region, s int) float64 {
		if !r.Alive(s) || s-r.Born >= len(r.Writes) {
			return 0
		}
		return r.Writes[s-r.Born]
	}
	for s := range nsteps {
		var loads, writes []float64
		st := &res.Steps[s]
		best, bestID := -1.0, -1
		for _, r := range res.Regions {
			if !r.Alive(s) || s-r.Born >= len(r.Writes) {
				continue
			}
			l := r.Load(s)
			loads = append(loads, l)
			writes = append(writes, writeLoad(r, s))
			st.Writes += r.Writes[s-r.Born]
			st.Reads += r.Reads[s-r.Born]
			if l > best {
				best, bestID = l, r.ID
			}
		}
		st.Regions = len(loads)
		st.Figures = figuresOf(loads)
		st.WriteFigures = figuresOf(writes)
		st.Busiest = bestID
		if best > 0 {
			busiest[bestID] = true
		}
	}
	sm := &res.Summary
	sm.DistinctBusiest = len(busiest)
	if nsteps == 0 {
		return
	}
	sm.StartRegions = res.Steps[0].Regions
	sm.EndRegions = res.Steps[nsteps-1].Regions
	for _, r := range res.Regions {
		if r.Died >= 0 {
			sm.Splits++
		}
	}
	sm.Requests = spreadOf(res, func(st Step) Figures { return st.Figures })
	sm.Writes = spreadOf(res, func(st Step) Figures { return st.WriteFigures })
	regions := make([]float64, nsteps)
	for s, st := range res.Steps {
		regions[s] = float64(st.Regions)
	}
	if res.Source == SourceSimulation {
		sm.NoiseMaxOverMean = noiseMaxOverMean(res.SamplesPerStep, int(median(regions)))
	}
}

func spreadOf(res *Result, fig func(Step) Figures) Spread {
	var sp Spread
	n := len(res.Steps)
	shares, mom, halves := make([]float64, n), make([]float64, n), make([]float64, n)
	sp.Worst.HalfLoadRegions = math.MaxInt
	for s, st := range res.Steps {
		f := fig(st)
		shares[s], mom[s], halves[s] = f.BusiestShare, f.MaxOverMean, float64(f.HalfLoadRegions)
		sp.Worst.BusiestShare = max(sp.Worst.BusiestShare, f.BusiestShare)
		sp.Worst.MaxOverMean = max(sp.Worst.MaxOverMean, f.MaxOverMean)
		if f.HalfLoadRegions > 0 {
			sp.Worst.HalfLoadRegions = min(sp.Worst.HalfLoadRegions, f.HalfLoadRegions)
		}
	}
	if sp.Worst.HalfLoadRegions == math.MaxInt {
		sp.Worst.HalfLoadRegions = 0
	}
	sp.Typical = Figures{BusiestShare: median(shares), MaxOverMean: median(mom), HalfLoadRegions: int(math.Round(median(halves)))}
	return sp
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
