package doctor

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"
)

// With the regions' key ranges given (denorm doctor --store), every
// finding about a region names its rows, in text and in JSON; without them
// the key stays present and empty.
func TestFindingKeyRange(t *testing.T) {
	before := regionsSnap("rs1", "hot", []float64{0, 0, 0, 0}, nil)
	after := regionsSnap("rs1", "hot", []float64{0, 0, 0, 5000}, nil)
	order := map[string][]string{}
	ranges := map[string]string{}
	for _, r := range after.Regions {
		order[r.Table] = append(order[r.Table], r.Encoded)
	}
	sort.Strings(order["hot"])
	for i, id := range order["hot"] {
		ranges[id] = "[k" + string(rune('0'+i)) + ", k" + string(rune('1'+i)) + ")"
	}
	in := Input{Samples: []Sample{{Before: before, After: after, Interval: 10 * time.Second}}, RegionOrder: order, RegionRanges: ranges}
	rep := Diagnose(in, Options{})
	n := 0
	for _, f := range rep.Findings {
		if f.Region == "" {
			continue
		}
		n++
		if f.KeyRange != ranges[f.Region] || f.KeyRange == "" {
			t.Errorf("%s on region %s: key range %q, want %q", f.Rule, f.Region, f.KeyRange, ranges[f.Region])
		}
	}
	if n == 0 {
		t.Fatalf("no region finding: %v", rep.Findings)
	}
	last := order["hot"][len(order["hot"])-1]
	var text bytes.Buffer
	if err := Write(&text, rep, "text"); err != nil {
		t.Fatal(err)
	}
	if want := "region " + last + " holds rows " + ranges[last]; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}

	in.RegionRanges = nil
	var js bytes.Buffer
	if err := Write(&js, Diagnose(in, Options{}), "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range doc.Findings {
		if v, ok := f["key_range"]; !ok || v != "" {
			t.Errorf("without ranges, key_range is %v (present %v), want \"\"", v, ok)
		}
	}
}
