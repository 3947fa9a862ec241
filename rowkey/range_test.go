package rowkey

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

func inRanges(key []byte, rs []Range) int {
	n := 0
	for _, r := range rs {
		if bytes.Compare(key, r.Start) >= 0 && (r.Stop == nil || bytes.Compare(key, r.Stop) < 0) {
			n++
		}
	}
	return n
}

// A key falls in RangeBounds' ranges exactly when its prefix matches and its
// ranged value lies in [lo, hi) (whole days for day parts).
func TestPropertyRangeBounds(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	devices := []string{"d1", "d10", "d2"}
	cases := []struct {
		spec    *Spec
		fixed   string // field fixed in vals
		rng     string // ranged field
		inRange func(v, lo, hi int64) bool
	}{
		{mustSpec(t, "hash(deviceId, 2)", "deviceId", "reverse(ts)"), "deviceId", "ts",
			func(v, lo, hi int64) bool { return v >= lo && v < hi }},
		{mustSpec(t, "salt(deviceId, 4)", "ts", "deviceId"), "", "ts",
			func(v, lo, hi int64) bool { return v >= lo && v < hi }},
		{mustSpec(t, "day(ts)", "deviceId"), "", "ts",
			func(v, lo, hi int64) bool { d := DayNumber(v); return d >= DayNumber(lo) && d <= DayNumber(hi-1) }},
	}
	for _, c := range cases {
		for i := 0; i < 3000; i++ {
			lo := int64(r.Intn(10)) * msPerDay / 3
			hi := lo + 1 + int64(r.Intn(10))*msPerDay/3
			vals := Values{}
			dev := devices[r.Intn(len(devices))]
			if c.fixed != "" {
				vals[c.fixed] = dev
			}
			rs, err := c.spec.RangeBounds(vals, c.rng, lo, hi)
			if err != nil {
				t.Fatalf("%s: %v", c.spec, err)
			}
			probeDev, probeTS := devices[r.Intn(len(devices))], int64(r.Intn(12))*msPerDay/3+int64(r.Intn(3))-1
			if probeTS < 0 {
				probeTS = 0
			}
			key, err := c.spec.Encode(Values{"deviceId": probeDev, "ts": probeTS})
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if (c.fixed == "" || probeDev == dev) && c.inRange(probeTS, lo, hi) {
				want = 1
			}
			if got := inRanges(key, rs); got != want {
				t.Fatalf("%s: key (%s, %d) in %d ranges for %v ts in [%d, %d), want %d", c.spec, probeDev, probeTS, got, vals, lo, hi, want)
			}
		}
	}
}

func TestRangeBoundsRefuses(t *testing.T) {
	s := mustSpec(t, "hash(deviceId, 2)", "deviceId", "reverse(ts)")
	if _, err := s.RangeBounds(Values{}, "deviceId", "a", "b"); err == nil {
		t.Error("a range over a part behind an unbound hash should fail")
	}
	if _, err := s.RangeBounds(Values{"deviceId": "d"}, "deviceId", "a", "b"); err == nil {
		t.Error("a field both fixed and ranged should fail")
	}
	open, err := s.RangeBounds(Values{"deviceId": "d"}, "ts", nil, nil)
	whole, _ := s.PrefixBounds(Values{"deviceId": "d"})
	if err != nil || len(open) != 1 || !bytes.Equal(open[0].Start, whole[0].Start) || !bytes.Equal(open[0].Stop, whole[0].Stop) {
		t.Errorf("an open range should equal the prefix: %v vs %v (%v)", open, whole, err)
	}
}

// With a hash prefix and 64 pre-split regions, devices spread evenly: every
// region gets within 25% of its fair share of 200,000 devices. Same for a
// salt with one region per bucket.
func TestSplitKeysSpreadLoad(t *testing.T) {
	cases := []struct {
		spec    *Spec
		regions int
	}{
		{mustSpec(t, "hash(deviceId, 2)", "deviceId", "reverse(ts)"), 64},
		{mustSpec(t, "salt(deviceId, 8)", "ts", "deviceId"), 8},
	}
	for _, c := range cases {
		splits, err := c.spec.SplitKeys(c.regions)
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int, len(splits)+1)
		const devices = 200000
		for i := 0; i < devices; i++ {
			key, err := c.spec.Encode(Values{"deviceId": fmt.Sprintf("dev-%06d", i), "ts": int64(1764460800000)})
			if err != nil {
				t.Fatal(err)
			}
			region := sort.Search(len(splits), func(j int) bool { return bytes.Compare(splits[j], key) > 0 })
			counts[region]++
		}
		fair := float64(devices) / float64(len(counts))
		for r, n := range counts {
			if float64(n) < 0.75*fair || float64(n) > 1.25*fair {
				t.Errorf("%s: region %d holds %d devices, fair share %.0f", c.spec, r, n, fair)
			}
		}
	}
}

func TestFormat(t *testing.T) {
	s := mustSpec(t, "salt(orderId, 8)", "status", "reverse(placedAt)", "orderId")
	key, err := s.Encode(Values{"orderId": "o|1", "status": "OPEN", "placedAt": int64(1764460800000)})
	if err != nil {
		t.Fatal(err)
	}
	bucket := SaltBucket(appendEscapedForTest("o|1"), 8)
	want := fmt.Sprintf("#%d|OPEN|2025-11-30T00:00:00Z|\"o|1\"", bucket)
	if got := s.Format(key); got != want {
		t.Errorf("Format = %s, want %s", got, want)
	}
	if got := s.Format([]byte("junk")); got != `?"junk"` {
		t.Errorf("Format(junk) = %s", got)
	}
	d := mustSpec(t, "day(placedAt)", "items.sku")
	k2, _ := d.Encode(Values{"placedAt": int64(1764460800000), "items.sku": "s1"})
	if got := d.Format(k2); got != "2025-11-30|s1" {
		t.Errorf("day Format = %s", got)
	}
}

func appendEscapedForTest(s string) []byte { return appendEscaped(nil, []byte(s)) }
