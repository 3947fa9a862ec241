package hotspot

import (
	"bytes"
	"context"
	"encoding/binary"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/store"
)

// Every table of every example simulates: counter tables, one row per
// child element, partial (when) tables, salted and hashed keys.
func TestEveryExampleTable(t *testing.T) {
	for _, name := range []string{"orders.yaml", "orders_naive.yaml", "device_events.yaml", "device_events_naive.yaml"} {
		p := example(t, name)
		for _, tb := range p.Tables {
			res, err := Simulate(context.Background(), p, Options{Table: tb.Name, Duration: time.Hour, Step: 20 * time.Minute, SamplesPerStep: 300, QuerySamples: 20})
			if err != nil {
				t.Errorf("%s %s: %v", name, tb.Name, err)
				continue
			}
			if len(res.Steps) != 3 || res.Summary.StartRegions < 1 {
				t.Errorf("%s %s: %d steps, %d regions", name, tb.Name, len(res.Steps), res.Summary.StartRegions)
			}
			var b strings.Builder
			if err := WriteHTML(&b, res); err != nil {
				t.Fatal(err)
			}
			wellFormed(t, b.String())
		}
	}
}

// FuzzFromStore feeds region lists as a store might report them (any key
// bytes, any counts) through the summary and both heat maps: no panic, a
// PNG that decodes, and a page that parses.
func FuzzFromStore(f *testing.F) {
	f.Add([]byte("b\x00c\xffd"), []byte{0, 0, 0, 5, 0, 0, 0, 9})
	f.Add([]byte{}, []byte{})
	f.Add([]byte("<&>\"'"), []byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, splits, counts []byte) {
		var regions []store.Region
		var prev []byte
		parts := bytes.Split(splits, []byte{0})
		if len(parts) > 64 {
			parts = parts[:64]
		}
		for i, k := range append(parts, nil) {
			var c1, c2 int64
			if len(counts) >= 8*(i+1) {
				c1 = int64(binary.BigEndian.Uint32(counts[8*i:]))
				c2 = int64(binary.BigEndian.Uint32(counts[8*i+4:]))
			}
			regions = append(regions, store.Region{Start: prev, End: k, ReadRequests: c1, WriteRequests: c2})
			prev = k
		}
		res := FromStore("s", "t<&>", []string{"k"}, regions)
		if res.Summary.Requests.Typical.BusiestShare > 1+1e-9 {
			t.Fatalf("share %v", res.Summary.Requests.Typical.BusiestShare)
		}
		var buf bytes.Buffer
		if err := WritePNG(&buf, res); err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(&buf); err != nil {
			t.Fatal(err)
		}
		var page strings.Builder
		if err := WriteHTML(&page, res); err != nil {
			t.Fatal(err)
		}
		wellFormed(t, page.String())
		if err := WriteText(&strings.Builder{}, res); err != nil {
			t.Fatal(err)
		}
	})
}
