package hotspot

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"time"
)

// Heat map geometry, in pixels. The plot sits between the key labels on
// the left and the colour bar on the right.
const (
	heatW       = 1100
	heatH       = 680
	plotLeft    = 210
	plotTop     = 86
	plotRight   = heatW - 170
	plotBottom  = heatH - 70
	legendLeft  = plotRight + 40
	legendWidth = 24
)

// Layout exposes where the PNG's parts are, for tests and for anyone
// cropping the image.
type Layout struct {
	Size   image.Point
	Plot   image.Rectangle
	Legend image.Rectangle
}

// PNGLayout is the geometry WritePNG draws with.
func PNGLayout() Layout {
	return Layout{
		Size:   image.Pt(heatW, heatH),
		Plot:   image.Rect(plotLeft, plotTop, plotRight, plotBottom),
		Legend: image.Rect(legendLeft, plotTop, legendLeft+legendWidth, plotBottom),
	}
}

var (
	background = color.RGBA{255, 255, 255, 255}
	ink        = color.RGBA{20, 20, 20, 255}
	faint      = color.RGBA{110, 110, 110, 255}
)

// WritePNG draws the heat map: time across, regions by start key down,
// load as colour, with axes, labels, a title and a colour-bar legend.
func WritePNG(w io.Writer, res *Result) error {
	g := newGrid(res)
	f := parseFont()
	img := image.NewRGBA(image.Rect(0, 0, heatW, heatH))
	draw.Draw(img, img.Bounds(), &image.Uniform{background}, image.Point{}, draw.Src)

	f.drawText(img, 16, 14, heatTitle(res), 2, ink)
	f.drawText(img, 16, 44, heatSubtitle(res), 1, faint)

	pw, ph := plotRight-plotLeft, plotBottom-plotTop
	if g.steps > 0 && len(g.rows) > 0 && g.max > 0 {
		for x := range pw {
			s := x * g.steps / pw
			for y := range ph {
				row := y * len(g.rows) / ph
				img.SetRGBA(plotLeft+x, plotTop+y, colourAt(g.value(s, row)/g.max))
			}
		}
	} else {
		draw.Draw(img, image.Rect(plotLeft, plotTop, plotRight, plotBottom), &image.Uniform{colourAt(0)}, image.Point{}, draw.Src)
	}
	frame(img, image.Rect(plotLeft-1, plotTop-1, plotRight+1, plotBottom+1), ink)

	// Key axis: the start keys of evenly spaced rows.
	f.drawText(img, 16, plotTop-16, "regions by start key", 1, ink)
	if n := len(g.rows); n > 0 {
		every := max(1, (n+15)/16)
		for i := 0; i < n; i += every {
			y := plotTop + (2*i+1)*ph/(2*n)
			hline(img, plotLeft-5, plotLeft-1, y, ink)
			label := rowLabel(g.rows[i])
			f.drawText(img, plotLeft-8-textWidth(label, 1), y-glyphH/2, label, 1, ink)
		}
	}

	// Time axis.
	if res.Source == SourceStore || g.steps <= 1 {
		label := "observed"
		f.drawText(img, plotLeft+(pw-textWidth(label, 1))/2, plotBottom+8, label, 1, ink)
	} else {
		tick := timeTicks(res.Duration)
		for at := time.Duration(0); at <= res.Duration; at += tick {
			x := plotLeft + int(float64(pw)*float64(at)/float64(res.Duration))
			vline(img, x, plotBottom+1, plotBottom+5, ink)
			label := shortDuration(at)
			f.drawText(img, x-textWidth(label, 1)/2, plotBottom+9, label, 1, ink)
		}
		label := fmt.Sprintf("simulated time from %s", res.Start.UTC().Format("2006-01-02 15:04 UTC"))
		f.drawText(img, plotLeft+(pw-textWidth(label, 2))/2, plotBottom+28, label, 2, ink)
		if len(g.rows) > g.steps || res.Summary.Splits > 0 {
			note := "Rows are the regions at the end; before a split, a region spans the rows of the regions it split into."
			f.drawText(img, 16, heatH-14, note, 1, faint)
		}
	}

	// Legend: the colour bar, busiest at the top, with its scale.
	for y := range ph {
		c := colourAt(1 - float64(y)/float64(ph-1))
		for x := range legendWidth {
			img.SetRGBA(legendLeft+x, plotTop+y, c)
		}
	}
	frame(img, image.Rect(legendLeft-1, plotTop-1, legendLeft+legendWidth+1, plotBottom+1), ink)
	f.drawText(img, legendLeft-10, plotTop-16, res.Unit, 1, ink)
	for i := 0; i <= 4; i++ {
		y := plotBottom - 1 - i*(ph-1)/4
		hline(img, legendLeft+legendWidth+1, legendLeft+legendWidth+5, y, ink)
		f.drawText(img, legendLeft+legendWidth+8, y-glyphH/2, num(g.max*float64(i)/4), 1, ink)
	}

	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("hotspot: encode png: %w", err)
	}
	return nil
}

func hline(img *image.RGBA, x0, x1, y int, c color.RGBA) {
	for x := x0; x <= x1; x++ {
		img.SetRGBA(x, y, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.RGBA) {
	for y := y0; y <= y1; y++ {
		img.SetRGBA(x, y, c)
	}
}

func frame(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	hline(img, r.Min.X, r.Max.X-1, r.Min.Y, c)
	hline(img, r.Min.X, r.Max.X-1, r.Max.Y-1, c)
	vline(img, r.Min.X, r.Min.Y, r.Max.Y-1, c)
	vline(img, r.Max.X-1, r.Min.Y, r.Max.Y-1, c)
}
