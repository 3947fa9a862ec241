package hotspot

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	gpalette "gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The heat map is drawn by gonum's plot package: a HeatMap plotter for the
// regions over time and a ColorBar beside it, on one image canvas. The
// picture's size is fixed in pixels; where the plot area falls depends on
// the labels, so PNGLayout measures it from the same drawing.
const (
	heatW   = 1100 // pixels
	heatH   = 680
	heatDPI = 96
	// Bands, in pixels, above and below the plots for the captions.
	headerH = 64
	footerH = 26
	// The colour bar's column on the right, and its bar's width.
	barColumn = 110
	barWidth  = 22
)

// Layout says where the PNG's parts are, in pixels from the top left, for
// tests and for anyone cropping the image.
type Layout struct {
	Size   image.Point
	Plot   image.Rectangle
	Legend image.Rectangle
}

// PNGLayout is the geometry WritePNG draws res with.
func PNGLayout(res *Result) (Layout, error) {
	h, err := drawHeat(res)
	if err != nil {
		return Layout{}, err
	}
	return h.layout, nil
}

// WritePNG draws the heat map: time across, regions by start key down,
// load as colour on the viridis scale, with axes, a title, a colour bar
// and, where regions split, a note on how to read the rows.
func WritePNG(w io.Writer, res *Result) error {
	h, err := drawHeat(res)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: h.canvas}).WriteTo(w); err != nil {
		return fmt.Errorf("hotspot: encode png: %w", err)
	}
	return nil
}

type heatDrawing struct {
	canvas *vgimg.Canvas
	layout Layout
}

// px converts a length on the canvas to pixels.
func px(l vg.Length) int { return int(l.Dots(heatDPI) + 0.5) }

// fromPx converts pixels to a length on the canvas.
func fromPx(n int) vg.Length { return vg.Length(n) * vg.Inch / heatDPI }

func drawHeat(res *Result) (h heatDrawing, err error) {
	// gonum's plotters panic on inputs they cannot draw; a library returns
	// errors.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("hotspot: draw heat map of %s.%s: %v", res.Schema, res.Table, r)
		}
	}()
	g := newGrid(res)
	top := g.max
	if !(top > 0) {
		top = 1 // an idle table: everything in the coldest colour
	}

	img := vgimg.NewWith(vgimg.UseWH(fromPx(heatW), fromPx(heatH)), vgimg.UseDPI(heatDPI),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)

	// Captions, in the bands above and below the plots.
	caption := func(size vg.Length, c color.Color) draw.TextStyle {
		return text.Style{Color: c, Font: sans(size), Handler: plot.DefaultTextHandler, YAlign: draw.YTop}
	}
	dc.FillText(caption(17, ink), vg.Point{X: fromPx(16), Y: fromPx(heatH - 12)}, heatTitle(res))
	dc.FillText(caption(9.5, faint), vg.Point{X: fromPx(16), Y: fromPx(heatH - 40)}, heatSubtitle(res))
	switch {
	case !(g.max > 0):
		dc.FillText(caption(9, faint), vg.Point{X: fromPx(16), Y: fromPx(footerH - 6)}, idleNote(res))
	case res.Source == SourceSimulation && g.steps > 1 && res.Summary.Splits > 0:
		dc.FillText(caption(9, faint), vg.Point{X: fromPx(16), Y: fromPx(footerH - 6)}, splitNote)
	}

	// The plot area's size does not depend on the grid's resolution (the
	// axes span the same range), so a first plot measures it and the
	// second draws a grid of that many pixels.
	heatArea := draw.Crop(dc, fromPx(8), -fromPx(barColumn), fromPx(footerH), -fromPx(headerH))
	data := heatPlot(res, g, top, 0, 0).DataCanvas(heatArea)
	heat := heatPlot(res, g, top, px(data.Max.X)-px(data.Min.X), px(data.Max.Y)-px(data.Min.Y))
	heat.Draw(heatArea)

	// The colour bar spans the plot's height; its axis sits on its left,
	// so its column is as wide as that axis and the bar.
	bar := barPlot(res, top)
	column := draw.Crop(dc, 0, 0, 0, 0)
	column.Min.Y, column.Max.Y = data.Min.Y, data.Max.Y
	column.Max.X = dc.Max.X - fromPx(24)
	column.Min.X = column.Max.X - fromPx(barWidth)
	// Widen and heighten the column by what the bar's axis and the
	// padding for its tick labels take, so that the bar itself lines up.
	probe := bar.DataCanvas(column)
	column.Min.X -= probe.Min.X - column.Min.X
	column.Min.Y -= probe.Min.Y - column.Min.Y
	column.Max.Y += column.Max.Y - probe.Max.Y
	bar.Draw(column)
	barData := bar.DataCanvas(column)

	rect := func(c draw.Canvas) image.Rectangle {
		return image.Rect(px(c.Min.X), heatH-px(c.Max.Y), px(c.Max.X), heatH-px(c.Min.Y))
	}
	return heatDrawing{canvas: img, layout: Layout{
		Size:   image.Pt(heatW, heatH),
		Plot:   rect(data),
		Legend: rect(barData),
	}}, nil
}

