package hotspot

import (
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"gonum.org/v1/plot"
)

// WriteHTML writes a self-contained page: the heat map as inline SVG (a
// tooltip on each cell names the region and its load), the colour bar,
// and the summary table. The page is well-formed XML as well as HTML, so
// any parser reads it.
func WriteHTML(w io.Writer, res *Result) error {
	g := newGrid(res)
	sm := res.Summary
	esc := html.EscapeString
	var b strings.Builder
	const (
		left, top, pw, ph = 190, 30, 800, 480
		barX, barW        = left + pw + 40, 20
		width, height     = barX + 120, top + ph + 60
	)
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(heatTitle(res)))
	b.WriteString("<style>body{font-family:sans-serif;margin:1.5em}svg{max-width:100%;height:auto}svg text{font-size:12px;font-family:sans-serif}svg rect{shape-rendering:crispEdges}" +
		"table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}th:first-child,td:first-child{text-align:left}</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%s</p>\n", esc(heatTitle(res)), esc(heatSubtitle(res)))
	b.WriteString("<p>Point at a cell for its region and load.</p>\n")
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", width, height, width, height)
	fmt.Fprintf(&b, "<text x=\"4\" y=\"%d\">regions by start key</text>\n", top-10)

	if g.steps > 0 && len(g.rows) > 0 {
		cw := float64(pw) / float64(g.steps)
		rh := float64(ph) / float64(len(g.rows))
		for s := range g.steps {
			// One rectangle per region and step: a region spans the rows
			// of the regions it later splits into.
			for i := 0; i < len(g.rows); {
				j := i
				for j < len(g.rows) && g.owner[s][j] == g.owner[s][i] {
					j++
				}
				v := g.value(s, i)
				frac := 0.0
				if g.max > 0 {
					frac = v / g.max
				}
				c := colourAt(frac)
				tip := fmt.Sprintf("%s: %s %s", shortDuration(time.Duration(s)*res.Step), num(v), res.Unit)
				if r := g.owner[s][i]; r != nil && r.Label != "" {
					tip = fmt.Sprintf("region %d from %s at %s", r.ID, r.Label, tip)
				} else if r != nil {
					tip = fmt.Sprintf("region %d [%s, %s) at %s", r.ID, r.StartKey, r.EndKey, tip)
				}
				fmt.Fprintf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#%02x%02x%02x\"><title>%s</title></rect>\n",
					left+float64(s)*cw, top+float64(i)*rh, cw+0.3, float64(j-i)*rh+0.3, c.R, c.G, c.B, esc(tip))
				i = j
			}
		}
		every := max(1, (len(g.rows)+15)/16)
		for i := 0; i < len(g.rows); i += every {
			y := top + (float64(i)+0.5)*rh
			fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#222\"/>\n", left-4, y, left, y)
			fmt.Fprintf(&b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" dominant-baseline=\"middle\">%s</text>\n", left-6, y, esc(rowLabel(g.rows[i])))
		}
	}
	fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#222\"/>\n", left, top, pw, ph)
	if res.Source == SourceSimulation && g.steps > 1 {
		tick := timeTicks(res.Duration)
		for at := time.Duration(0); at <= res.Duration; at += tick {
			x := left + float64(pw)*float64(at)/float64(res.Duration)
			fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>\n", x, top+ph, x, top+ph+4)
			fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, top+ph+18, esc(shortDuration(at)))
		}
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">simulated time from %s</text>\n",
			left+pw/2, top+ph+40, esc(res.Start.UTC().Format("2006-01-02 15:04 UTC")))
	}

	// The colour bar, busiest at the top.
	b.WriteString("<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n")
	for i := range colourStops {
		c := colourStops[i]
		fmt.Fprintf(&b, "<stop offset=\"%.2f\" stop-color=\"#%02x%02x%02x\"/>\n", float64(i)/float64(len(colourStops)-1), c.R, c.G, c.B)
	}
	b.WriteString("</linearGradient></defs>\n")
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\">%s</text>\n", barX-10, top-10, esc(res.Unit))
	fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#scale)\" stroke=\"#222\"/>\n", barX, top, barW, ph)
	for _, v := range scaleTicks(g.max) {
		y := float64(top+ph) - v/g.max*float64(ph)
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#222\"/>\n", barX+barW, y, barX+barW+4, y)
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%.1f\" dominant-baseline=\"middle\">%s</text>\n", barX+barW+7, y, esc(num(v)))
	}
	b.WriteString("</svg>\n")
	switch {
	case !(g.max > 0):
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(idleNote(res)))
	case res.Source == SourceSimulation && g.steps > 1 && sm.Splits > 0:
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(splitNote))
	}

	b.WriteString("<table>\n<tr><th>load spread</th><th>typical step</th><th>worst step</th></tr>\n")
	for _, k := range []struct {
		name string
		sp   Spread
	}{{"writes", sm.Writes}, {"all requests", sm.Requests}} {
		fmt.Fprintf(&b, "<tr><td>%s: busiest region's share</td><td>%s</td><td>%s</td></tr>\n", k.name,
			pct(k.sp.Typical.BusiestShare), pct(k.sp.Worst.BusiestShare))
		fmt.Fprintf(&b, "<tr><td>%s: max over mean</td><td>%.2f</td><td>%.2f</td></tr>\n", k.name,
			k.sp.Typical.MaxOverMean, k.sp.Worst.MaxOverMean)
		fmt.Fprintf(&b, "<tr><td>%s: regions taking half</td><td>%d</td><td>%d</td></tr>\n", k.name,
			k.sp.Typical.HalfLoadRegions, k.sp.Worst.HalfLoadRegions)
	}
	b.WriteString("</table>\n")
	fmt.Fprintf(&b, "<p>Regions: %s; %d at start, %d at end, %d splits.", esc(res.Layout), sm.StartRegions, sm.EndRegions, sm.Splits)
	if res.Source == SourceSimulation {
		fmt.Fprintf(&b, " An even spread would show a max over mean near %.2f from sampling alone.", sm.NoiseMaxOverMean)
	}
	b.WriteString("</p>\n")
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "<p>Note: %s</p>\n", esc(n))
	}
	b.WriteString("</body>\n</html>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("hotspot: write html: %w", err)
	}
	return nil
}

// scaleTicks are round values on a colour scale from 0 to top (none when
// top is not positive), as gonum picks them for the PNG's colour bar.
func scaleTicks(top float64) []float64 {
	if !(top > 0) {
		return nil
	}
	var vs []float64
	for _, t := range (plot.DefaultTicks{}).Ticks(0, top) {
		if t.Label != "" && t.Value >= 0 && t.Value <= top {
			vs = append(vs, t.Value)
		}
	}
	return vs
}
