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
				if f.Severity != SeverityError {
					continue
				}
				// orders.yaml's daily_units keeps contributions (mode
				// exact): at the example's own workload its busiest row
				// takes over a million cells a day. That one error is
				// expected (TestExactCounterRowAtWorkload); no other.
				if name == "orders.yaml" && f.Rule == "row-unbounded" && f.Table == "daily_units" {
					continue
				}
				t.Errorf("%s: unexpected error finding %s", name, f)
			}
		})
	}
}

// At the orders example's workload (2,000 events/s, about 3 items an
// order, SKUs zipf 0.9 over 100,000, 4 buckets), daily_units in mode exact
// has a busiest row of over a million contribution cells a day: review
// says so as row-unbounded, an error. The same schema in mode bounded keeps
// the row at its state cell and one total, and review says nothing of it.
func TestExactCounterRowAtWorkload(t *testing.T) {
	p := loadExample(t, "orders.yaml")
	cr, ok := EstimateCounterRow(p, p.Table("daily_units"))
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
		t.Fatal("review does not flag daily_units (mode exact) as an unbounded row at the example's workload")
	}
	b, err := os.ReadFile("../examples/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bp, err := schema.Parse("orders_bounded.yaml", []byte(strings.Replace(string(b), "mode: exact", "mode: bounded", 1)))
	if err != nil {
		t.Fatal(err)
	}
	cr, ok = EstimateCounterRow(bp, bp.Table("daily_units"))
	if !ok || !cr.Bounded || cr.Cells != 2 || cr.Bytes > 200 {
		t.Fatalf("bounded daily_units row: %+v, want 2 cells of fixed size", cr)
	}
	rep := Review(bp)
	for _, f := range rep.Findings {
		if f.Table == "daily_units" && (f.Rule == "row-unbounded" || f.Severity == SeverityError) {
			t.Errorf("bounded copy: %s", f)
		}
	}
	if rep.HasErrors() {
		t.Errorf("the bounded copy of orders.yaml has error findings")
	}
}

// The naive examples mark each mistake with the rule it should trip; the
// review must find every one of them (it may find more).
func TestNaiveExamplesFindings(t *testing.T) {
	want := map[string][]string{
		"orders_naive.yaml": {
			"cell-huge", "row-unbounded", "copy-intent-missing", "key-read-mismatch", "scan-unbounded",
			"family-count", "names-long", "versions-as-history", "ttl-with-version-timestamps",
			"index-hot-prefix", "counter-hot-row", "counter-not-idempotent", "key-monotonic",
			"connection-per-request", "puts-unbatched", "client-no-timeouts", "major-compaction-periodic",
			"presplit-missing", "wal-skipped", "region-size",
		},
		"device_events_naive.yaml": {
			"key-monotonic", "key-read-mismatch", "family-count", "connection-per-request", "puts-unbatched",
			"client-no-timeouts", "presplit-missing", "major-compaction-periodic",
		},
	}
	for name, rules := range want {
		t.Run(name, func(t *testing.T) {
			rep := Review(loadExample(t, name))
			for _, id := range rules {
				if !rep.Has(id) {
					t.Errorf("%s: want a %s finding", name, id)
				}
			}
			if !rep.HasErrors() {
				t.Errorf("%s: want error findings (exit status 1)", name)
			}
			for _, f := range rep.Findings {
				t.Logf("%s", f)
			}
		})
	}
}

// Findings point at the line that causes them: spot-check a few against
// the text of the file.
func TestNaiveFindingLines(t *testing.T) {
	p := loadExample(t, "orders_naive.yaml")
	src, err := os.ReadFile("../examples/orders_naive.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	expect := map[string]string{
		"connection-per-request":      "connection:",
		"ttl-with-version-timestamps": "ttl:",
		"versions-as-history":         "versions:",
		"cell-huge":                   "invoice_pdf_document",
		"region-size":                 "region_max_filesize",
	}
	rep := Review(p)
	for rule, text := range expect {
		for _, f := range rep.Findings {
			if f.Rule != rule {
				continue
			}
			if f.Line < 1 || f.Line > len(lines) || !strings.Contains(lines[f.Line-1], text) {
				t.Errorf("%s points at line %d, which does not mention %q", rule, f.Line, text)
			}
		}
	}
}