// heatPlot is the regions-over-time plot: one cell per region row and step.
// cols and rows are the resolution of the drawn grid, at least the grid's.
func heatPlot(res *Result, g grid, top float64, cols, rows int) *plot.Plot {
	p := plot.New()
	styleAxes(p)
	hm := plotter.NewHeatMap(heatCells{g: g, res: res, cols: max(cols, g.steps, 1), rows: max(rows, len(g.rows), 1)}, (&viridis{min: 0, max: top}).Palette(256))
	hm.Min, hm.Max = 0, top
	// Drawn as one image: cells drawn as separate rectangles leave
	// anti-aliased seams between them. The image has a pixel for each of
	// the plot area's (see heatCells), so scaling it blurs nothing.
	hm.Rasterized = true
	p.Add(cellsOnly{hm})
	p.X.Padding, p.Y.Padding = 0, 0

	p.Y.Label.Text = "regions by start key"
	var ticks []plot.Tick
	if n := len(g.rows); n > 0 {
		every := max(1, (n+15)/16)
		for i := 0; i < n; i += every {
			ticks = append(ticks, plot.Tick{Value: float64(n - 1 - i), Label: rowLabel(g.rows[i])})
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)

	if res.Source == SourceStore || g.steps <= 1 {
		p.X.Label.Text = "observed (counts since each region opened)"
		p.X.Tick.Marker = plot.ConstantTicks(nil)
		return p
	}
	p.X.Label.Text = fmt.Sprintf("simulated time from %s", res.Start.UTC().Format("2006-01-02 15:04 UTC"))
	total := time.Duration(g.steps) * res.Step
	tick := timeTicks(total)
	var xt []plot.Tick
	for at := time.Duration(0); at <= total; at += tick {
		xt = append(xt, plot.Tick{Value: at.Seconds(), Label: shortDuration(at)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	return p
}

// barPlot is the colour bar: the scale from idle (bottom) to the busiest
// cell (top).
func barPlot(res *Result, top float64) *plot.Plot {
	p := plot.New()
	styleAxes(p)
	p.Add(&plotter.ColorBar{ColorMap: &viridis{min: 0, max: top}, Vertical: true, Colors: 256})
	p.HideX()
	p.Y.Padding = 0
	p.Y.Label.Text = res.Unit
	// Round values, labelled as the text report prints figures.
	p.Y.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ticks []plot.Tick
		for _, v := range scaleTicks(hi) {
			ticks = append(ticks, plot.Tick{Value: v, Label: num(v)})
		}
		return ticks
	})
	return p
}

// idleNote explains an all-dark map whose scale runs to an arbitrary 1.
func idleNote(res *Result) string {
	if res.Source == SourceStore {
		return "No requests were counted: every region is idle (a store counts requests from when its regions open)."
	}
	return "No requests were simulated: every region is idle."
}

// splitNote tells how to read the rows once regions have split.
const splitNote = "Rows are the regions at the end; before a split, a region spans the rows of the regions it split into."

var (
	ink   = color.RGBA{20, 20, 20, 255}
	faint = color.RGBA{100, 100, 100, 255}
)

func sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// styleAxes sets the plot's text in a sans-serif face (gonum's default is
// a serif one) at sizes that read at the picture's resolution.
func styleAxes(p *plot.Plot) {
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = sans(11)
		ax.Label.TextStyle.Color = ink
		ax.Tick.Label.Font = sans(9)
		ax.Tick.Label.Color = ink
	}
}

// heatCells is the grid as gonum's HeatMap reads it, at a resolution of
// cols x rows (the plot area's pixels): X runs over the simulated time in
// seconds, Y over the grid's rows counted from the bottom, so the first
// region (row 0 of the grid) is drawn at the top. Column c falls in step
// c*steps/cols, row r in grid row r*len(rows)/rows from the bottom.
type heatCells struct {
	g          grid
	res        *Result
	cols, rows int
}

func (h heatCells) Dims() (c, r int) { return h.cols, h.rows }

func (h heatCells) Z(c, r int) float64 {
	n := len(h.g.rows)
	if h.g.steps == 0 || n == 0 {
		return 0
	}
	return h.g.value(c*h.g.steps/h.cols, n-1-r*n/h.rows)
}

func (h heatCells) X(c int) float64 {
	step := h.res.Step.Seconds()
	if step <= 0 {
		step = 1
	}
	return (float64(c) + 0.5) * step * float64(max(h.g.steps, 1)) / float64(h.cols)
}

func (h heatCells) Y(r int) float64 {
	n := max(len(h.g.rows), 1)
	return (float64(r)+0.5)*float64(n)/float64(h.rows) - 0.5
}

// cellsOnly is a HeatMap that asks for no room around its cells: gonum
// pads the plot area by a box around every cell's middle, which at a cell
// per pixel would leave a margin inside the axes (and cost a box a pixel).
type cellsOnly struct{ *plotter.HeatMap }

func (cellsOnly) GlyphBoxes(*plot.Plot) []plot.GlyphBox { return nil }

// viridis is the colour scale as a gonum colour map over [min, max].
type viridis struct {
	min, max float64
}

func (v *viridis) At(x float64) (color.Color, error) {
	if x < v.min || x > v.max {
		return nil, fmt.Errorf("hotspot: %g outside the colour scale [%g, %g]", x, v.min, v.max)
	}
	return colourAt((x - v.min) / (v.max - v.min)), nil
}
func (v *viridis) Max() float64     { return v.max }
func (v *viridis) SetMax(x float64) { v.max = x }
func (v *viridis) Min() float64     { return v.min }
func (v *viridis) SetMin(x float64) { v.min = x }
func (v *viridis) Alpha() float64   { return 1 }

// SetAlpha is a no-op: the scale is always opaque.
func (v *viridis) SetAlpha(float64) {}

// Palette returns n colours evenly spaced along the scale.
func (v *viridis) Palette(n int) gpalette.Palette {
	p := make(colours, n)
	for i := range p {
		p[i] = colourAt(float64(i) / float64(max(n-1, 1)))
	}
	return p
}

type colours []color.Color

func (p colours) Colors() []color.Color { return p }
