package hotspot

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/denorm/denorm/schema"
)

// examplePath is a file of the repository's examples folder.
func examplePath(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "examples", name)
}

func example(t testing.TB, name string) *schema.Plan {
	t.Helper()
	p, err := schema.Load(examplePath(name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// exampleEdited loads an example after replacing one line of it.
func exampleEdited(t testing.TB, name, old, repl string) *schema.Plan {
	t.Helper()
	data, err := os.ReadFile(examplePath(name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s has no %q", name, old)
	}
	p, err := schema.Parse(name, bytes.Replace(data, []byte(old), []byte(repl), 1))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func simulate(t testing.TB, p *schema.Plan, o Options) *Result {
	t.Helper()
	res, err := Simulate(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// busiestWriter is the region taking the most writes at step s.
func busiestWriter(res *Result, s int) *Region {
	var best *Region
	for _, r := range res.Regions {
		if r.Alive(s) && (best == nil || r.Writes[s-r.Born] > best.Writes[s-best.Born]) {
			best = r
		}
	}
	return best
}

// A row key led by epoch millis sends every write of a moment to the one
// region holding the newest keys; as that region splits, the new top half
// takes over, so the hot spot moves without going away.
func TestTimeLedKeyIsOneHotRegion(t *testing.T) {
	res := simulate(t, example(t, "device_events_naive.yaml"), Options{Seed: 7, Duration: 6 * time.Hour})
	if res.Summary.StartRegions != 1 {
		t.Fatalf("the naive table is not pre-split, yet it starts with %d regions", res.Summary.StartRegions)
	}
	if res.Summary.Splits < 3 {
		t.Fatalf("%d splits in 6h of 20k writes/s: the hot region should split several times", res.Summary.Splits)
	}
	moved := map[int]bool{}
	for s, st := range res.Steps {
		if st.WriteFigures.BusiestShare < 0.99 || st.WriteFigures.HalfLoadRegions != 1 {
			t.Fatalf("step %d: busiest region takes %.3f of the writes (%d regions take half), want essentially all on one",
				s, st.WriteFigures.BusiestShare, st.WriteFigures.HalfLoadRegions)
		}
		// All on one region of r: max over mean is r itself.
		if st.WriteFigures.MaxOverMean < 0.99*float64(st.Regions) {
			t.Fatalf("step %d: max over mean %.2f with %d regions", s, st.WriteFigures.MaxOverMean, st.Regions)
		}
		hot := busiestWriter(res, s)
		// The hot region is the last one in key order: time only grows.
		if len(hot.End) != 0 {
			t.Fatalf("step %d: the busiest region [%s, %s) is not the table's last", s, hot.StartKey, hot.EndKey)
		}
		moved[hot.ID] = true
	}
	if len(moved) < res.Summary.Splits/2 || len(moved) < 3 {
		t.Fatalf("the hot spot sat on %d regions over %d splits: it should move as the region splits", len(moved), res.Summary.Splits)
	}
}

// The hashed key spreads 200,000 devices over 64 pre-split regions. The
// bound on max over mean comes from the noise the simulation itself makes:
// with n samples per step over r regions a region's count varies by
// sqrt((r-1)/n) of the mean, and the hash shares out c devices with a
// spread of sqrt((r-1)/c); the largest of r such draws sits about
// sqrt(2 ln r) spreads above the mean, and 1.5 spreads more leave room for
// the maximum's own variation.
func TestHashedKeySpreadsEvenly(t *testing.T) {
	const samples = 20000
	p := example(t, "device_events.yaml")
	res := simulate(t, p, Options{Seed: 11, Duration: 6 * time.Hour, SamplesPerStep: samples})
	r := float64(res.Summary.StartRegions)
	if r != 64 || res.Summary.Splits != 0 {
		t.Fatalf("want 64 pre-split regions and no split in 6h, got %v and %d splits", r, res.Summary.Splits)
	}
	devices := float64(p.Workload.Distribution("reading", "deviceId").Cardinality)
	spread := math.Sqrt((r-1)/samples + (r-1)/devices)
	bound := 1 + (math.Sqrt(2*math.Log(r))+1.5)*spread
	if bound >= 1.3 {
		t.Fatalf("the noise bound %.3f is too loose to tell anything", bound)
	}
	for s, st := range res.Steps {
		if st.WriteFigures.MaxOverMean >= bound {
			t.Errorf("step %d: max over mean %.3f, want below %.3f", s, st.WriteFigures.MaxOverMean, bound)
		}
	}
	if got := res.Summary.Writes.Typical.HalfLoadRegions; got < 28 {
		t.Errorf("%d regions take half the writes, want close to 32", got)
	}
	t.Logf("typical max over mean %.3f, bound %.3f, noise estimate %.3f", res.Summary.Writes.Typical.MaxOverMean, bound, noiseMaxOverMean(samples, 64))
}

// An index led by a status with four values puts each status's newest
// rows in one region, so a few regions take the writes however many there
// are; a salt bucket in front spreads them over one region per bucket.
func TestLowCardinalityPrefixNeedsSalt(t *testing.T) {
	const salted = "rowkey: [salt(orderId, 8), status, reverse(placedAt), orderId]"
	opts := Options{Seed: 3, Duration: 12 * time.Hour, Table: "orders_by_status"}
	plain := simulate(t, exampleEdited(t, "orders.yaml", salted, "rowkey: [status, reverse(placedAt), orderId]"), opts)
	salt := simulate(t, example(t, "orders.yaml"), opts)
	if plain.Summary.StartRegions < 8 || salt.Summary.StartRegions != 8 {
		t.Fatalf("regions at start: %d unsalted, %d salted; want at least 8 and 8", plain.Summary.StartRegions, salt.Summary.StartRegions)
	}
	pw, sw := plain.Summary.Writes.Typical, salt.Summary.Writes.Typical
	// SHIPPED is 80% of the orders: its newest rows are one region.
	if pw.BusiestShare < 0.6 || pw.HalfLoadRegions != 1 {
		t.Errorf("unsalted status index: busiest share %.2f, %d regions take half; want one region with most writes", pw.BusiestShare, pw.HalfLoadRegions)
	}
	// Salted: 8 buckets, each 1/8 of the writes, up to sampling noise.
	n := float64(salt.SamplesPerStep)
	bound := (1 + (math.Sqrt(2*math.Log(8))+1.5)*math.Sqrt(7/n)) / 8
	if sw.BusiestShare > bound || sw.HalfLoadRegions < 4 {
		t.Errorf("salted status index: busiest share %.3f (want below %.3f), %d regions take half (want 4)", sw.BusiestShare, bound, sw.HalfLoadRegions)
	}
}

func TestDeterministic(t *testing.T) {
	p := example(t, "orders.yaml")
	o := Options{Seed: 5, Duration: 2 * time.Hour, SamplesPerStep: 500}
	enc := func(res *Result) string {
		var b bytes.Buffer
		if err := WriteJSON(&b, res); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b := enc(simulate(t, p, o)), enc(simulate(t, p, o))
	if a != b {
		t.Fatal("two runs with the same seed differ")
	}
	o.Seed = 6
	if c := enc(simulate(t, p, o)); c == a {
		t.Fatal("another seed gives the very same run")
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(a), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "table", "rowkey", "regions", "steps", "summary", "writes_per_second", "split_size"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON has no %q", k)
		}
	}
}

func TestOptionsRefused(t *testing.T) {
	p := example(t, "orders.yaml")
	for _, o := range []Options{
		{Step: time.Hour, Duration: time.Minute},
		{Step: time.Microsecond},
		{Duration: -time.Hour},
		{Regions: -1},
		{Table: "nope"},
	} {
		if _, err := Simulate(context.Background(), p, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Simulate(ctx, p, Options{}); err == nil {
		t.Error("a cancelled context did not stop the simulation")
	}
}

func TestTextSummary(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, simulate(t, example(t, "device_events_naive.yaml"), Options{Duration: time.Hour, Step: 10 * time.Minute})); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HOT SPOT", "max over mean", "regions taking half", "busiest regions"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text has no %q:\n%s", want, b.String())
		}
	}
}

func BenchmarkSimulateDay(b *testing.B) {
	p := example(b, "device_events.yaml")
	for b.Loop() {
		if _, err := Simulate(context.Background(), p, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
