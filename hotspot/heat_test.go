package hotspot

import (
	"bytes"
	"context"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
	"github.com/denorm/denorm/store/pebble"
)

// inked counts the pixels of r that are not the white background.
func inked(img image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if !near(img.At(x, y), color.White, 0) {
				n++
			}
		}
	}
	return n
}

func near(a, b color.Color, tol int) bool {
	r1, g1, b1, _ := a.RGBA()
	r2, g2, b2, _ := b.RGBA()
	d := func(x, y uint32) bool { return abs(int(x>>8)-int(y>>8)) <= tol }
	return d(r1, r2) && d(g1, g2) && d(b1, b2)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// The heat map's plot area holds, at the middle of every cell, the colour
// of that region's load at that step on the viridis scale; the colour bar
// runs from the coldest colour at the bottom to the hottest at the top; and
// there is text where the captions and axes are.
func TestPNG(t *testing.T) {
	res := simulate(t, example(t, "device_events_naive.yaml"), Options{Seed: 2, Duration: 6 * time.Hour})
	var buf bytes.Buffer
	if err := WritePNG(&buf, res); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	lay, err := PNGLayout(res)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Size() != lay.Size || lay.Size != image.Pt(1100, 680) {
		t.Fatalf("size %v (layout says %v), want 1100x680", img.Bounds().Size(), lay.Size)
	}
	if !lay.Plot.In(img.Bounds()) || lay.Plot.Dx() < 600 || lay.Plot.Dy() < 400 {
		t.Fatalf("plot area %v: not a large part of %v", lay.Plot, img.Bounds())
	}
	g := newGrid(res)
	if g.steps < 2 || len(g.rows) < 2 {
		t.Fatalf("grid of %d steps x %d rows: too small to test", g.steps, len(g.rows))
	}
	cw := float64(lay.Plot.Dx()) / float64(g.steps)
	rh := float64(lay.Plot.Dy()) / float64(len(g.rows))
	hot, cold, bad := 0, 0, 0
	for s := range g.steps {
		for i := range g.rows {
			x := lay.Plot.Min.X + int((float64(s)+0.5)*cw)
			y := lay.Plot.Min.Y + int((float64(i)+0.5)*rh)
			f := g.value(s, i) / g.max
			want := colourAt(f)
			if got := img.At(x, y); !near(got, want, 3) {
				if bad++; bad <= 5 {
					t.Errorf("step %d row %d (pixel %d,%d): colour %v, want %v for %.3f of the scale", s, i, x, y, got, want, f)
				}
			}
			switch {
			case f == 1:
				hot++
			case f < 0.05:
				cold++
			}
		}
	}
	if hot == 0 || cold == 0 {
		t.Errorf("%d hottest and %d cold cells: the test map should have both", hot, cold)
	}
	// The time-led key: at the end the hot region is the last one (bottom
	// right); the first region has long gone cold (top right).
	if c := img.At(lay.Plot.Max.X-3, lay.Plot.Max.Y-3); !near(c, colourAt(1), 3) {
		t.Errorf("bottom right of the plot is %v, want the hottest colour", c)
	}
	if c := img.At(lay.Plot.Max.X-3, lay.Plot.Min.Y+3); !near(c, colourAt(0), 8) {
		t.Errorf("top right of the plot is %v, want about the coldest colour %v", c, colourAt(0))
	}
	mid := (lay.Legend.Min.X + lay.Legend.Max.X) / 2
	if c := img.At(mid, lay.Legend.Min.Y+2); !near(c, colourAt(1), 4) {
		t.Errorf("top of the colour bar is %v, want the hottest colour", c)
	}
	if c := img.At(mid, lay.Legend.Max.Y-3); !near(c, colourAt(0), 4) {
		t.Errorf("bottom of the colour bar is %v, want the coldest colour", c)
	}
	if lay.Legend.Min.X <= lay.Plot.Max.X || lay.Legend.Dy() != lay.Plot.Dy() {
		t.Errorf("colour bar %v should stand right of the plot %v, as tall", lay.Legend, lay.Plot)
	}
	// Text: the title band, the key labels left of the plot, the time
	// labels below it, the scale left of the colour bar.
	for name, r := range map[string]image.Rectangle{
		"title":      image.Rect(0, 0, lay.Size.X, lay.Plot.Min.Y-4),
		"key labels": image.Rect(0, lay.Plot.Min.Y, lay.Plot.Min.X-2, lay.Plot.Max.Y),
		"time axis":  image.Rect(lay.Plot.Min.X, lay.Plot.Max.Y+2, lay.Plot.Max.X, lay.Size.Y),
		"scale":      image.Rect(lay.Plot.Max.X+4, lay.Plot.Min.Y, lay.Legend.Min.X-1, lay.Plot.Max.Y),
	} {
		if inked(img, r) < 100 {
			t.Errorf("%s: next to nothing drawn in %v", name, r)
		}
	}
}

// wellFormed reads a whole page with an XML decoder in strict mode.
func wellFormed(t *testing.T, page string) map[string]int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Entity = xml.HTMLEntity
	tags := map[string]int{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return tags
		}
		if err != nil {
			t.Fatalf("page does not parse: %v", err)
		}
		if s, ok := tok.(xml.StartElement); ok {
			tags[s.Name.Local]++
		}
	}
}

