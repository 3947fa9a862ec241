package hotspot

import (
	"bytes"
	"testing"
	"time"

	"github.com/denorm/denorm/ddl"
)

// tiles checks that regions cover the whole key space once, in order.
func tiles(t *testing.T, what string, rs []*Region) {
	t.Helper()
	if len(rs) == 0 || len(rs[0].Start) != 0 || len(rs[len(rs)-1].End) != 0 {
		t.Fatalf("%s: regions do not start and end with the table", what)
	}
	for i := 1; i < len(rs); i++ {
		if !bytes.Equal(rs[i-1].End, rs[i].Start) || bytes.Compare(rs[i].Start, rs[i-1].Start) <= 0 {
			t.Fatalf("%s: region %d ends at %q but the next starts at %q", what, rs[i-1].ID, rs[i-1].EndKey, rs[i].StartKey)
		}
	}
}

func aliveAt(res *Result, s int) []*Region {
	var out []*Region
	for _, r := range res.Regions {
		if r.Alive(s) {
			out = append(out, r)
		}
	}
	// Regions are created in key order within a split, but not overall.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && bytes.Compare(out[j].Start, out[j-1].Start) < 0; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// At every step the alive regions tile the key space, every split's two
// halves tile their parent, and sizes are conserved across a split.
func TestRegionsTileTheKeySpace(t *testing.T) {
	for _, name := range []string{"device_events_naive.yaml", "device_events.yaml"} {
		res := simulate(t, example(t, name), Options{Seed: 9, Duration: 24 * time.Hour, Step: time.Hour, SamplesPerStep: 1000})
		for s := range res.Steps {
			tiles(t, name, aliveAt(res, s))
		}
		kids := map[int][]*Region{}
		for _, r := range res.Regions {
			if r.Parent >= 0 {
				kids[r.Parent] = append(kids[r.Parent], r)
			}
		}
		for id, ks := range kids {
			p := res.Regions[id]
			if len(ks) != 2 || p.Died < 0 || ks[0].Born != p.Died+1 {
				t.Fatalf("%s: region %d split into %d regions", name, id, len(ks))
			}
			a, b := ks[0], ks[1]
			if !bytes.Equal(a.Start, p.Start) || !bytes.Equal(a.End, b.Start) || !bytes.Equal(b.End, p.End) {
				t.Fatalf("%s: halves of region %d do not tile it", name, id)
			}
		}
		if res.Summary.Splits == 0 {
			t.Errorf("%s: no split in a day", name)
		}
	}
}

// Pre-split regions are ddl's split keys, and --regions overrides the count.
func TestPresplitMatchesDDL(t *testing.T) {
	p := example(t, "device_events.yaml")
	tb := p.Table("device_events")
	want, _, err := ddl.SplitKeys(tb)
	if err != nil {
		t.Fatal(err)
	}
	res := simulate(t, p, Options{Duration: time.Hour, SamplesPerStep: 100})
	got := aliveAt(res, 0)
	if len(got) != len(want)+1 {
		t.Fatalf("%d regions, ddl splits into %d", len(got), len(want)+1)
	}
	for i, k := range want {
		if !bytes.Equal(got[i+1].Start, k) {
			t.Fatalf("region %d starts at %x, ddl splits at %x", i+1, got[i+1].Start, k)
		}
	}
	for _, c := range []struct {
		file, table string
		regions     int
		want        int
	}{
		{"device_events.yaml", "device_events", 16, 16},
		{"orders.yaml", "orders_by_status", 4, 4},
		{"orders.yaml", "orders_by_status", 64, 8}, // a salt of 8 has 8 buckets to split at
		{"orders.yaml", "orders", 5, 5},            // sampled quantiles
		{"device_events_naive.yaml", "device_events", 0, 1},
	} {
		res := simulate(t, example(t, c.file), Options{Table: c.table, Regions: c.regions, Duration: time.Hour, SamplesPerStep: 100})
		if res.Summary.StartRegions != c.want {
			t.Errorf("%s %s --regions %d: %d regions, want %d", c.file, c.table, c.regions, res.Summary.StartRegions, c.want)
		}
	}
}
