package doctor

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// regionsSnap builds a snapshot of one table's regions with the given write
// counts.
func regionsSnap(server, table string, writes []float64, extra map[string]float64) *Snapshot {
	s := newSnapshot(server)
	s.Server = server
	for i, w := range writes {
		r := &Region{Namespace: "default", Table: table, Encoded: fmt.Sprintf("%s%02d", strings.Repeat("a", 30), i),
			Metrics: map[string]float64{"writeRequestCount": w, "readRequestCount": 0, "storeCount": 1, "storeFileCount": 1}, Stores: map[string]map[string]float64{}}
		for k, v := range extra {
			r.Metrics[k] = v
		}
		s.Regions[table+r.Encoded] = r
	}
	return s
}

func TestRegionHotFlagsSkewNotSpread(t *testing.T) {
	before := regionsSnap("rs1", "hot", []float64{0, 0, 0, 0}, nil)
	after := regionsSnap("rs1", "hot", []float64{0, 0, 0, 5000}, nil)
	b2 := regionsSnap("rs1", "spread", []float64{100, 100, 100, 100}, nil)
	a2 := regionsSnap("rs1", "spread", []float64{1350, 1200, 1300, 1250}, nil)
	before.merge(b2)
	after.merge(a2)
	order := map[string][]string{}
	for _, r := range after.Regions {
		order[r.Table] = append(order[r.Table], r.Encoded)
	}
	for _, t := range []string{"hot", "spread"} {
		sort.Strings(order[t])
	}
	rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: 10 * time.Second}}, RegionOrder: order}, Options{})
	if !rep.Has("key-monotonic", "hot") || rep.Has("key-monotonic", "spread") {
		t.Errorf("key-monotonic: %v", rep.Findings)
	}
	// The hot region first by start key is not the monotonic signature.
	slices.Reverse(order["hot"])
	if rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: 10 * time.Second}}, RegionOrder: order}, Options{}); rep.Has("key-monotonic", "") {
		t.Errorf("key-monotonic on the first region: %v", rep.Findings)
	}
	if !rep.Has("region-hot", "hot") {
		t.Errorf("hot table not flagged: %v", rep.Findings)
	}
	if rep.Has("region-hot", "spread") {
		t.Errorf("spread table flagged: %v", rep.Findings)
	}
	if !rep.HasErrors() {
		t.Error("region-hot should be an error")
	}
}

// Randomized: spread loads (each region within a factor of 3 of the others)
// are never hot; one region with everything always is, whatever the seed.
func TestRegionHotRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 2 + rng.IntN(30)
		spread := make([]float64, n)
		skew := make([]float64, n)
		for i := range spread {
			spread[i] = 1000 + float64(rng.IntN(2000))
		}
		skew[rng.IntN(n)] = 100 + float64(rng.IntN(100000))
		zero := make([]float64, n)
		for _, c := range []struct {
			w   []float64
			hot bool
		}{{spread, false}, {skew, true}} {
			rep := Diagnose(Input{Samples: []Sample{{Before: regionsSnap("rs", "t", zero, nil), After: regionsSnap("rs", "t", c.w, nil), Interval: time.Second}}}, Options{})
			if rep.Has("region-hot", "t") != c.hot {
				t.Fatalf("seed %d n %d loads %v: hot=%v, want %v", seed, n, c.w, !c.hot, c.hot)
			}
		}
	}
}

func TestCounterResetIsNotNegative(t *testing.T) {
	// The hot region reopened during the interval: its counter fell to 900.
	before := regionsSnap("rs1", "t", []float64{10, 10, 10, 100000}, nil)
	after := regionsSnap("rs1", "t", []float64{12, 12, 12, 900}, nil)
	rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: time.Second}}}, Options{})
	if !rep.Has("region-hot", "t") {
		t.Errorf("the reset counter's 900 writes should count: %v", rep.Findings)
	}
	if delta(100, 40) != 40 || delta(40, 100) != 60 {
		t.Error("delta")
	}
}

func TestStoreAndServerSignals(t *testing.T) {
	after := regionsSnap("rs1", "wide", []float64{1, 1}, map[string]float64{
		"storeCount": 5, "storeFileCount": 70, "storeFileSize": 12 << 30,
		"filteredReadRequestCount": 5000, "readRequestCount": 10})
	after.ServerMetrics = map[string]float64{"mutationsWithoutWALCount": 3, "updatesBlockedTime": 1200, "regionCount": 2}
	after.IPC = map[string]float64{"exceptions.callQueueTooBig": 2, "exceptions.UnknownScannerException": 1}
	rep := Diagnose(Input{Samples: []Sample{{After: after}}}, Options{})
	for _, rule := range []string{"family-count", "store-files-blocking", "region-size", "reads-filtered",
		"wal-skipped", "memstore-blocking", "call-queue-full", "scanner-lease-expired"} {
		if !rep.Has(rule, "") {
			t.Errorf("%s not found in %v", rule, rep.Findings)
		}
	}
	n := 0
	for _, f := range rep.Findings {
		if f.Rule == "family-count" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("family-count fired %d times, want once per table", n)
	}
	// The same counters unchanged over an interval are not findings.
	rep = Diagnose(Input{Samples: []Sample{{Before: after, After: after, Interval: time.Second}}}, Options{})
	for _, rule := range []string{"wal-skipped", "memstore-blocking", "call-queue-full", "scanner-lease-expired", "reads-filtered"} {
		if rep.Has(rule, "") {
			t.Errorf("%s fired on unchanged counters", rule)
		}
	}
}