func TestHTML(t *testing.T) {
	res := simulate(t, example(t, "device_events_naive.yaml"), Options{Seed: 2, Duration: 3 * time.Hour})
	var b strings.Builder
	if err := WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	tags := wellFormed(t, b.String())
	for _, tag := range []string{"html", "svg", "linearGradient", "table"} {
		if tags[tag] == 0 {
			t.Errorf("no <%s>", tag)
		}
	}
	if tags["rect"] < len(res.Steps) {
		t.Errorf("%d rects for %d steps", tags["rect"], len(res.Steps))
	}
	if strings.Contains(b.String(), "<script") || strings.Contains(b.String(), "http://") && !strings.Contains(b.String(), "http://www.w3.org/2000/svg") {
		t.Error("the page loads something from elsewhere")
	}
}

// Observed counts from a live (embedded) store: rows written under a key
// with a time prefix all land in the last region, and FromStore says so.
func TestFromStore(t *testing.T) {
	ctx := context.Background()
	st, err := pebble.Open(ctx, t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spec := store.TableSpec{Name: "ev", Families: []store.FamilySpec{{Name: "d"}}, SplitKeys: [][]byte{[]byte("b"), []byte("c"), []byte("d")}}
	if err := st.CreateTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	put := func(row string) {
		m := store.RowMutation{Row: []byte(row), Mutations: []store.Mutation{{Kind: store.Put, Family: "d", Qualifier: []byte("q"), Timestamp: 1, Value: []byte("v")}}}
		if err := st.Mutate(ctx, "ev", m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 90 {
		put("d" + string(rune('a'+i%26)))
	}
	for _, r := range []string{"a1", "b1", "c1", "d1", "a2", "b2", "c2", "d2", "a3", "b3"} {
		put(r)
	}
	regions, err := st.Regions(ctx, "ev")
	if err != nil {
		t.Fatal(err)
	}
	res := FromStore("test", "ev", []string{"k"}, regions)
	w := res.Summary.Writes.Typical
	if w.HalfLoadRegions != 1 || w.BusiestShare < 0.9 || w.BusiestShare > 0.95 {
		t.Fatalf("observed: busiest share %.3f, %d regions take half; want 92/100 on one", w.BusiestShare, w.HalfLoadRegions)
	}
	var buf bytes.Buffer
	if err := WritePNG(&buf, res); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteText(&text, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "observed") {
		t.Errorf("text does not say the counts were observed:\n%s", text.String())
	}
}
