package review

import (
	"os"
	"strings"
	"testing"

	"github.com/denorm/denorm/schema"
)

func loadExample(t *testing.T, name string) *schema.Plan {
	t.Helper()
	path := "../examples/" + name
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not written yet: %v", path, err)
	}
	p, err := schema.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return p
}

func TestGoodExamplesHaveNoErrors(t *testing.T) {
	for _, name := range []string{"orders.yaml", "device_events.yaml"} {
		t.Run(name, func(t *testing.T) {
			rep := Review(loadExample(t, name))
			for _, f := range rep.Findings {
				t.Logf("%s", f)
			}
			if rep.HasErrors() {
				t.Errorf("%s: want no error findings", name)
			}
		})
	}
}

// At the orders example's workload (2,000 events/s, about 3 items an
// order, SKUs zipf 0.9 over 100,000, 4 buckets), a copy of the example
// whose daily_units keeps contributions (mode exact) has a busiest row of
// over a million contribution cells a day: review says so as
// row-unbounded, an error. The example itself counts in mode bounded: its
// rows stay at one part cell per stream, and review says nothing of them.
func TestExactCounterRowAtWorkload(t *testing.T) {
	bp := loadExample(t, "orders.yaml")
	cr, ok := EstimateCounterRow(bp, bp.Table("daily_units"))
	if !ok || !cr.Bounded || cr.Cells != 1 || cr.Bytes > 200 {
		t.Fatalf("bounded daily_units row: %+v, want 1 cell of fixed size", cr)
	}
	for _, f := range Review(bp).Findings {
		if f.Table == "daily_units" && (f.Rule == "row-unbounded" || f.Severity == SeverityError) {
			t.Errorf("the example's bounded counter: %s", f)
		}
	}
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(b), "mode: bounded", "mode: exact", 1)
	if src == string(b) {
		t.Fatal("orders.yaml has no daily_units mode: bounded")
	}
	p, err := schema.Parse("orders_exact.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cr, ok = EstimateCounterRow(p, p.Table("daily_units"))
	if !ok || cr.Bounded || cr.Window != "day" || cr.Cells < 1e6 || cr.Cells > 1e7 || cr.Bytes < 50<<20 {
		t.Fatalf("exact daily_units busiest row: %+v, want between a million and ten million cells a day", cr)
	}
	found := false
	for _, f := range Review(p).Findings {
		if f.Rule == "row-unbounded" && f.Table == "daily_units" {
			found = f.Severity == SeverityError && strings.Contains(f.Message, "million cells")
		}
	}
	if !found {
		t.Fatal("review does not flag daily_units in mode exact as an unbounded row at the example's workload")
	}
}