func TestRealJMXQuiet(t *testing.T) {
	s := readJMX(t, "jmx_Regions.json", "jmx_Server.json", "jmx_IPC.json", "jmx_Tables.json")
	rep := Diagnose(Input{Samples: []Sample{{Before: s, After: s, Interval: time.Second}}}, Options{})
	if len(rep.Findings) != 0 {
		t.Errorf("an idle server over an interval gave %v", rep.Findings)
	}
	// Once, as a saved file: the test server did see expired scanners.
	rep = Diagnose(Input{Samples: []Sample{{After: s}}}, Options{})
	if !rep.Has("scanner-lease-expired", "") || rep.HasErrors() {
		t.Errorf("saved file findings: %v", rep.Findings)
	}
}

func TestLogAndSlowFindings(t *testing.T) {
	lf, _ := os.Open("testdata/client.log")
	defer lf.Close()
	evs, err := ParseClientLog(lf)
	if err != nil {
		t.Fatal(err)
	}
	sf, _ := os.Open("testdata/responsetooslow.log")
	defer sf.Close()
	calls, err := ParseSlowLog(sf)
	if err != nil {
		t.Fatal(err)
	}
	rep := Diagnose(Input{Logs: evs, LogSource: "client.log", Slow: calls, SlowSource: "slow.log"}, Options{})
	for _, rule := range []string{"row-unbounded", "scanner-lease-expired", "retries-exhausted", "memstore-blocking",
		"call-queue-full", "cell-huge", "store-files-blocking", "scan-unbounded"} {
		if !rep.Has(rule, "") {
			t.Errorf("%s missing from %v", rule, rep.Findings)
		}
	}
	for _, f := range rep.Findings {
		if f.Fix == "" || len(f.Evidence) == 0 {
			t.Errorf("finding without fix or evidence: %+v", f)
		}
	}
	var many []SlowCall
	for i := 0; i < 12; i++ {
		many = append(many, SlowCall{Method: "Mutate", Table: "orders", Line: i + 1})
	}
	if rep := Diagnose(Input{Slow: many}, Options{}); !rep.Has("puts-unbatched", "orders") {
		t.Errorf("unbatched: %v", rep.Findings)
	}
}

func TestEveryRuleIDKnown(t *testing.T) {
	for _, sig := range logSignatures {
		if _, title, fix := ruleFor(sig.rule); fix == "" || title == sig.rule {
			t.Errorf("rule %s has no catalogue entry", sig.rule)
		}
	}
	ids := []string{"region-hot", "store-files-blocking", "memstore-blocking", "call-queue-full",
		"scanner-lease-expired", "retries-exhausted", "reads-filtered", "family-count", "region-size",
		"wal-skipped", "scan-unbounded", "puts-unbatched", "row-unbounded", "cell-huge"}
	for _, id := range ids {
		if _, _, fix := ruleFor(id); fix == "" {
			t.Errorf("rule %s unknown", id)
		}
	}
}

// The Regions bean captured by TestLiveHotRegion right after it wrote 2000
// rows to each of two fresh four-region tables: increasing keys into one,
// hashed keys into the other. Fresh regions' counters are the workload's.
func TestCapturedLiveHotRegion(t *testing.T) {
	after := readJMX(t, "live_regions_after.json")
	raw, err := os.ReadFile("testdata/live_region_order.json")
	if err != nil {
		t.Fatal(err)
	}
	var order map[string][]string
	if err := json.Unmarshal(raw, &order); err != nil {
		t.Fatal(err)
	}
	var hot, spread string
	for table := range order {
		if strings.HasPrefix(table, "doctor_hot_") {
			hot = table
		} else {
			spread = table
		}
	}
	rep := Diagnose(Input{Samples: []Sample{{After: after}}, RegionOrder: order}, Options{})
	if !rep.Has("region-hot", hot) || !rep.Has("key-monotonic", hot) {
		t.Errorf("%s not flagged: %v", hot, rep.Findings)
	}
	for _, f := range rep.Findings {
		if f.Table == spread {
			t.Errorf("hashed-key table flagged: %s", f)
		}
	}
	last := order[hot][len(order[hot])-1]
	if got := after.Regions[last].Metrics["writeRequestCount"]; got != 2000 {
		t.Errorf("last region of %s: writeRequestCount %v, want 2000", hot, got)
	}
}

// Beans captured by TestLiveWideTableSkipWAL around 200 SKIP_WAL writes to
// a fresh table with three families.
func TestCapturedWideTableSkipWAL(t *testing.T) {
	before := readJMX(t, "live_server_before.json")
	after := readJMX(t, "live_wide_regions.json", "live_server_after.json")
	if !strings.Contains(after.Server, ",16020,") {
		t.Errorf("server = %q, want the Server bean's serverName", after.Server)
	}
	rep := Diagnose(Input{Samples: []Sample{{Before: before, After: after, Interval: 6 * time.Second}}}, Options{})
	var wide string
	for _, r := range after.Regions {
		if strings.HasPrefix(r.Table, "doctor_wide_") {
			wide = r.Table
		}
	}
	if wide == "" || !rep.Has("family-count", wide) {
		t.Errorf("family-count for %q missing: %v", wide, rep.Findings)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Rule == "wal-skipped" && strings.Contains(f.Message, "200 mutations") {
			found = true
		}
	}
	if !found {
		t.Errorf("wal-skipped for 200 mutations missing: %v", rep.Findings)
	}
}
