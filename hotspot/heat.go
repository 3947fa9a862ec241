package hotspot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"
	"time"
)

// grid is what a heat map draws: rows are the regions that exist at the
// end, in key order; a row's cell at a step is the load of the region that
// held that row's keys then (its ancestor before a split), so a hot region
// shows as one band that narrows as it splits.
type grid struct {
	rows  []*Region
	steps int
	// owner[s][i] is the region serving row i at step s.
	owner [][]*Region
	max   float64
}

func newGrid(res *Result) grid {
	g := grid{steps: len(res.Steps)}
	for _, r := range res.Regions {
		if r.Died < 0 {
			g.rows = append(g.rows, r)
		}
	}
	byStart := func(rs []*Region) {
		sort.Slice(rs, func(i, j int) bool { return bytes.Compare(rs[i].Start, rs[j].Start) < 0 })
	}
	byStart(g.rows)
	g.owner = make([][]*Region, g.steps)
	for s := range g.steps {
		var alive []*Region
		for _, r := range res.Regions {
			if r.Alive(s) {
				alive = append(alive, r)
			}
		}
		byStart(alive)
		own := make([]*Region, len(g.rows))
		for i, row := range g.rows {
			j := sort.Search(len(alive), func(k int) bool { return bytes.Compare(alive[k].Start, row.Start) > 0 }) - 1
			if j >= 0 {
				own[i] = alive[j]
				g.max = math.Max(g.max, alive[j].Load(s))
			}
		}
		g.owner[s] = own
	}
	return g
}

func (g grid) value(s, row int) float64 {
	if r := g.owner[s][row]; r != nil {
		return r.Load(s)
	}
	return 0
}

// colourStops approximate the viridis scale: dark for idle, yellow for the
// busiest, readable in grey and by most colour-blind readers.
var colourStops = [...]color.RGBA{
	{68, 1, 84, 255},
	{59, 82, 139, 255},
	{33, 145, 140, 255},
	{94, 201, 98, 255},
	{253, 231, 37, 255},
}

// colourAt maps a fraction of the scale (0..1) to a colour.
func colourAt(f float64) color.RGBA {
	if math.IsNaN(f) || f <= 0 {
		return colourStops[0]
	}
	if f >= 1 {
		return colourStops[len(colourStops)-1]
	}
	pos := f * float64(len(colourStops)-1)
	i := int(pos)
	t := pos - float64(i)
	a, b := colourStops[i], colourStops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + t*(float64(y)-float64(x)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
}

// timeTicks picks a round tick interval giving at most about eight ticks.
func timeTicks(total time.Duration) time.Duration {
	for _, d := range []time.Duration{
		time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
	} {
		if total/d <= 8 {
			return d
		}
	}
	return total / 8
}

// shortDuration prints 90m as "1h30m" and 6h as "6h".
func shortDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// heatTitle and heatSubtitle are the captions of both renderings.
func heatTitle(res *Result) string {
	return fmt.Sprintf("%s.%s: %s per region", res.Schema, res.Table, res.Unit)
}

func heatSubtitle(res *Result) string {
	sm := res.Summary
	if res.Source == SourceStore {
		return fmt.Sprintf("rowkey [%s]; observed on a live store; busiest region %s of requests, max/mean %.2f",
			strings.Join(res.Key, ", "), pct(sm.Requests.Typical.BusiestShare), sm.Requests.Typical.MaxOverMean)
	}
	return fmt.Sprintf("rowkey [%s]; %s simulated, step %s; writes at a typical step: busiest region %s, max/mean %.2f, half on %d region(s)",
		strings.Join(res.Key, ", "), shortDuration(res.Duration), shortDuration(res.Step),
		pct(sm.Writes.Typical.BusiestShare), sm.Writes.Typical.MaxOverMean, sm.Writes.Typical.HalfLoadRegions)
}

func rowLabel(r *Region) string {
	if len(r.Start) == 0 {
		return "(first region)"
	}
	if l := r.Label; l != "" {
		// Whole fields only: drop trailing ones that do not fit.
		for len(l) > 30 && strings.LastIndexByte(l, ' ') > 0 {
			l = l[:strings.LastIndexByte(l, ' ')]
		}
		return clip(l, 30, "")
	}
	return clip(visible(r.StartKey), 26, "")
}
