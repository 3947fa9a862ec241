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
